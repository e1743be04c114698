#!/usr/bin/env python3
"""geoknn's k nearest and radius queries beside scikit-learn, on the same points
(run on the GPU machine).

Draws uniform points on the sphere with NumPy, writes them as CSV, and answers
  * the 8 nearest references: scikit-learn BallTree(metric="haversine").query(k=8)
    on 16 processes, and `knn run --k 8` (GPU, grid and brute force);
  * the references within 50 km: BallTree.query_radius(count_only=True), and
    `knn run --within-m 50000`;
then compares the two answer for answer, and both with a float64 NumPy brute
force on a sample of observations.

Usage: python3 bench/related/neighbours.py KNN_BINARY OUTDIR [n_obs_log2 n_ref_log2]
"""
import os
import subprocess
import sys
import time

import numpy as np
from joblib import Parallel, delayed
from sklearn.neighbors import BallTree

from related import R, haversine, sphere  # the same points and metric as related.py

K = 8
RADIUS_M = 50e3


def knn(binary, args):
    t = time.perf_counter()
    r = subprocess.run([binary, "run", *args], capture_output=True, text=True)
    wall = time.perf_counter() - t
    if r.returncode != 0:
        sys.exit(f"knn {' '.join(args)}: exit {r.returncode}\n{r.stderr}")
    for line in r.stderr.splitlines():
        if line.startswith(("engine", "query")):
            print("  " + line)
    print(f"  whole command {wall:.2f} s (reading the CSVs and writing the answers included)")


def main():
    binary, out = sys.argv[1], sys.argv[2]
    no = int(sys.argv[3]) if len(sys.argv) > 3 else 20
    nr = int(sys.argv[4]) if len(sys.argv) > 4 else 16
    os.makedirs(out, exist_ok=True)
    rng = np.random.default_rng(11)
    olat, olon = sphere(1 << no, rng)
    rlat, rlon = sphere(1 << nr, rng)
    n = len(olat)
    print(f"{n} observations x {len(rlat)} references, uniform on the sphere; k = {K}, radius {RADIUS_M/1e3:g} km")
    deg = 180 / np.pi
    for name, lat, lon in (("obs", olat, olon), ("ref", rlat, rlon)):
        with open(os.path.join(out, name + ".csv"), "w") as f:
            f.write("lat,lon\n")
            np.savetxt(f, np.stack([lat * deg, lon * deg], axis=1), fmt="%.17g", delimiter=",")
    # geoknn reads the degrees written: use the same rounded values everywhere.
    olat, olon = np.loadtxt(os.path.join(out, "obs.csv"), delimiter=",", skiprows=1, unpack=True) / deg
    rlat, rlon = np.loadtxt(os.path.join(out, "ref.csv"), delimiter=",", skiprows=1, unpack=True) / deg

    # float64 truth on a sample
    sample = rng.choice(n, 512, replace=False)
    truth_idx, truth_d, truth_cnt = [], [], []
    for i in sample:
        d = haversine(olat[i], olon[i], rlat, rlon)
        order = np.lexsort((np.arange(len(d)), d))[:K]
        truth_idx.append(order)
        truth_d.append(d[order])
        truth_cnt.append(int((d <= RADIUS_M).sum()))
    truth_idx, truth_d, truth_cnt = np.array(truth_idx), np.array(truth_d), np.array(truth_cnt)

    t = time.perf_counter()
    tree = BallTree(np.stack([rlat, rlon], axis=1), metric="haversine")
    print(f"sklearn BallTree(haversine): build {(time.perf_counter() - t) * 1e3:.1f} ms")
    chunks = np.array_split(np.stack([olat, olon], axis=1), 128)
    t = time.perf_counter()
    res = Parallel(n_jobs=16)(delayed(tree.query)(c, k=K) for c in chunks)
    sec = time.perf_counter() - t
    sk_d = np.concatenate([r[0] for r in res]) * R
    sk_idx = np.concatenate([r[1] for r in res])
    print(f"  query(k={K}), 16 processes: {sec:.2f} s = {n / sec / 1e6:.3f} M obs/s")
    t = time.perf_counter()
    cnts = Parallel(n_jobs=16)(delayed(tree.query_radius)(c, r=RADIUS_M / R, count_only=True) for c in chunks)
    sec = time.perf_counter() - t
    sk_cnt = np.concatenate(cnts)
    print(f"  query_radius({RADIUS_M/1e3:g} km, count_only), 16 processes: {sec:.2f} s = {n / sec / 1e6:.3f} M obs/s")

    obs, ref = os.path.join(out, "obs.csv"), os.path.join(out, "ref.csv")
    for algo in ("grid", "brute"):
        ans = os.path.join(out, f"k-{algo}.npz")
        print(f"geoknn --k {K} --algo {algo}:")
        knn(binary, ["--obs", obs, "--ref", ref, "--engine", "gpu", "--algo", algo, "--k", str(K), "--out", ans])
        a = np.load(ans)
        g_idx, g_d = a["ref_index"].astype(np.int64), a["distance_m"]
        same = (g_idx == sk_idx).all(axis=1)
        print(f"  rows identical to BallTree's: {int(same.sum())} of {n}; the others differ by at most "
              f"{np.abs(g_d[~same] - sk_d[~same]).max() if (~same).any() else 0:.3g} m in distance")
        excess = (g_d[sample] - truth_d).max()
        print(f"  sample of {len(sample)} against float64 NumPy: {int((g_idx[sample] != truth_idx).sum())} "
              f"indices differ, max distance error {np.abs(g_d[sample] - truth_d).max():.3g} m (max excess {excess:.3g} m)")
    ans = os.path.join(out, "within.npz")
    print(f"geoknn --within-m {RADIUS_M:g}:")
    knn(binary, ["--obs", obs, "--ref", ref, "--engine", "gpu", "--within-m", str(RADIUS_M), "--out", ans])
    g_cnt = np.load(ans)["counts"].astype(np.int64)
    diff = np.nonzero(g_cnt != sk_cnt)[0]
    print(f"  counts identical to BallTree's for {n - len(diff)} of {n}; sample against float64 NumPy: "
          f"{int((g_cnt[sample] != truth_cnt).sum())} differ")
    for i in diff[:5]:
        d = np.sort(haversine(olat[i], olon[i], rlat, rlon))
        edge = d[np.abs(d - RADIUS_M) < 1.0]
        print(f"    observation {i}: geoknn {g_cnt[i]}, BallTree {sk_cnt[i]}; references within 1 m of the radius: {edge}")


if __name__ == "__main__":
    main()
