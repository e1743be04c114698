"""Points in: NumPy arrays, pandas DataFrames, GeoPandas geometries and
Arrow tables, copied once, as radian columns, into a memfd the worker maps."""

import concurrent.futures
import mmap
import os
import threading

import numpy as np

# The CLI's column names (pointio): compared case-insensitively.
LAT_NAMES = ("lat", "latitude")
LON_NAMES = ("lon", "lng", "long", "longitude")

# The CRSs whose x and y are longitude and latitude in degrees.
_LONLAT_CRS = ("EPSG:4326", "OGC:CRS84")


class Points:
    """Latitude and longitude columns (views of the caller's data where it
    allows) in the caller's units, with a label for messages."""

    def __init__(self, lat, lon, units):
        self.lat, self.lon, self.units = lat, lon, units

    def __len__(self):
        return len(self.lat)

    def describe(self, row):
        """Point row as the caller gave it."""
        unit = "degrees" if self.units == "degrees" else "radians"
        return f"latitude {_plain(self.lat[row])}, longitude {_plain(self.lon[row])} ({unit})"


def _plain(v):
    """v as Python writes a float (NumPy 2's repr says np.float64(...))."""
    try:
        return repr(float(v))
    except (TypeError, ValueError):
        return repr(v)


def columns(X, units="degrees"):
    """The points of X as a Points; raises ValueError for what cannot hold
    points."""
    if units not in ("degrees", "radians"):
        raise ValueError(f"units={units!r}: want 'degrees' or 'radians'")
    kind = type(X).__module__.split(".")[0]
    if kind == "geopandas":
        return _geo_columns(X, units)
    if kind == "pandas" and hasattr(X, "columns"):
        return _named_columns(list(X.columns), lambda c: X[c].to_numpy(), units)
    if kind == "pyarrow" and hasattr(X, "column_names"):
        return _named_columns(list(X.column_names), lambda c: X.column(c).to_numpy(), units)
    return _array_columns(X, units)


def _array_columns(X, units):
    _refuse_complex(X, "points")
    try:
        a = np.asarray(X, dtype=np.float64)
    except (TypeError, ValueError) as e:
        raise ValueError(f"points: {e} (want an array of shape (N, 2): latitude, longitude)") from e
    if a.ndim != 2 or a.shape[1] != 2:
        raise ValueError(f"points of shape {a.shape}: want (N, 2), latitude then longitude in {units} a row")
    return Points(a[:, 0], a[:, 1], units)


def _pick(names, wanted, what):
    found = [n for n in names if str(n).strip().lower() in wanted]
    if len(found) != 1:
        have = "none" if not found else ", ".join(map(str, found))
        raise ValueError(
            f"want exactly one {what} column ({', '.join(wanted)}; case-insensitive), found {have}; "
            f"columns: {', '.join(map(str, names))}")
    return found[0]


def _named_columns(names, get, units):
    lat = _pick(names, LAT_NAMES, "latitude")
    lon = _pick(names, LON_NAMES, "longitude")
    return Points(_float_column(get(lat), lat), _float_column(get(lon), lon), units)


def _refuse_complex(X, what):
    """NumPy would drop the imaginary parts with a warning; scikit-learn
    refuses complex data, and so does this."""
    if np.iscomplexobj(X):
        raise ValueError(f"{what}: complex numbers: want real latitudes and longitudes")


def _float_column(col, name):
    _refuse_complex(col, f"column {name!r}")
    try:
        return np.asarray(col, dtype=np.float64)
    except (TypeError, ValueError) as e:
        raise ValueError(f"column {name!r}: {e}") from e


def _geo_columns(X, units):
    geom = X.geometry if hasattr(X, "geometry") else X
    crs = geom.crs
    if crs is not None and not any(crs.equals(c, ignore_axis_order=True) for c in _LONLAT_CRS):
        raise ValueError(
            f"CRS {crs.to_string()}: want longitude/latitude degrees (EPSG:4326 or OGC:CRS84); "
            "reproject with .to_crs('EPSG:4326')")
    if units != "degrees":
        raise ValueError("geometries are in degrees: leave units='degrees'")
    types = np.asarray(geom.geom_type)
    bad = np.flatnonzero((types != "Point") | np.asarray(geom.is_empty))
    if len(bad):
        raise ValueError(f"geometry row {bad[0]}: {types[bad[0]]}, empty or missing: want a point")
    return Points(np.asarray(geom.y, dtype=np.float64), np.asarray(geom.x, dtype=np.float64), units)


_LON_ALIGN = 1 << 16


def _lon_offset(n):
    """Where the longitudes of n points start: after the latitudes, at the
    next multiple of 64 KiB, so that no page holds both columns (the GPU
    driver page-locks each on its own). As the worker's lonOffset."""
    return (8 * n + _LON_ALIGN - 1) // _LON_ALIGN * _LON_ALIGN


def _points_bytes(n):
    return _lon_offset(n) + 8 * n


class Shared:
    """Points as float64 radian columns in a memfd: n latitudes, then from
    _lon_offset(n) n longitudes (a buffer from the pool may hold room for
    more). fd stays open until close (a fitted set is sent again to a
    restarted or forked worker)."""

    def __init__(self, n, capacity=None):
        capacity = max(n, capacity or 0, 1)
        self.n, self.capacity = n, capacity
        self.fd = os.memfd_create("geoknn-points")
        try:
            os.ftruncate(self.fd, _points_bytes(capacity))
            # MAP_POPULATE: every page in one call, not a fault a page.
            flags = mmap.MAP_SHARED | getattr(mmap, "MAP_POPULATE", 0)
            self.mem = mmap.mmap(self.fd, _points_bytes(capacity), flags=flags,
                                 prot=mmap.PROT_READ | mmap.PROT_WRITE)
        except BaseException:
            os.close(self.fd)
            raise

    def fill(self, pts):
        """Copies pts in as radians: the one copy of the caller's points,
        on several threads for large sets (NumPy lets go of the GIL)."""
        n = self.n = len(pts)
        cols = np.ndarray((2, n), np.float64, buffer=self.mem, strides=(_lon_offset(n), 8))
        scale = np.pi / 180 if pts.units == "degrees" else 1.0
        def convert(lo, hi):
            # Blocks small enough that the second column's pass finds the
            # caller's rows still in cache (they interleave both columns).
            for a in range(lo, hi, _BLOCK_ROWS):
                b = min(a + _BLOCK_ROWS, hi)
                np.multiply(pts.lat[a:b], scale, out=cols[0, a:b], dtype=np.float64)
                np.multiply(pts.lon[a:b], scale, out=cols[1, a:b], dtype=np.float64)

        _in_threads(n, convert)
        self.cols = cols
        return self

    def close(self):
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1


_PARALLEL_MIN = 1 << 19
_BLOCK_ROWS = 1 << 16
_threads_lock = threading.Lock()
_threads = None  # the converting threads, started on first use, kept


def cores():
    """The cores this process may run on (its affinity, which a container
    or taskset may narrow), else the machine's."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def _in_threads(n, f):
    """Runs f on contiguous parts of range(n): one a core, each of
    _PARALLEL_MIN rows or more, on threads kept between calls (starting
    a thread costs about 0.1 ms: a millisecond and more for many cores)."""
    parts = min(cores(), max(1, n // _PARALLEL_MIN))
    if parts == 1:
        f(0, n)
        return
    bounds = [n * p // parts for p in range(parts + 1)]
    with _threads_lock:
        futures = [_pool_of_threads().submit(f, bounds[p], bounds[p + 1]) for p in range(1, parts)]
    try:
        f(bounds[0], bounds[1])
    finally:
        for fut in futures:
            fut.result()


def _pool_of_threads():
    """The converting threads (_threads_lock held)."""
    global _threads
    if _threads is None:
        _threads = concurrent.futures.ThreadPoolExecutor(
            max(1, cores() - 1), thread_name_prefix="geoknn-convert")
    return _threads


def _before_fork():
    """Ends the converting threads before a fork (the next conversion
    starts them again): a process forked with threads running may deadlock
    in the child, and Python 3.12 warns of it."""
    global _threads
    with _threads_lock:
        pool, _threads = _threads, None
    if pool is not None:
        pool.shutdown(wait=True)


# The last query buffer is kept for the next query: a fresh memfd costs
# the kernel a page allocation and zeroing a page, about as much as the
# copy itself (and the worker keeps its mapping of a buffer it saw).
# Buffers above _POOL_MAX_BYTES are not kept.
_POOL_MAX_BYTES = 1 << 30
_pool_lock = threading.Lock()
_pool = []


def borrow(pts):
    """A Shared holding pts, from the pool when one is big enough (and not
    more than twice so)."""
    n = len(pts)
    with _pool_lock:
        for i, s in enumerate(_pool):
            if n <= s.capacity <= 2 * n + (1 << 16):
                return _pool.pop(i).fill(pts)
    return Shared(n).fill(pts)


def give_back(shared):
    """Keeps shared as the idle buffer, closing the one kept before."""
    if _points_bytes(shared.capacity) > _POOL_MAX_BYTES:
        shared.close()
        return
    with _pool_lock:
        old, _pool[:] = list(_pool), [shared]
    for s in old:
        s.close()


def _after_fork_in_child():
    """A child must not write into buffers its parent's worker reads: it
    drops the pool (the mappings stay until collected; the fds close)."""
    global _pool_lock, _pool, _threads_lock, _threads
    _pool_lock = threading.Lock()
    # The parent's threads are not in the child: its own start on use.
    _threads_lock, _threads = threading.Lock(), None
    for s in _pool:
        s.close()
    _pool = []


os.register_at_fork(before=_before_fork, after_in_child=_after_fork_in_child)
