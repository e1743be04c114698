"""Benchmarks of the Python package, side by side on one machine:

1. the Python call against the Go API for the same nearest query (default
   2^24 observations x 2^16 references) on the same engine and points: the
   Go side is python/bench/gonearest, Index.Nearest, the call the worker
   makes;
2. geoknn against scikit-learn's BallTree(haversine) (default 2^20 x
   2^16), the single-threaded BallTree.query and NearestNeighbors with
   n_jobs=-1 (every core, as geoknn uses).

    /usr/bin/python3 python/bench/bench_nearest.py --engine cpu
    /usr/bin/python3 python/bench/bench_nearest.py --engine gpu --go bin/gonearest --skip-balltree

geoknn is imported as installed (the wheel), or from python/ with
GEOKNN_KNN pointing at a knn binary. Times are the best of --repeat. The
Python calls' time is also split (medians, ms): convert (the points'
copy in, as radians), engine (the worker's Go API call), answers (the
answer's arrays written), pinning (page-locking reused buffers for the
GPUs, once), worker other, round trip (socket and mapping),
python other, overhead (all but engine), and what the GPUs read or wrote
in place, page-locked (pinned: points, answers).

The package's tests on a machine with no pytest of its own (the GPU
machine), with Debian's pytest bundled by python/tests/bundle-pytest.sh:

    GEOKNN_WHEEL=$(ls python/dist/geoknn-*.whl) GEOKNN_TEST_ENGINE=gpu \
      PYTEST_DISABLE_PLUGIN_AUTOLOAD=1 PYTHONPATH=python/dist/pytest-bundle \
      python3 -m pytest -q -p no:cacheprovider -rs python/tests

(PYTEST_DISABLE_PLUGIN_AUTOLOAD=1: that Python's own plugins, such as a
pytest_timeout made for another pytest, would break the bundled one.)
"""

import argparse
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))


def sphere(n, seed):
    rng = np.random.default_rng(seed)
    z = rng.uniform(-1, 1, n)
    return np.c_[np.degrees(np.arcsin(z)), rng.uniform(-180, 180, n)]


def best(f, repeat):
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        out = f()
        times.append(time.perf_counter() - t)
        del out
    return min(times)


def size(s):
    return 2 ** int(s[2:]) if s.startswith("2^") else int(s)


def python_vs_go(args, geoknn):
    """Rounds of (the Python call, best of --repeat; the Go API, best of
    --repeat in one gonearest process), alternated so that both see the
    same machine: a shared machine's load moves both alike."""
    obs, ref = sphere(size(args.obs), 1), sphere(size(args.ref), 2)
    nn = geoknn.NearestNeighbors(n_neighbors=1, engine=args.engine).fit(ref)
    nn.kneighbors(obs[:1000])
    with tempfile.TemporaryDirectory() as d:
        np.radians(ref).T.copy().tofile(os.path.join(d, "ref.f64"))
        np.radians(obs).T.copy().tofile(os.path.join(d, "obs.f64"))
        cmd = ([args.go] if args.go else ["go", "run", "./python/bench/gonearest"]) + [
            "--dir", d, "--engine", args.engine, "--repeat", str(args.repeat)]
        pys, gos, own, splits = [], [], [], []
        for _ in range(args.rounds):
            times = []
            for _ in range(args.repeat):
                t = time.perf_counter()
                nn.kneighbors(obs)
                times.append(time.perf_counter() - t)
                own.append(times[-1] / nn.last_query_stats_["engine_seconds"])
                splits.append(split(times[-1], nn.last_query_stats_))
            pys.append(min(times))
            out = subprocess.run(cmd, cwd=REPO, check=True, capture_output=True, text=True).stdout.split()
            gos.append(float(out[1]))
            print(f"  round: Python {pys[-1]:.3f} s, Go API {gos[-1]:.3f} s ({out[3]}), ratio {pys[-1] / gos[-1]:.3f}")
    py, go = min(pys), min(gos)
    print(f"nearest {args.obs} x {args.ref}, engine {args.engine}: Python {py:.3f} s, Go API {go:.3f} s, "
          f"Python/Go {py / go:.3f} (best of {args.rounds} rounds of {args.repeat})")
    # The same comparison within one query: the Python call against the Go
    # API call the worker made for it (Index.Nearest), immune to the load
    # moving between the two processes' runs.
    own.sort()
    print(f"Python call / its own Go API call: median {own[len(own) // 2]:.3f} (min {own[0]:.3f}, "
          f"max {own[-1]:.3f}, {len(own)} calls)")
    print_split(splits)


def split(total, st):
    """Where one Python call's time went, in seconds: the points' copy in,
    the Go API call, the answer's arrays written, the rest of the worker,
    the socket round trip and mapping, the rest of Python; and what the GPUs
    read or wrote in place."""
    worker = st["seconds"] or 0.0
    engine, answer, pin = st["engine_seconds"] or 0.0, st["answer_seconds"] or 0.0, st["pin_seconds"] or 0.0
    return {"convert": st["convert_seconds"], "engine": engine, "answers": answer, "pinning": pin,
            "worker other": worker - engine - answer - pin, "round trip": st["call_seconds"] - worker,
            "python other": total - st["convert_seconds"] - st["call_seconds"],
            "overhead": total - engine, "pinned": "+".join(st["pinned"]) or "none"}


def print_split(splits):
    """The median of each part of the calls' time, in ms."""
    parts = [k for k in splits[0] if k != "pinned"]
    med = {k: sorted(s[k] for s in splits)[len(splits) // 2] for k in parts}
    pinned = sorted({s["pinned"] for s in splits})
    print("Python call, median ms: " + ", ".join(f"{k} {1e3 * v:.1f}" for k, v in med.items())
          + f"; pinned: {', '.join(pinned)}")


def versus_balltree(args, geoknn):
    from sklearn.neighbors import BallTree, NearestNeighbors

    obs, ref = sphere(size(args.bt_obs), 3), sphere(size(args.ref), 4)
    nn = geoknn.NearestNeighbors(n_neighbors=1, engine=args.engine).fit(ref)
    g = best(lambda: nn.kneighbors(obs), args.repeat)
    tree = BallTree(np.radians(ref), metric="haversine")
    t = time.perf_counter()
    bt = tree.query(np.radians(obs), k=1)
    bt1 = time.perf_counter() - t
    sk = NearestNeighbors(n_neighbors=1, algorithm="ball_tree", metric="haversine", n_jobs=-1).fit(np.radians(ref))
    t = time.perf_counter()
    sk.kneighbors(np.radians(obs))
    btn = time.perf_counter() - t
    _, idx = nn.kneighbors(obs)
    same = np.mean(idx[:, 0] == bt[1][:, 0])
    print(f"nearest {args.bt_obs} x {args.ref} on {os.cpu_count()} cores: geoknn ({args.engine}) {g:.3f} s; "
          f"BallTree.query {bt1:.2f} s ({bt1 / g:.0f}x); NearestNeighbors(ball_tree, n_jobs=-1) {btn:.2f} s "
          f"({btn / g:.0f}x); same index {same:.6f}")


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--engine", default="cpu")
    p.add_argument("--obs", default="2^24")
    p.add_argument("--ref", default="2^16")
    p.add_argument("--bt-obs", default="2^20")
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--go", help="a built gonearest (default: go run)")
    p.add_argument("--skip-go", action="store_true")
    p.add_argument("--skip-balltree", action="store_true")
    args = p.parse_args()
    try:
        import geoknn
    except ImportError:
        sys.path.insert(0, os.path.dirname(HERE))
        import geoknn
    print(f"geoknn from {os.path.dirname(geoknn.__file__)}")
    if not args.skip_go:
        python_vs_go(args, geoknn)
    if not args.skip_balltree:
        versus_balltree(args, geoknn)


if __name__ == "__main__":
    main()
