"""The knn worker process: one per Python process, started on first use.

Requests are JSON messages on a unix SOCK_SEQPACKET socket (the worker's
stdin); arrays travel beside them as memfd descriptors (SCM_RIGHTS), mapped
by both sides, so that answers are NumPy arrays over the worker's memory
with no copy. See cmd/knn/worker_conn.go for why descriptors are passed
this way rather than by /proc paths or /dev/shm names.
"""

import atexit
import itertools
import json
import mmap
import os
import socket
import subprocess
import tempfile
import threading

import numpy as np

_MAX_MESSAGE = 65536
_MAX_FDS = 4


class WorkerError(RuntimeError):
    """The knn worker failed: it ended unexpectedly, or reported an error
    that is not the caller's (a GPU that failed, memory exhausted)."""


class PointsError(ValueError):
    """The worker refused points: what ("observations" or "references"),
    row (the first bad one, or None) and the engine's message."""

    def __init__(self, message, what=None, row=None):
        super().__init__(message)
        self.what, self.row = what, row


def knn_path():
    """The knn binary: $GEOKNN_KNN, else the one inside the package."""
    path = os.environ.get("GEOKNN_KNN")
    if path:
        return path
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_bin", "knn")
    if not os.path.exists(path):
        raise WorkerError(
            f"no knn binary at {path}: install the geoknn wheel, "
            "or set GEOKNN_KNN to a knn binary (make bin)")
    return path


class Worker:
    """One worker process and its socket; calls are serialized by a lock."""

    def __init__(self):
        self.lock = threading.Lock()
        self.ids = itertools.count(1)
        self.dead = False
        self.stderr = tempfile.TemporaryFile()
        parent, child = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        try:
            self.proc = subprocess.Popen(
                [knn_path(), "worker"], stdin=child, stdout=subprocess.DEVNULL,
                stderr=self.stderr, close_fds=True)
        except OSError as e:
            parent.close()
            raise WorkerError(f"cannot start the knn worker: {e}") from e
        finally:
            child.close()
        self.sock = parent
        self.pid = self.proc.pid
        self.call({"op": "hello"})

    def alive(self):
        return not self.dead and self.proc.poll() is None

    def call(self, msg, fds=()):
        """Sends msg (with fds) and returns (reply, answers): answers maps
        array names to NumPy arrays over the answer memfd."""
        with self.lock:
            if self.dead:
                raise WorkerError("the knn worker is gone")
            rid = next(self.ids)
            msg = dict(msg, id=rid)
            self._send(msg, fds)
            try:
                rep, rfds = self._wait(rid)
            except KeyboardInterrupt:
                self._cancel(rid)
                raise
        return self._finish(rep, rfds)

    def send_nowait(self, msg):
        """Sends a message that gets no reply (free): one SEQPACKET message
        is written whole, so no lock is needed, and a finalizer may call it
        while its thread holds the lock."""
        if self.alive():
            try:
                socket.send_fds(self.sock, [json.dumps(dict(msg, id=0)).encode()], [])
            except OSError:
                pass

    def _send(self, msg, fds):
        try:
            socket.send_fds(self.sock, [json.dumps(msg).encode()], list(fds))
        except OSError as e:
            self._died(f"sending a request: {e}")

    def _wait(self, rid):
        while True:
            try:
                data, fds, _, _ = socket.recv_fds(self.sock, _MAX_MESSAGE, _MAX_FDS)
            except OSError as e:
                self._died(f"reading a reply: {e}")
            if not data:
                _close_fds(fds)
                self._died("")
            rep = json.loads(data)
            if rep.get("id") == rid:
                return rep, fds
            _close_fds(fds)  # the answer of a request abandoned earlier

    def _cancel(self, rid):
        """Cancels request rid after a KeyboardInterrupt and waits for its
        reply, so the worker is ready for the next call; a second interrupt
        while waiting kills the worker (the next call starts another)."""
        try:
            socket.send_fds(self.sock, [json.dumps({"op": "cancel", "id": rid}).encode()], [])
            _, fds = self._wait(rid)
            _close_fds(fds)
        except BaseException:
            self.kill()

    def _finish(self, rep, fds):
        try:
            if not rep.get("ok"):
                raise _reply_error(rep)
            arrays = _map_answers(rep.get("arrays") or [], fds)
        finally:
            _close_fds(fds)
        return rep, arrays

    def _died(self, why):
        status = self.proc.poll()
        if status is None:
            try:
                status = self.proc.wait(timeout=2)
            except subprocess.TimeoutExpired:
                pass
        self.kill()
        raise WorkerError(
            f"the knn worker (pid {self.pid}) ended unexpectedly (exit status {status})"
            + (f" {why}" if why else "") + self.stderr_tail())

    def stderr_tail(self):
        try:
            self.stderr.seek(0, os.SEEK_END)
            size = self.stderr.tell()
            self.stderr.seek(max(0, size - 2000))
            text = self.stderr.read().decode(errors="replace").strip()
        except (OSError, ValueError):
            return ""
        return f": {text}" if text else ""

    def kill(self):
        self.dead = True
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        self.sock.close()
        self.stderr.close()

    def close(self, timeout=5):
        """Closes the socket (the worker exits at its end) and reaps it."""
        self.dead = True
        self.sock.close()
        try:
            self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.stderr.close()

    def abandon(self):
        """In a forked child: lets go of the parent's worker without
        touching it (the parent keeps using it)."""
        self.dead = True
        self.sock.close()


def _reply_error(rep):
    kind, text = rep.get("kind"), rep.get("error", "unknown error")
    if kind == "value":
        return PointsError(text, rep.get("what") or None, rep.get("row"))
    if kind == "cancelled":
        return KeyboardInterrupt()
    return WorkerError(text)


def _map_answers(specs, fds):
    if not specs:
        return {}
    fd = fds[0]
    size = os.fstat(fd).st_size
    flags = mmap.MAP_SHARED | getattr(mmap, "MAP_POPULATE", 0)
    mem = mmap.mmap(fd, size, flags=flags, prot=mmap.PROT_READ | mmap.PROT_WRITE)
    return {s["name"]: np.ndarray(tuple(s["shape"]), np.dtype(s["dtype"]), buffer=mem, offset=s["offset"])
            for s in specs}


def _close_fds(fds):
    for fd in fds:
        os.close(fd)


_lock = threading.Lock()
_worker = None
_orphans = []  # forked children keep their parent's Worker objects here


def get():
    """The process's worker, started (or restarted after a crash) here."""
    global _worker
    with _lock:
        if _worker is None or not _worker.alive():
            if _worker is not None:
                _worker.kill()
            _worker = Worker()
        return _worker


def _after_fork_in_child():
    global _worker, _lock
    _lock = threading.Lock()
    if _worker is not None:
        _worker.abandon()
        _orphans.append(_worker)
        _worker = None


def _shutdown():
    global _worker
    if _worker is not None and not _worker.dead:
        _worker.close()
    _worker = None


os.register_at_fork(after_in_child=_after_fork_in_child)
atexit.register(_shutdown)
