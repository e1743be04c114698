"""Points in: NumPy arrays, pandas DataFrames, GeoPandas geometries and
Arrow tables, copied once, as radian columns, into a memfd the worker maps."""

import mmap
import os

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
        return f"latitude {self.lat[row]!r}, longitude {self.lon[row]!r} ({unit})"


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


def _float_column(col, name):
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


class Shared:
    """Points as float64 radian columns in a memfd: n latitudes, then n
    longitudes. fd stays open until close (a fitted set is sent again to a
    restarted or forked worker)."""

    def __init__(self, pts):
        n = len(pts)
        self.n = n
        self.fd = os.memfd_create("geoknn-points")
        try:
            os.ftruncate(self.fd, 16 * n)
            flags = mmap.MAP_SHARED | getattr(mmap, "MAP_POPULATE", 0)
            mem = mmap.mmap(self.fd, 16 * n, flags=flags, prot=mmap.PROT_READ | mmap.PROT_WRITE)
            cols = np.ndarray((2, n), np.float64, buffer=mem)
            if pts.units == "degrees":
                np.radians(pts.lat, out=cols[0], dtype=np.float64)
                np.radians(pts.lon, out=cols[1], dtype=np.float64)
            else:
                cols[0], cols[1] = pts.lat, pts.lon
        except BaseException:
            os.close(self.fd)
            raise
        self.mem, self.cols = mem, cols

    def close(self):
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1
