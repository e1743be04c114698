"""The knn worker process: one per Python process, started on first use.

Requests are JSON messages on a unix SOCK_SEQPACKET socket (the worker's
stdin); arrays travel beside them as memfd descriptors (SCM_RIGHTS), mapped
by both sides, so that answers are NumPy arrays over the worker's memory
with no copy. See internal/worker/conn.go for why descriptors are passed
this way rather than by /proc paths or /dev/shm names.
"""

import atexit
import itertools
import json
import mmap
import os
import re
import socket
import subprocess
import tempfile
import threading
import time
import weakref

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


# The first line of a Go runtime crash report.
_GO_CRASH = re.compile(r"^(?:panic: |fatal error: |SIG[A-Z]+: )", re.M)


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

    def call(self, msg, fds=(), answer_bytes=None):
        """Sends msg (with fds) and returns (reply, answers): answers maps
        array names to NumPy arrays over the answer memfd. answer_bytes,
        when the answer's size is known, lets a pooled buffer take it.
        The reply's call_seconds is the time from sending to the answers
        mapped."""
        t = time.perf_counter()
        buf = _answers.take(answer_bytes) if answer_bytes else None
        if buf is not None:
            msg, fds = dict(msg, answer=True), list(fds) + [buf.fd]
        try:
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
        except BaseException:
            _answers.discard(buf)
            raise
        rep, arrays = self._finish(rep, rfds, buf)
        rep["call_seconds"] = time.perf_counter() - t
        return rep, arrays

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

    def _finish(self, rep, fds, buf):
        try:
            if not rep.get("ok"):
                raise _reply_error(rep)
            arrays = _map_answers(rep.get("arrays") or [], fds[0] if fds else buf and buf.fd, buf)
        finally:
            _close_fds(fds)
            if buf is not None and not buf.lent_to:
                _answers.give_back(buf)
        return rep, arrays

    def _died(self, why):
        status = self.proc.poll()
        if status is None:
            try:
                status = self.proc.wait(timeout=2)
            except subprocess.TimeoutExpired:
                pass
        tail = self.stderr_tail()  # before kill, which closes the file
        self.kill()
        raise WorkerError(
            f"the knn worker (pid {self.pid}) ended unexpectedly (exit status {status})"
            + (f" {why}" if why else "") + tail)

    def stderr_tail(self):
        """The worker's last words: from a Go crash's first line ("panic:",
        "fatal error:", a signal's name) when there is one, whose goroutine
        dump would otherwise push it out, else the last ones; 2000
        characters at most."""
        try:
            self.stderr.seek(0, os.SEEK_END)
            size = self.stderr.tell()
            self.stderr.seek(max(0, size - (1 << 16)))
            text = self.stderr.read().decode(errors="replace").strip()
        except (OSError, ValueError):
            return ""
        crashes = list(_GO_CRASH.finditer(text))
        text = text[crashes[-1].start():][:2000] if crashes else text[-2000:]
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


def _map_answers(specs, fd, buf):
    """The answer's arrays, over a private (copy-on-write) mapping of its
    memfd: the pages are the worker's, read in place; a write to an array,
    in this process or in a forked child, copies the page it touches, so
    arrays behave as ordinary memory. The mapping is not populated up
    front: for a private writable mapping that would copy every page."""
    if not specs or fd is None:
        return {}
    size = max(s["offset"] + 8 * int(np.prod(s["shape"])) for s in specs)
    mem = mmap.mmap(fd, max(size, 1), flags=mmap.MAP_PRIVATE, prot=mmap.PROT_READ | mmap.PROT_WRITE)
    if buf is not None:
        _answers.lend(buf, mem)
    return {s["name"]: np.ndarray(tuple(s["shape"]), np.dtype(s["dtype"]), buffer=mem, offset=s["offset"])
            for s in specs}


class _AnswerBuffer:
    """A memfd the worker writes answers into, reused once no array of the
    answer it last held is alive: a fresh memfd costs the kernel a page
    allocation and zeroing a page, more than writing the answer."""

    def __init__(self):
        self.fd = os.memfd_create("geoknn-answers")
        self.pid = os.getpid()
        self.lent_to = None  # the finalizer of the mapping that holds it
        self.tainted = False  # mapped when the process forked: never reused

    def size(self):
        return os.fstat(self.fd).st_size

    def close(self):
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1


class _AnswerPool:
    """Idle answer buffers of this process, most recent first, at most
    _MAX_IDLE of them and _MAX_IDLE_BYTES."""

    _MAX_IDLE_BYTES = 1 << 30
    _MAX_IDLE = 4

    def __init__(self):
        # Reentrant: give_back runs from a finalizer, at any allocation of
        # the thread that may hold the lock already.
        self.lock = threading.RLock()
        self.idle, self.lent = [], set()

    def take(self, need):
        """An idle buffer of need bytes or more (but not four times as
        many), or a new one (the worker sizes it)."""
        with self.lock:
            for i, b in enumerate(self.idle):
                if need <= b.size() <= 4 * need + (1 << 20):
                    return self.idle.pop(i)
        return _AnswerBuffer()

    def lend(self, buf, mem):
        with self.lock:
            self.lent.add(buf)
        buf.lent_to = weakref.finalize(mem, self.give_back, buf)

    def give_back(self, buf):
        """Keeps buf as the most recent idle buffer (the oldest go beyond
        the limits), or closes it where it may not be reused."""
        with self.lock:
            self.lent.discard(buf)
            buf.lent_to = None
            if buf.pid != os.getpid() or buf.tainted or buf.fd < 0:
                buf.close()
                return
            self.idle.insert(0, buf)
            while len(self.idle) > self._MAX_IDLE or sum(b.size() for b in self.idle) > self._MAX_IDLE_BYTES:
                self.idle.pop().close()

    def discard(self, buf):
        if buf is not None:
            buf.close()

    def after_fork_in_parent(self):
        """A forked child maps the lent buffers too: the parent must never
        write another answer into them."""
        for b in list(self.lent):
            b.tainted = True

    def after_fork_in_child(self):
        self.lock = threading.RLock()
        for b in self.idle:
            b.close()
        for b in list(self.lent):
            b.tainted = True
        self.idle, self.lent = [], set()


_answers = _AnswerPool()


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
os.register_at_fork(after_in_parent=_answers.after_fork_in_parent, after_in_child=_answers.after_fork_in_child)
atexit.register(_shutdown)
