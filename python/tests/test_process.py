"""The worker's life: Ctrl-C, crashes, fork, threads, the interpreter's
end, and the wheel installed into a fresh virtual environment."""

import multiprocessing
import os
import signal
import subprocess
import sys
import threading
import time

import numpy as np
import pytest

import geoknn
from geoknn import _worker
from conftest import ENGINE
from helpers import sphere

REF = sphere(2000, 21)
OBS = sphere(2000, 22)


def answers(est):
    return est.kneighbors(OBS, n_neighbors=2)[1]


@pytest.fixture(scope="module")
def fitted():
    est = geoknn.NearestNeighbors(engine=ENGINE).fit(REF)
    return est, answers(est)


def test_installed_from_the_wheel(installed):
    site, python = installed
    assert geoknn.__file__.startswith(site)
    assert _worker.knn_path().startswith(site)
    if python is None:
        pytest.skip("no venv on this Python: the wheel was unpacked, not installed by pip")
    code = ("import geoknn; nn = geoknn.NearestNeighbors(n_neighbors=1).fit([[0, 0], [10, 10]]);"
            "d, i = nn.kneighbors([[9, 9]]); print(geoknn.__file__, i[0, 0])")
    out = subprocess.run([python, "-I", "-c", code], check=True, capture_output=True, text=True,
                         cwd="/", env={k: v for k, v in os.environ.items() if k != "GEOKNN_KNN"})
    path, index = out.stdout.split()
    assert path.startswith(site) and index == "1"


def test_keyboard_interrupt_cancels(fitted):
    est, want = fitted
    big = geoknn.NearestNeighbors(n_neighbors=16, engine=ENGINE).fit(sphere(1 << 16, 23))
    obs = sphere(1 << 19, 24)
    pid = _worker.get().pid
    timer = threading.Timer(0.5, os.kill, (os.getpid(), signal.SIGINT))
    t = time.monotonic()
    timer.start()
    calls = 0
    with pytest.raises(KeyboardInterrupt):
        while calls < 1000:  # until the signal lands, inside a query as a rule
            big.kneighbors(obs)
            calls += 1
    took = time.monotonic() - t
    timer.join()
    assert _worker.get().pid == pid, "the worker was restarted"
    np.testing.assert_array_equal(answers(est), want)
    print(f"interrupted after {took:.2f} s and {calls} whole queries")


def test_crash_raises_and_restarts(fitted):
    est, want = fitted
    w = _worker.get()
    os.kill(w.pid, signal.SIGKILL)
    w.proc.wait()
    with pytest.raises(geoknn.WorkerError, match="ended unexpectedly"):
        w.call({"op": "hello"})
    np.testing.assert_array_equal(answers(est), want)  # a new worker, fitted again
    assert _worker.get().pid != w.pid


def test_crash_tells_the_workers_last_words(fitted):
    w = _worker.get()
    os.kill(w.pid, signal.SIGQUIT)  # Go prints its goroutines and exits
    w.proc.wait()
    with pytest.raises(geoknn.WorkerError, match="SIGQUIT"):
        w.call({"op": "hello"})


def test_fork_gets_its_own_worker(fitted):
    est, want = fitted
    parent = _worker.get().pid
    r, wfd = os.pipe()
    child = os.fork()
    if child == 0:  # pragma: no cover - the child reports through the pipe
        ok = 0
        try:
            same = np.array_equal(answers(est), want)
            ok = int(same and _worker.get().pid != parent)
        finally:
            os.write(wfd, str(ok).encode())
            os._exit(0)
    os.close(wfd)
    got = os.read(r, 16)
    os.close(r)
    os.waitpid(child, 0)
    assert got == b"1"
    assert _worker.get().pid == parent
    np.testing.assert_array_equal(answers(est), want)


def _pool_task(args):
    est, obs = args
    return est.kneighbors(obs, n_neighbors=2)[1], _worker.get().pid


def test_multiprocessing_fork(fitted):
    est, want = fitted
    ctx = multiprocessing.get_context("fork")
    with ctx.Pool(2) as pool:
        got = pool.map(_pool_task, [(est, OBS[i::4]) for i in range(4)])
    for i, (idx, pid) in enumerate(got):
        np.testing.assert_array_equal(idx, want[i::4])
        assert pid != _worker.get().pid


def test_threads(fitted):
    est, want = fitted
    results, errors = [None] * 8, []

    def work(i):
        try:
            results[i] = answers(est) if i % 2 else est.radius_neighbors_count(OBS, radius=300_000.0)
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    counts = est.radius_neighbors_count(OBS, radius=300_000.0)
    for i, r in enumerate(results):
        np.testing.assert_array_equal(r, want if i % 2 else counts)


def test_worker_ends_with_the_interpreter(installed):
    site, _ = installed
    code = ("import sys; sys.path.insert(0, sys.argv[1]); import geoknn; from geoknn import _worker;"
            "geoknn.NearestNeighbors().fit([[0, 0]] * 6).kneighbors([[1, 1]]); print(_worker.get().pid, flush=True);"
            "import os; os._exit(0) if sys.argv[2] == 'abrupt' else None")
    for how in ("normal", "abrupt"):
        out = subprocess.run([sys.executable, "-c", code, site, how], check=True, capture_output=True, text=True)
        pid = int(out.stdout.split()[0])
        for _ in range(100):
            if not _alive(pid):
                break
            time.sleep(0.05)
        assert not _alive(pid), f"worker {pid} outlived its interpreter ({how} exit)"


def _alive(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(")")[-1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def test_answers_are_never_overwritten(fitted):
    """Answer buffers are reused only once no array of theirs is alive."""
    est, want = fitted
    first = est.kneighbors(OBS, n_neighbors=2)
    kept = [a.copy() for a in first]
    for seed in range(3):
        est.kneighbors(sphere(len(OBS), 100 + seed), n_neighbors=2)
    for a, b in zip(first, kept):
        np.testing.assert_array_equal(a, b)
    first[1][0, 0] = -7  # arrays are writable, copy-on-write
    del first
    np.testing.assert_array_equal(answers(est), want)


def test_forked_child_keeps_inherited_answers(fitted):
    """A child's arrays inherited at fork stay as they were while the
    parent goes on querying (the buffers mapped at fork are never reused)."""
    est, want = fitted
    held = est.kneighbors(OBS, n_neighbors=2)[1]
    go_r, go_w = os.pipe()
    res_r, res_w = os.pipe()
    child = os.fork()
    if child == 0:  # pragma: no cover - the child reports through the pipe
        ok = b"0"
        try:
            os.read(go_r, 1)
            ok = b"1" if np.array_equal(held, want) else b"0"
        finally:
            os.write(res_w, ok)
            os._exit(0)
    del held
    for seed in range(4):
        est.kneighbors(sphere(len(OBS), 200 + seed), n_neighbors=2)
    os.write(go_w, b"x")
    got = os.read(res_r, 1)
    os.waitpid(child, 0)
    for fd in (go_r, go_w, res_r, res_w):
        os.close(fd)
    assert got == b"1"
