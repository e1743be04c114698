"""Writes the testdata files that other tools made: GeoParquet, Parquet and
Arrow (Feather) files written by pyarrow, and .npy/.npz files written by
NumPy, all from testdata/realdata/airports.csv (the OpenFlights sample, ODbL
1.0; see testdata/realdata/README.md). The Go tests read them back and
compare every point with the CSV.

Usage (on a machine with Python, NumPy and pyarrow; the GPU machine has
them): python3 testdata/python/make_formats.py OUTDIR
"""
import csv
import json
import struct
import sys
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.feather as feather
import pyarrow.parquet as pq

root = Path(__file__).resolve().parents[2]
out = Path(sys.argv[1])
(out / "arrowio").mkdir(parents=True, exist_ok=True)
(out / "pointio").mkdir(parents=True, exist_ok=True)

with open(root / "testdata/realdata/airports.csv", newline="") as f:
    rows = list(csv.DictReader(f))
lat = np.array([float(r["lat"]) for r in rows])
lon = np.array([float(r["lon"]) for r in rows])
iata = pa.array([r["iata"] for r in rows])
name = pa.array([r["name"] for r in rows])


def geo(encoding):
    col = {"encoding": encoding, "geometry_types": ["Point"]}
    return {b"geo": json.dumps({"version": "1.1.0", "primary_column": "geometry", "columns": {"geometry": col}}).encode()}


# GeoParquet 1.1, WKB points (little-endian, type 1), CRS omitted (OGC:CRS84).
wkb = pa.array([struct.pack("<BIdd", 1, 1, x, y) for x, y in zip(lon, lat)], type=pa.binary())
t = pa.table({"iata": iata, "name": name, "geometry": wkb}).replace_schema_metadata(geo("WKB"))
pq.write_table(t, out / "arrowio/airports_pyarrow_wkb.parquet", row_group_size=300)

# GeoParquet 1.1 native encoding: a struct<x, y> point column.
pts = pa.StructArray.from_arrays([pa.array(lon), pa.array(lat)], names=["x", "y"])
t = pa.table({"iata": iata, "geometry": pts}).replace_schema_metadata(geo("point"))
pq.write_table(t, out / "arrowio/airports_pyarrow_native.parquet", row_group_size=500)

# Plain Parquet with float32 latitude/longitude columns of other names, zstd.
t = pa.table({"code": iata, "latitude": pa.array(lat.astype(np.float32)), "longitude": pa.array(lon.astype(np.float32))})
pq.write_table(t, out / "arrowio/airports_pyarrow_f32.parquet", compression="zstd")

# Feather v2 (Arrow IPC file) with pyarrow's default LZ4 compression.
feather.write_feather(pa.table({"lat": pa.array(lat), "lon": pa.array(lon), "iata": iata}), out / "arrowio/airports_pyarrow.feather")

# NumPy: (N, 2) lat, lon in float64 and float32; .npz of named columns, plain and compressed.
np.save(out / "pointio/airports_numpy_f64.npy", np.stack([lat, lon], axis=1))
np.save(out / "pointio/airports_numpy_f32.npy", np.stack([lat, lon], axis=1).astype(np.float32))
np.savez(out / "pointio/airports_numpy.npz", lat=lat, lon=lon)
np.savez_compressed(out / "pointio/airports_numpy_compressed.npz", lat=lat, lon=lon)

print("numpy", np.__version__, "pyarrow", pa.__version__)
for p in sorted(out.rglob("*.*")):
    print(p.relative_to(out), p.stat().st_size)
