#!/usr/bin/env python3
"""geoknn beside related tools, on the same points (run on the GPU machine).

Draws uniform points on the sphere with NumPy, writes them as CSV, and answers
the nearest-reference query with:
  * scikit-learn BallTree(metric="haversine"): one core, and 16 processes
  * PyTorch on the GPU: float32 unit vectors, nearest by largest dot product
    (a matrix product per chunk, then argmax): what a user would write first
  * geoknn (`knn run`, grid and brute force, GPU), read back from --out .npz
and checks every answer against a float64 NumPy brute force on a sample.

Usage: python3 bench/related/related.py KNN_BINARY OUTDIR [n_obs_log2 n_ref_log2]
"""
import os
import subprocess
import sys
import time

import numpy as np

R = 6371008.8


def sphere(n, rng):
    z = rng.uniform(-1.0, 1.0, n)
    lon = rng.uniform(-np.pi, np.pi, n)
    return np.arcsin(z), lon


def unit(lat, lon):
    c = np.cos(lat)
    return np.stack([c * np.cos(lon), c * np.sin(lon), np.sin(lat)], axis=1)


def haversine(lat1, lon1, lat2, lon2):
    a = np.sin((lat2 - lat1) / 2) ** 2 + np.cos(lat1) * np.cos(lat2) * np.sin((lon2 - lon1) / 2) ** 2
    return 2 * R * np.arcsin(np.sqrt(np.minimum(a, 1.0)))


def check(name, idx, olat, olon, rlat, rlon, truth_idx, truth_d, sample):
    d = haversine(olat[sample], olon[sample], rlat[idx[sample]], rlon[idx[sample]])
    excess = d - truth_d
    bad = int((excess > 1.0).sum())
    print(f"  {name}: {bad} of {len(sample)} sampled answers more than 1 m farther than the nearest "
          f"(max {excess.max():.3f} m); same index as float64 brute force for "
          f"{int((idx[sample] == truth_idx).sum())}")


def main():
    knn, out = sys.argv[1], sys.argv[2]
    no = int(sys.argv[3]) if len(sys.argv) > 3 else 20
    nr = int(sys.argv[4]) if len(sys.argv) > 4 else 16
    os.makedirs(out, exist_ok=True)
    rng = np.random.default_rng(7)
    olat, olon = sphere(1 << no, rng)
    rlat, rlon = sphere(1 << nr, rng)
    print(f"{1 << no} observations x {1 << nr} references, uniform on the sphere")

    # float64 truth on a sample
    sample = rng.choice(len(olat), 2048, replace=False)
    ru = unit(rlat, rlon)
    truth_idx = np.empty(len(sample), dtype=np.int64)
    truth_d = np.empty(len(sample))
    for k, i in enumerate(sample):
        d = haversine(olat[i], olon[i], rlat, rlon)
        truth_idx[k] = np.argmin(d)
        truth_d[k] = d[truth_idx[k]]

    # scikit-learn BallTree(haversine)
    from sklearn.neighbors import BallTree
    t = time.perf_counter()
    tree = BallTree(np.stack([rlat, rlon], axis=1), metric="haversine")
    build = time.perf_counter() - t
    q = 1 << 16
    X = np.stack([olat[:q], olon[:q]], axis=1)
    t = time.perf_counter()
    tree.query(X, k=1)
    one = time.perf_counter() - t
    print(f"sklearn BallTree(haversine): build {build*1e3:.1f} ms; query of {q} observations on one core "
          f"{one:.2f} s = {q/one/1e3:.1f} k obs/s")
    from joblib import Parallel, delayed
    chunks = np.array_split(np.stack([olat, olon], axis=1), 64)
    t = time.perf_counter()
    res = Parallel(n_jobs=16)(delayed(tree.query)(c, k=1) for c in chunks)
    par = time.perf_counter() - t
    sk_idx = np.concatenate([r[1][:, 0] for r in res])
    print(f"  all {len(olat)} observations on 16 processes: {par:.2f} s = {len(olat)/par/1e6:.2f} M obs/s")
    check("BallTree", sk_idx, olat, olon, rlat, rlon, truth_idx, truth_d, sample)

    # PyTorch, float32 dot products on the GPU
    import torch
    dev = torch.device("cuda")
    ou = torch.tensor(unit(olat, olon), dtype=torch.float32, device=dev)
    rt = torch.tensor(ru, dtype=torch.float32, device=dev)
    def torch_nn():
        out = torch.empty(len(olat), dtype=torch.int64, device=dev)
        step = 1 << 12  # 2^12 x 2^16 float32 products: 1 GiB a chunk
        for s in range(0, len(olat), step):
            out[s:s + step] = torch.argmax(ou[s:s + step] @ rt.T, dim=1)
        return out
    torch_nn()
    torch.cuda.synchronize()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    t_idx = torch_nn()
    end.record()
    torch.cuda.synchronize()
    ms = start.elapsed_time(end)
    print(f"PyTorch on {torch.cuda.get_device_name()}: float32 matmul + argmax, points on the GPU: {ms:.1f} ms")
    check("PyTorch fp32", t_idx.cpu().numpy(), olat, olon, rlat, rlon, truth_idx, truth_d, sample)

    # geoknn, through files
    deg = 180 / np.pi
    for name, lat, lon in (("obs", olat, olon), ("ref", rlat, rlon)):
        with open(os.path.join(out, name + ".csv"), "w") as f:
            f.write("lat,lon\n")
            np.savetxt(f, np.stack([lat * deg, lon * deg], axis=1), fmt="%.15g", delimiter=",")
    for algo in ("grid", "brute"):
        ans = os.path.join(out, f"geoknn-{algo}.npz")
        r = subprocess.run([knn, "run", "--obs", os.path.join(out, "obs.csv"), "--ref", os.path.join(out, "ref.csv"),
                            "--engine", "gpu", "--algo", algo, "--repeat", "3", "--out", ans],
                           capture_output=True, text=True, check=True)
        print(f"geoknn --algo {algo}:")
        for line in r.stderr.splitlines():
            if line.startswith("query") or line.startswith("index"):
                print("  " + line)
        g_idx = np.load(ans)["ref_index"].astype(np.int64)
        check(f"geoknn {algo}", g_idx, olat, olon, rlat, rlon, truth_idx, truth_d, sample)
        if algo == "grid":
            print(f"  differs from BallTree on {int((g_idx != sk_idx).sum())} of {len(g_idx)} observations, "
                  f"from PyTorch fp32 on {int((g_idx != t_idx.cpu().numpy()).sum())}")


if __name__ == "__main__":
    main()
