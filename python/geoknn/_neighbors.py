"""NearestNeighbors: scikit-learn's estimator on the sphere, exact."""

import inspect
import math
import time
import weakref

import numpy as np

from . import _inputs, _worker

EARTH_RADIUS_METRES = 6_371_008.8


class NearestNeighbors:
    """Exact great-circle neighbours of points on the Earth, answered by the
    knn engine (all CPU cores, or the GPUs) in a worker process.

    Shaped like sklearn.neighbors.NearestNeighbors with metric="haversine",
    except: points are [latitude, longitude] in degrees (units="radians" for
    radians, as BallTree takes them); distances and radii are in metres on
    a sphere of radius 6,371,008.8 m; k-nearest answers take a
    max_distance beyond which entries are index -1, distance inf; ties go
    to the lowest index.

    Parameters
    ----------
    n_neighbors : int, default 5
        k for kneighbors.
    radius : float or None, default None
        metres, for radius_neighbors when no radius is passed there.
    engine : "auto", "cpu" or "gpu"
        "auto" uses the GPUs when a CUDA driver and a GPU are present.
    gpus : int, default 0
        how many GPUs to use, 0 for all.
    units : "degrees" or "radians"
        of the points given as arrays.
    """

    def __init__(self, n_neighbors=5, radius=None, engine="auto", gpus=0, units="degrees"):
        self.n_neighbors = n_neighbors
        self.radius = radius
        self.engine = engine
        self.gpus = gpus
        self.units = units

    # scikit-learn's parameter protocol, so that clone() and pipelines work
    # without scikit-learn being a dependency.

    @classmethod
    def _get_param_names(cls):
        sig = inspect.signature(cls.__init__)
        return sorted(p for p in sig.parameters if p != "self")

    def get_params(self, deep=True):
        return {name: getattr(self, name) for name in self._get_param_names()}

    def set_params(self, **params):
        valid = self._get_param_names()
        for name, value in params.items():
            if name not in valid:
                raise ValueError(f"invalid parameter {name!r} for {type(self).__name__}: want one of {valid}")
            setattr(self, name, value)
        return self

    def __repr__(self):
        defaults = inspect.signature(type(self).__init__).parameters
        args = [f"{k}={v!r}" for k, v in self.get_params().items() if defaults[k].default != v]
        return f"{type(self).__name__}({', '.join(args)})"

    def __getstate__(self):
        state = {k: v for k, v in self.__dict__.items() if not k.startswith("_fit")}
        if hasattr(self, "_fit_points"):
            state["_fit_radians"] = np.array(self._fit_points.cols)
        return state

    def __setstate__(self, state):
        radians = state.pop("_fit_radians", None)
        self.__dict__.update(state)
        if radians is not None:
            pts = _inputs.Points(radians[0], radians[1], "radians")
            self._set_fit(_inputs.Shared(len(pts)).fill(pts))

    # Fitting.

    def fit(self, X, y=None):
        """Keeps the references X (see the class doc for the input types)."""
        self._check_params()
        pts = _inputs.columns(X, self.units)
        if len(pts) == 0:
            raise ValueError("fit: no reference points (want 1 or more)")
        self._set_fit(_inputs.Shared(len(pts)).fill(pts))
        try:
            self._send_fit(pts)
        except BaseException:
            self._unfit()
            raise
        return self

    def _unfit(self):
        """Forgets a fit the worker refused: the estimator is unfitted."""
        for f in self._fit_finalizers:
            f()
        for name in ("_fit_points", "_fit_handle", "_fit_finalizers", "n_samples_fit_", "n_features_in_",
                     "effective_metric_"):
            self.__dict__.pop(name, None)

    def _set_fit(self, shared):
        """Keeps shared as the fitted set, letting go of the one before
        (its memfd, and its handle in the worker)."""
        for f in getattr(self, "_fit_finalizers", ()):
            f()
        self._fit_points, self._fit_handle = shared, None
        self._fit_finalizers = [weakref.finalize(self, shared.close)]
        self.n_samples_fit_ = shared.n
        self.n_features_in_ = 2
        self.effective_metric_ = "haversine"

    def _check_params(self):
        if self.engine not in ("auto", "cpu", "gpu"):
            raise ValueError(f"engine={self.engine!r}: want 'auto', 'cpu' or 'gpu'")
        if not (isinstance(self.gpus, (int, np.integer)) and self.gpus >= 0):
            raise ValueError(f"gpus={self.gpus!r}: want 0 (all) or more")
        if self.units not in ("degrees", "radians"):
            raise ValueError(f"units={self.units!r}: want 'degrees' or 'radians'")

    def _send_fit(self, pts=None):
        """The worker's handle of the fitted set: fitted again in a new
        worker (after a crash, or in a forked child)."""
        w = _worker.get()
        if self._fit_handle is not None and self._fit_handle[0] is w:
            return w, self._fit_handle[1]
        msg = {"op": "fit", "n": self._fit_points.n, "engine": self.engine, "gpus": int(self.gpus)}
        try:
            rep, _ = w.call(msg, [self._fit_points.fd])
        except _worker.PointsError as e:
            raise _points_error(e, pts, "fit") from None
        self._fit_handle = (w, rep["index"])
        self._fit_finalizers.append(weakref.finalize(self, w.send_nowait, {"op": "free", "index": rep["index"]}))
        return w, rep["index"]

    def _check_fitted(self):
        if not hasattr(self, "_fit_points"):
            raise _not_fitted(self)

    # Queries.

    def _query(self, X, msg):
        """Runs a query of X (None: the fitted set against itself) and
        returns the answer's arrays."""
        self._check_fitted()
        if X is None:
            msg = dict(msg, self=True, n=self.n_samples_fit_)
            w, handle = self._send_fit()
            rep = w.call(dict(msg, index=handle), answer_bytes=_answer_bytes(msg, self.n_samples_fit_))
            return self._keep_stats(rep)
        pts = _inputs.columns(X, self.units)
        if len(pts) == 0:
            return None
        t = time.perf_counter()
        shared = _inputs.borrow(pts)
        convert = time.perf_counter() - t
        try:
            w, handle = self._send_fit()
            rep = w.call(dict(msg, index=handle, n=shared.n), [shared.fd], _answer_bytes(msg, len(pts)))
            return self._keep_stats(rep, convert_seconds=convert)
        except _worker.PointsError as e:
            raise _points_error(e, pts, "query") from None
        finally:
            _inputs.give_back(shared)

    def _keep_stats(self, reply_arrays, convert_seconds=0.0):
        """Keeps how the last query ran in last_query_stats_: the engine
        ("cpu" or "gpu"); seconds, the worker's time, of which
        engine_seconds went to the Go API call, answer_seconds to writing
        the answer's arrays and pin_seconds to page-locking buffers for the
        GPUs (a reused buffer's first time); convert_seconds, the points' copy in
        as radians; call_seconds, the request from sending to the answer's
        arrays mapped here; pinned, what the GPUs read or wrote in place
        (page-locked: "points", "answers"), and pin_error why not."""
        rep, arrays = reply_arrays
        keys = ("engine", "seconds", "engine_seconds", "answer_seconds", "pin_seconds", "call_seconds")
        self.last_query_stats_ = {k: rep.get(k) for k in keys}
        self.last_query_stats_.update(convert_seconds=convert_seconds, pinned=rep.get("pinned") or [],
                                      pin_error=rep.get("pin_error"))
        return arrays

    def kneighbors(self, X=None, n_neighbors=None, return_distance=True, max_distance=None):
        """The k nearest references of every point of X, nearest first.

        Returns (distances, indices): (N, k) float64 metres and (N, k) int64;
        beyond max_distance (metres) entries are inf and -1. With X None, the
        fitted set against itself, each point's own index left out.
        """
        k = self.n_neighbors if n_neighbors is None else n_neighbors
        avail = self._fitted_len() - (X is None)
        if avail == 0:
            raise ValueError("kneighbors() without X: one fitted point has no neighbour other than itself")
        if not (isinstance(k, (int, np.integer)) and 1 <= k <= avail):
            raise ValueError(f"n_neighbors={k!r}: want 1 to {avail} (the fitted points{' less one' if X is None else ''})")
        max_m = _metres(max_distance, "max_distance", positive=True) if max_distance is not None else 0.0
        kind = "nearest" if k == 1 and not max_m and X is not None else "knn"
        out = self._query(X, {"op": "query", "kind": kind, "k": int(k), "max_m": max_m})
        if out is None:
            out = {"distance": np.empty((0, k)), "index": np.empty((0, k), np.int64)}
        return (out["distance"], out["index"]) if return_distance else out["index"]

    def radius_neighbors(self, X=None, radius=None, return_distance=True, sort_results=True):
        """The references within radius metres of every point of X, nearest
        first (sort_results is accepted for scikit-learn's sake: the answers
        are always sorted).

        Returns (distances, indices): object arrays of N float64 and int64
        arrays, as scikit-learn's; with X None the fitted set against itself,
        each point's own index left out.
        """
        offsets, idx, dist = self._radius_lists(X, radius)
        ind = _split(idx, offsets)
        return (_split(dist, offsets), ind) if return_distance else ind

    def radius_neighbors_count(self, X=None, radius=None):
        """How many references lie within radius metres of every point of X:
        (N,) int64 (a geoknn extension: no lists are built)."""
        r = self._radius(radius)
        out = self._query(X, {"op": "query", "kind": "count", "radius_m": r})
        return np.empty(0, np.int64) if out is None else out["count"]

    def radius_neighbors_graph(self, X=None, radius=None, mode="connectivity", sort_results=False):
        """The radius neighbours as a scipy.sparse CSR matrix (N, n_fitted):
        1.0 (mode "connectivity") or the distance in metres ("distance")."""
        offsets, idx, dist = self._radius_lists(X, radius)
        return _csr(offsets, idx, dist, self.n_samples_fit_, mode)

    def kneighbors_graph(self, X=None, n_neighbors=None, mode="connectivity"):
        """The k nearest as a scipy.sparse CSR matrix (N, n_fitted)."""
        dist, idx = self.kneighbors(X, n_neighbors)
        n, k = idx.shape
        offsets = np.arange(0, n * k + 1, k, dtype=np.int64)
        return _csr(offsets, idx.ravel(), dist.ravel(), self.n_samples_fit_, mode)

    def _radius_lists(self, X, radius):
        r = self._radius(radius)
        out = self._query(X, {"op": "query", "kind": "list", "radius_m": r})
        if out is None:
            return np.zeros(1, np.int64), np.empty(0, np.int64), np.empty(0)
        return out["offsets"], out["index"], out["distance"]

    def _radius(self, radius):
        r = self.radius if radius is None else radius
        if r is None:
            raise ValueError("radius: pass one (metres), here or to NearestNeighbors(radius=...)")
        return _metres(r, "radius", positive=False)

    def _fitted_len(self):
        self._check_fitted()
        return self.n_samples_fit_


def _answer_bytes(msg, n):
    """The size of a query's answer, where it is known before the query."""
    def aligned(size):  # as the worker lays out arrays
        return (size + 63) // 64 * 64

    if msg["kind"] in ("nearest", "knn"):
        return max(64, 2 * aligned(8 * n * msg["k"]))
    if msg["kind"] == "count":
        return max(64, aligned(8 * n))
    return None


def _metres(v, name, positive):
    try:
        m = float(v)
    except (TypeError, ValueError):
        raise ValueError(f"{name}={v!r}: want a distance in metres") from None
    if not (m > 0 if positive else m >= 0) or math.isinf(m):
        raise ValueError(f"{name}={v!r}: want a finite distance in metres{', above 0' if positive else ', 0 or more'}")
    return m


def _split(flat, offsets):
    out = np.empty(len(offsets) - 1, dtype=object)
    out[:] = [flat[a:b] for a, b in zip(offsets[:-1].tolist(), offsets[1:].tolist())]
    return out


def _csr(offsets, idx, dist, ncols, mode):
    if mode not in ("connectivity", "distance"):
        raise ValueError(f"mode={mode!r}: want 'connectivity' or 'distance'")
    try:
        from scipy.sparse import csr_matrix
    except ImportError:
        raise ImportError("the neighbour graphs are scipy.sparse matrices: install SciPy") from None
    data = dist if mode == "distance" else np.ones(len(idx))
    return csr_matrix((data, idx, offsets), shape=(len(offsets) - 1, ncols))


def _points_error(e, pts, stage):
    what = {"fit": "fit: reference", "query": "query: observation"}[stage]
    if pts is not None and e.row is not None and 0 <= e.row < len(pts):
        return ValueError(f"{what} row {e.row}: {pts.describe(e.row)} is not a valid point ({e})")
    return ValueError(f"{what}s: {e}")


def _not_fitted(est):
    try:
        from sklearn.exceptions import NotFittedError
    except ImportError:
        NotFittedError = AttributeError
    return NotFittedError(f"This {type(est).__name__} instance is not fitted yet: call fit first.")
