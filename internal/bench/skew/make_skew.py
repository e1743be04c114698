#!/usr/bin/env python3
"""Skewed point sets for the CPU index benchmarks (BENCHMARKS.md, "Skewed
references on the CPU"): uniform in small caps around Berlin and uniform on
the sphere, as lat,lon CSV. Python standard library only; seed fixed.
Usage: make_skew.py OUTDIR"""
import math
import pathlib
import random
import sys

R = 6371008.8
rng = random.Random(3)


def cap(n, lat0, lon0, radius_m):
    """n points uniform in the cap of radius_m around (lat0, lon0), flat approximation."""
    pts = []
    for _ in range(n):
        r = math.sqrt(rng.random()) * radius_m / R
        th = rng.random() * 2 * math.pi
        lat = lat0 + math.degrees(r * math.cos(th))
        pts.append((lat, lon0 + math.degrees(r * math.sin(th)) / math.cos(math.radians(lat0))))
    return pts


def write(path, pts):
    with open(path, "w") as f:
        f.write("lat,lon\n")
        f.write("".join(f"{a:.9f},{b:.9f}\n" for a, b in pts))


out = pathlib.Path(sys.argv[1])
out.mkdir(parents=True, exist_ok=True)
write(out / "ref_region.csv", cap(65536, 52.5, 13.4, 300e3))
write(out / "obs_region.csv", cap(1 << 20, 52.5, 13.4, 300e3))
write(out / "ref_tight.csv", cap(65536, 52.5, 13.4, 10))
write(out / "obs_world.csv", [(math.degrees(math.asin(rng.uniform(-1, 1))), rng.uniform(-180, 180)) for _ in range(1 << 20)])
write(out / "obs_near_tight.csv", cap(1 << 20, 52.5, 13.4, 1000))
