"""A client of `knn serve`: the references stay resident in a server (on
its GPUs or CPU), many processes query them, and the references move
live. Client has NearestNeighbors' query methods and answer shapes.

    >>> c = geoknn.Client("http://127.0.0.1:8427")
    >>> dist_m, idx = c.kneighbors([[52.52, 13.40]], n_neighbors=3)
    >>> c.version_                      # the reference version answered
    >>> c.move(["bus-7"], [[52.50, 13.41]])

Points are [latitude, longitude] in degrees, distances in metres. Small
requests travel as JSON (standard library only); with pyarrow installed,
requests of arrow_min points or more travel as Arrow IPC streams.
"""

import json
import os
import urllib.error
import urllib.request

import numpy as np

__all__ = ["Client", "ServerError"]

_ARROW = "application/vnd.apache.arrow.stream"


class ServerError(ValueError):
    """The server refused a request: status is the HTTP status, field the
    request field at fault (None when the whole request is)."""

    def __init__(self, status, message, field=None):
        super().__init__(f"knn serve: {status}: {message}")
        self.status, self.field = status, field


def _points(X):
    a = np.asarray(X, dtype=np.float64)
    if a.ndim == 1 and a.shape == (2,):
        a = a.reshape(1, 2)
    if a.ndim != 2 or a.shape[1] != 2:
        raise ValueError(f"X: want [latitude, longitude] rows, an (N, 2) array; got shape {a.shape}")
    return a


class Client:
    """Queries a knn serve at url. token (else $GEOKNN_TOKEN) is sent as a
    bearer token; n_neighbors and radius are the defaults of kneighbors and
    radius_neighbors, as NearestNeighbors'. version_ is the reference
    version of the last answer (every answer is exact against one version);
    ids_ the reference ids of the last answer, where the server's references
    have an id column."""

    def __init__(self, url="http://127.0.0.1:8427", token=None, n_neighbors=5, radius=None, timeout=60.0,
                 arrow_min=4096):
        self.url = url.rstrip("/")
        self.token = token if token is not None else os.environ.get("GEOKNN_TOKEN") or None
        self.n_neighbors, self.radius, self.timeout, self.arrow_min = n_neighbors, radius, timeout, arrow_min
        self.version_ = None
        self.ids_ = None

    def __repr__(self):
        return f"Client({self.url!r})"

    # transport

    def _request(self, path, body=None, ctype="application/json", accept=None):
        req = urllib.request.Request(self.url + path, data=body, method="POST" if body is not None else "GET")
        if body is not None:
            req.add_header("Content-Type", ctype)
        if accept:
            req.add_header("Accept", accept)
        if self.token:
            req.add_header("Authorization", "Bearer " + self.token)
        try:
            with urllib.request.urlopen(req, timeout=self.timeout) as resp:
                return resp.read(), resp.headers.get("Content-Type", "")
        except urllib.error.HTTPError as e:
            data = e.read()
            try:
                msg = json.loads(data)
                raise ServerError(e.code, msg.get("error", ""), msg.get("field")) from None
            except (ValueError, AttributeError) as bad:
                if isinstance(bad, ServerError):
                    raise
                raise ServerError(e.code, data.decode("utf-8", "replace").strip()) from None

    def _pyarrow(self, n):
        if n < self.arrow_min:
            return None
        try:
            import pyarrow
            import pyarrow.ipc  # noqa: F401
        except ImportError:
            return None
        return pyarrow

    def _query(self, path, X, opts):
        """Posts the points and options; returns (answer dict of arrays,
        arrow table or None)."""
        P = _points(X)
        pa = self._pyarrow(len(P))
        if pa is not None:
            table = pa.table({"lat": P[:, 0], "lon": P[:, 1]})
            sink = pa.BufferOutputStream()
            with pa.ipc.new_stream(sink, table.schema) as w:
                w.write_table(table)
            q = "&".join(f"{k}={str(v).lower() if isinstance(v, bool) else v}" for k, v in opts.items())
            data, _ = self._request(f"{path}?{q}", sink.getvalue().to_pybytes(), _ARROW)
            t = pa.ipc.open_stream(data).read_all()
            self.version_ = int(t.schema.metadata[b"reference_version"])
            return None, t, len(P)
        body = dict(opts, lat=P[:, 0].tolist(), lon=P[:, 1].tolist())
        data, _ = self._request(path, json.dumps(body).encode())
        out = json.loads(data)
        self.version_ = out["version"]
        return out, None, len(P)

    # queries

    def kneighbors(self, X, n_neighbors=None, return_distance=True, max_distance=None):
        """The k nearest references of every point of X, nearest first:
        (distances, indices), (N, k) float64 metres and (N, k) int64; beyond
        max_distance (metres) entries are inf and -1, as NearestNeighbors'."""
        k = self.n_neighbors if n_neighbors is None else n_neighbors
        if not (isinstance(k, (int, np.integer)) and k >= 1):
            raise ValueError(f"n_neighbors={k!r}: want an integer >= 1")
        opts = {"k": int(k)}
        if max_distance is not None:
            opts["max_m"] = float(max_distance)
        out, t, n = self._query("/v1/knearest", X, opts)
        dist, idx = np.full((n, k), np.inf), np.full((n, k), -1, np.int64)
        ids = np.full((n, k), None, dtype=object)
        if t is not None:
            obs, rank = t["obs_index"].to_numpy(), t["rank"].to_numpy()
            idx[obs, rank] = t["ref_index"].to_numpy()
            dist[obs, rank] = t["distance_m"].to_numpy()
            if "ref_id" in t.column_names:
                ids[obs, rank] = t["ref_id"].to_pylist()
        else:
            for i, (row, drow) in enumerate(zip(out["index"], out["distance_m"])):
                idx[i, :len(row)], dist[i, :len(drow)] = row, drow
                if "id" in out:
                    ids[i, :len(row)] = out["id"][i]
        self.ids_ = ids if (t is not None and "ref_id" in t.column_names) or (out is not None and "id" in out) else None
        return (dist, idx) if return_distance else idx

    def nearest(self, X):
        """The nearest reference of every point: (distances, indices), (N,)
        float64 metres and (N,) int64."""
        out, t, n = self._query("/v1/nearest", X, {})
        if t is not None:
            self.ids_ = np.array(t["ref_id"].to_pylist(), dtype=object) if "ref_id" in t.column_names else None
            return t["distance_m"].to_numpy(), t["ref_index"].to_numpy().astype(np.int64)
        self.ids_ = np.array(out["id"], dtype=object) if "id" in out else None
        return np.asarray(out["distance_m"], np.float64).reshape(n), np.asarray(out["index"], np.int64).reshape(n)

    def _within(self, X, radius, lists):
        r = self.radius if radius is None else radius
        if r is None or not np.isfinite(r) or r <= 0:
            raise ValueError(f"radius={r!r}: want a distance in metres above 0")
        opts = {"radius_m": float(r)}
        if lists:
            opts["list"] = True
        return self._query("/v1/within", X, opts)

    def radius_neighbors(self, X, radius=None, return_distance=True, sort_results=True):
        """The references within radius metres of every point of X, nearest
        first: (distances, indices), object arrays of N float64 and int64
        arrays, as NearestNeighbors'."""
        out, t, n = self._within(X, radius, True)
        ind, dist = np.empty(n, dtype=object), np.empty(n, dtype=object)
        if t is not None:
            obs = t["obs_index"].to_numpy()
            bounds = np.searchsorted(obs, np.arange(n + 1))
            ri, dm = t["ref_index"].to_numpy().astype(np.int64), t["distance_m"].to_numpy()
            for i in range(n):
                ind[i], dist[i] = ri[bounds[i]:bounds[i + 1]], dm[bounds[i]:bounds[i + 1]]
        else:
            for i in range(n):
                ind[i] = np.asarray(out["index"][i], np.int64)
                dist[i] = np.asarray(out["distance_m"][i], np.float64)
        return (dist, ind) if return_distance else ind

    def radius_neighbors_count(self, X, radius=None):
        """How many references lie within radius metres of every point:
        (N,) int64."""
        out, t, n = self._within(X, radius, False)
        if t is not None:
            return t["count"].to_numpy().astype(np.int64)
        return np.asarray(out["count"], np.int64).reshape(n)

    # updates

    def move(self, ids, X):
        """Moves the references named ids (their id column's values, or
        their indices where the references have none) to the rows of X;
        returns the version that has the moves."""
        P = _points(X)
        ids = [i.item() if isinstance(i, np.generic) else i for i in ids]
        if len(ids) != len(P):
            raise ValueError(f"{len(ids)} ids for {len(P)} points")
        body = {"id": ids, "lat": P[:, 0].tolist(), "lon": P[:, 1].tolist()}
        data, _ = self._request("/v1/references", json.dumps(body).encode())
        self.version_ = json.loads(data)["version"]
        return self.version_

    def replace(self, X, ids=None):
        """Makes the references exactly the rows of X (named ids, or by
        index); returns the new version."""
        P = _points(X)
        body = {"lat": P[:, 0].tolist(), "lon": P[:, 1].tolist(), "replace": True}
        if ids is not None:
            body["id"] = [i.item() if isinstance(i, np.generic) else i for i in ids]
        data, _ = self._request("/v1/references", json.dumps(body).encode())
        self.version_ = json.loads(data)["version"]
        return self.version_

    def health(self):
        """The server's /healthz: status, engine, version, references."""
        data, _ = self._request("/healthz")
        return json.loads(data)
