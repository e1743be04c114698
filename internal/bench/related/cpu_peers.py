#!/usr/bin/env python3
"""CPU nearest-neighbour peers per core, beside geoknn's CPU engine (run on the GPU machine's host).

Uniform points on the sphere (NumPy), references either uniform or read from a CSV with lat/lon columns:
  * SciPy cKDTree on unit vectors (chord order is great-circle order), query(k=1, workers=W)
  * scikit-learn BallTree(metric="haversine"), one core, on a sample of the observations
Prints observations per second and per core; pin the process (taskset) to match W.

Usage: python3 bench/related/cpu_peers.py WORKERS [n_obs_log2 [REF_CSV | n_ref_log2]]
"""
import sys
import time

import numpy as np


def sphere(n, rng):
    return np.arcsin(rng.uniform(-1.0, 1.0, n)), rng.uniform(-np.pi, np.pi, n)


def unit(lat, lon):
    c = np.cos(lat)
    return np.stack([c * np.cos(lon), c * np.sin(lon), np.sin(lat)], axis=1)


def refs(arg, rng):
    if arg.endswith(".csv"):
        import csv
        with open(arg, newline="") as f:
            rows = csv.DictReader(f)
            pts = [(float(r["lat"]), float(r["lon"])) for r in rows]
        a = np.radians(np.array(pts))
        return a[:, 0], a[:, 1], arg
    n = 1 << int(arg)
    lat, lon = sphere(n, rng)
    return lat, lon, f"2^{arg} sphere"


def main():
    workers = int(sys.argv[1])
    nobs = 1 << int(sys.argv[2] if len(sys.argv) > 2 else 22)
    rng = np.random.default_rng(1)
    olat, olon = sphere(nobs, rng)
    rlat, rlon, name = refs(sys.argv[3] if len(sys.argv) > 3 else "16", rng)
    print(f"{nobs} observations against {len(rlat)} references ({name}), {workers} workers")

    from scipy.spatial import cKDTree
    t = time.perf_counter()
    tree = cKDTree(unit(rlat, rlon))
    build = time.perf_counter() - t
    for rep in range(2):
        t = time.perf_counter()
        tree.query(unit(olat, olon), k=1, workers=workers)
        q = time.perf_counter() - t
    print(f"scipy cKDTree: build {build:.3f} s, query {q:.3f} s: {nobs / q / 1e6:.2f} M obs/s, "
          f"{nobs / q / workers / 1e6:.2f} M a core")

    from sklearn.neighbors import BallTree
    bt = BallTree(np.stack([rlat, rlon], axis=1), metric="haversine")
    m = 1 << 16
    t = time.perf_counter()
    bt.query(np.stack([olat[:m], olon[:m]], axis=1), k=1)
    q = time.perf_counter() - t
    print(f"sklearn BallTree(haversine): {m} observations on one core in {q:.3f} s: {m / q / 1e6:.3f} M obs/s")


if __name__ == "__main__":
    main()
