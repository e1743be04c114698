"""Benchmarks of the Python package, side by side on one machine:

1. the Python call against the Go API for the same nearest query (default
   2^24 observations x 2^16 references) on the same engine and points: the
   Go side is python/bench/gonearest, Index.Nearest on float64 radian
   columns (a fresh Result each call), the call the worker makes;
2. geoknn against scikit-learn's BallTree(haversine) (default 2^20 x
   2^16), the single-threaded BallTree.query and NearestNeighbors with
   n_jobs=-1 (every core, as geoknn uses).

    /usr/bin/python3 python/bench/bench_nearest.py --engine cpu --go /tmp/gonearest
    python3 python/bench/bench_nearest.py --wheel python/dist/geoknn-*.whl \\
        --go python/dist/gonearest --engine gpu --skip-balltree --probe

geoknn is imported from --wheel (unpacked into a temporary directory), as
installed, or from python/ with GEOKNN_KNN pointing at a knn binary.
Output goes to stdout and, where $OUT is set (or --out given), to a file.

The Python and the Go calls are interleaved one by one, both warm (the Go
side is one gonearest process that keeps its index and runs a query for
each line it reads), the order swapped every round so that neither always
follows the other; after --warmup calls each (a reused buffer is pinned
for the GPUs at its second query), --rounds rounds give medians: the
Python call, the Go call, the ratio of the medians and the median of the
rounds' ratios. The Python call's time is split (medians, ms): convert
(the points' copy in, as radians), engine (the worker's Go API call),
answers (the answer's arrays written), pinning (page-locking reused
buffers for the GPUs, once), worker other, round trip (socket and
mapping), python other, overhead (all but engine); and what the GPUs read
or wrote in place, page-locked (pinned: points, answers). After each
Python call, outside its time, one element a page of the answers is
read: the first touch maps their pages, a cost the Go call has paid
already. --probe times the conversion alone on 1, 2, 4, ... threads
beside a plain copy of as many bytes: whether the host's memory, or the
threads, bound it.

The package's tests on a machine with no pytest of its own (the GPU
machine), with Debian's pytest bundled by python/tests/bundle-pytest.sh:

    GEOKNN_WHEEL=$(ls python/dist/geoknn-*.whl) GEOKNN_TEST_ENGINE=gpu \\
      PYTEST_DISABLE_PLUGIN_AUTOLOAD=1 PYTHONPATH=python/dist/pytest-bundle \\
      python3 -m pytest -q -p no:cacheprovider -rs python/tests

(PYTEST_DISABLE_PLUGIN_AUTOLOAD=1: that Python's own plugins, such as a
pytest_timeout made for another pytest, would break the bundled one.)
"""

import argparse
import datetime
import os
import platform
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
import zipfile

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


def median(xs):
    return statistics.median(xs)


class GoServer:
    """One gonearest --serve process: its index built once, one timed
    Index.Nearest call per query()."""

    def __init__(self, args, d):
        cmd = ([args.go] if args.go else ["go", "run", "./python/bench/gonearest"]) + [
            "--dir", d, "--engine", args.engine, "--serve"]
        self.proc = subprocess.Popen(cmd, cwd=REPO, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        ready = self.proc.stdout.readline().split(maxsplit=4)
        if len(ready) < 4 or ready[0] != "ready":
            self.proc.kill()
            raise SystemExit(f"gonearest did not start: {' '.join(ready)!r} ({shlex.join(cmd)})")
        self.engine, self.devices = ready[2], ready[4].strip() if len(ready) > 4 else ""

    def query(self):
        self.proc.stdin.write("q\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline().split()
        if len(line) != 2 or line[0] != "seconds":
            raise SystemExit(f"gonearest failed: {' '.join(line)!r}")
        return float(line[1])

    def close(self):
        self.proc.stdin.close()
        self.proc.wait()


def python_vs_go(args, geoknn, out):
    """The Python call and the Go API call interleaved one by one (see the
    module doc)."""
    obs, ref = sphere(size(args.obs), 1), sphere(size(args.ref), 2)
    nn = geoknn.NearestNeighbors(n_neighbors=1, engine=args.engine, units=args.units).fit(
        np.radians(ref) if args.units == "radians" else ref)
    x = np.radians(obs) if args.units == "radians" else obs
    with tempfile.TemporaryDirectory() as d:
        np.radians(ref).T.copy().tofile(os.path.join(d, "ref.f64"))
        np.radians(obs).T.copy().tofile(os.path.join(d, "obs.f64"))
        go = GoServer(args, d)
        try:
            out(f"Go side: engine {go.engine}, devices {go.devices or '?'}")
            rounds = interleave(args, lambda: python_call(nn, x), go.query)
        finally:
            go.close()
    report(args, rounds, out)


def python_call(nn, x):
    t = time.perf_counter()
    ans = nn.kneighbors(x)
    took = time.perf_counter() - t
    parts = split(took, nn.last_query_stats_)
    parts["first touch"] = timed(lambda: [touch(a) for a in ans])
    del ans  # its buffers go back to the pool, as a Go Result to the heap
    return took, parts


def touch(a):
    """Reads one element a 4 KiB page: the answers' arrays are mapped
    lazily, so their first read maps the pages (the Go Result's pages are
    resident when the call returns). Not counted in the call's time."""
    flat = a.reshape(-1)
    return flat[::4096 // flat.itemsize].sum()


def interleave(args, py, go):
    """--warmup calls each, then --rounds rounds of one Python call and
    one Go call, in swapped order every round: [(python, split, go)]."""
    for _ in range(args.warmup):
        py()
        go()
    rounds = []
    for r in range(args.rounds):
        if r % 2:
            g = go()
            p, s = py()
        else:
            p, s = py()
            g = go()
        rounds.append((p, s, g))
    return rounds


def report(args, rounds, out):
    pys, gos = [p for p, _, _ in rounds], [g for _, _, g in rounds]
    ratios = sorted(p / g for p, _, g in rounds)
    engines = [s["engine"] for _, s, _ in rounds]
    py, go = median(pys), median(gos)
    out(f"nearest {args.obs} x {args.ref}, engine {args.engine}, {len(rounds)} interleaved rounds after "
        f"{args.warmup} warm-up calls each; Python points in {args.units} (N, 2) float64, Go radian columns float64")
    out(f"  Python call median {1e3 * py:.1f} ms (min {1e3 * min(pys):.1f}, max {1e3 * max(pys):.1f})")
    out(f"  Go API call median {1e3 * go:.1f} ms (min {1e3 * min(gos):.1f}, max {1e3 * max(gos):.1f})")
    out(f"  worker's engine call (the same Go API call inside the worker) median {1e3 * median(engines):.1f} ms")
    out(f"Python/Go: {py / go:.3f} (medians); rounds' ratios median {median(ratios):.3f} "
        f"(min {ratios[0]:.3f}, max {ratios[-1]:.3f})")
    print_split([s for _, s, _ in rounds], out)


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


def print_split(splits, out):
    """The median of each part of the calls' time, in ms."""
    parts = [k for k in splits[0] if k not in ("pinned", "first touch")]
    med = {k: median(s[k] for s in splits) for k in parts}
    pinned = sorted({s["pinned"] for s in splits})
    out("Python call, median ms: " + ", ".join(f"{k} {1e3 * v:.1f}" for k, v in med.items())
        + f"; pinned: {', '.join(pinned)}")
    if "first touch" in splits[0]:
        out(f"after the call (not in its time): the first touch of the answers' pages, median "
            f"{1e3 * median(s['first touch'] for s in splits):.1f} ms (the Go Result's pages are resident)")


def probe(args, geoknn, out):
    """The conversion alone (_inputs.Shared.fill, as a query makes it) on
    1, 2, 4, ... threads and on every core, beside np.copyto of as many
    bytes on as many threads (one call a thread, no GIL between): the
    host's memory bound. Conversion well behind the copy on many threads
    says the threads wait on the GIL between blocks; blocks 4x as long
    then do better."""
    from geoknn import _inputs

    n = size(args.obs)
    obs = sphere(n, 5)
    pts = _inputs.columns(obs, "degrees")
    shared = _inputs.Shared(n)
    src, dst = np.ascontiguousarray(obs).ravel(), np.empty(2 * n)
    cores = _inputs.cores()
    counts = sorted({1 << i for i in range(cores.bit_length()) if 1 << i <= cores} | {cores})
    rows, own, block = [], _inputs.cores, _inputs._BLOCK_ROWS
    try:
        for c in counts:
            _inputs.cores = lambda c=c: c
            conv = [timed(lambda: shared.fill(pts)) for _ in range(args.probe_repeat)]
            _inputs._BLOCK_ROWS = 4 * block
            wide = [timed(lambda: shared.fill(pts)) for _ in range(args.probe_repeat)]
            _inputs._BLOCK_ROWS = block
            copy = [timed(lambda: _inputs._in_threads(2 * n, lambda a, b: np.copyto(dst[a:b], src[a:b])))
                    for _ in range(args.probe_repeat)]
            rows.append(f"{c} threads: convert {1e3 * median(conv):.1f} ms ({1e3 * median(wide):.1f} in blocks 4x as "
                        f"long), copy {1e3 * median(copy):.1f} ms")
    finally:
        _inputs.cores, _inputs._BLOCK_ROWS = own, block
        shared.close()
    gb = 2 * 16 * n / 1e9  # read and written, either way
    out(f"conversion of {args.obs} points ({gb:.2f} GB read and written), medians of {args.probe_repeat}:")
    for r in rows:
        out("  " + r)


def timed(f):
    t = time.perf_counter()
    f()
    return time.perf_counter() - t


def versus_balltree(args, geoknn, out):
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
    out(f"nearest {args.bt_obs} x {args.ref} on {os.cpu_count()} cores: geoknn ({args.engine}) {g:.3f} s; "
        f"BallTree.query {bt1:.2f} s ({bt1 / g:.0f}x); NearestNeighbors(ball_tree, n_jobs=-1) {btn:.2f} s "
        f"({btn / g:.0f}x); same index {same:.6f}")


def machine(geoknn):
    """What ran it: the host's CPU and cores, the GPUs, the versions."""
    cpu = "?"
    try:
        with open("/proc/cpuinfo") as f:
            cpu = next((line.split(":", 1)[1].strip() for line in f if line.startswith("model name")), "?")
    except OSError:
        pass
    gpus = "none found"
    try:
        q = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,noheader"],
                           capture_output=True, text=True, timeout=30)
        gpus = "; ".join(q.stdout.strip().splitlines()) or gpus
    except (OSError, subprocess.SubprocessError):
        pass
    from geoknn import _inputs

    return (f"host {platform.node()}: {cpu}, {os.cpu_count()} cores ({_inputs.cores()} this process may use), "
            f"load average {', '.join(f'{x:.1f}' for x in os.getloadavg())}; GPUs: {gpus}\n"
            f"Python {platform.python_version()}, NumPy {np.__version__}, geoknn from "
            f"{os.path.dirname(geoknn.__file__)}, knn {geoknn._worker.knn_path()}")


def import_geoknn(wheel, tmp):
    """geoknn from wheel (unpacked into tmp, its knn made executable), as
    installed, or from the source tree."""
    if wheel:
        with zipfile.ZipFile(wheel) as z:
            z.extractall(tmp)
        os.chmod(os.path.join(tmp, "geoknn", "_bin", "knn"), 0o755)
        sys.path.insert(0, tmp)
    try:
        import geoknn
    except ImportError:
        sys.path.insert(0, os.path.dirname(HERE))
        import geoknn
    return geoknn


def output(path):
    """A print that also writes to path (none: stdout alone)."""
    if path:
        os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    f = open(path, "w") if path else None

    def out(line):
        print(line, flush=True)
        if f:
            f.write(line + "\n")
            f.flush()
    return out


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--engine", default="cpu")
    p.add_argument("--obs", default="2^24")
    p.add_argument("--ref", default="2^16")
    p.add_argument("--bt-obs", default="2^20")
    p.add_argument("--units", default="degrees", choices=("degrees", "radians"),
                   help="of the Python call's points (the Go side reads radians)")
    p.add_argument("--warmup", type=int, default=3, help="calls each side before the rounds")
    p.add_argument("--rounds", type=int, default=15, help="interleaved rounds (Python call, Go call)")
    p.add_argument("--repeat", type=int, default=3, help="of the BallTree comparison's geoknn call")
    p.add_argument("--go", help="a built gonearest (default: go run)")
    p.add_argument("--wheel", help="a geoknn wheel to test (unpacked into a temporary directory)")
    p.add_argument("--probe", action="store_true", help="also time the conversion alone on 1, 2, 4... threads")
    p.add_argument("--probe-repeat", type=int, default=5)
    p.add_argument("--out", help="also write the output here (default: $OUT/bench_nearest-ENGINE.txt when $OUT is set)")
    p.add_argument("--skip-go", action="store_true")
    p.add_argument("--skip-balltree", action="store_true")
    args = p.parse_args()
    if args.out is None and os.environ.get("OUT"):
        args.out = os.path.join(os.environ["OUT"], f"bench_nearest-{args.engine}.txt")
    out = output(args.out)
    with tempfile.TemporaryDirectory() as tmp:
        geoknn = import_geoknn(args.wheel, tmp)
        out(f"$ {shlex.join([sys.executable] + sys.argv)}")
        out(f"{datetime.datetime.now().isoformat(timespec='seconds')}; {machine(geoknn)}")
        if args.probe:
            probe(args, geoknn, out)
        if not args.skip_go:
            python_vs_go(args, geoknn, out)
        if not args.skip_balltree:
            versus_balltree(args, geoknn, out)


if __name__ == "__main__":
    main()
