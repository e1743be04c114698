"""Shared by the tests: reference answers from scikit-learn's BallTree and
a float64 haversine."""

import csv

import numpy as np
import pytest

R = 6_371_008.8


def read_csv(path):
    with open(path, newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    return np.array([[float(r["lat"]), float(r["lon"])] for r in rows])


def sphere(n, seed):
    rng = np.random.default_rng(seed)
    z = rng.uniform(-1, 1, n)
    return np.c_[np.degrees(np.arcsin(z)), rng.uniform(-180, 180, n)]


def clustered(n, seed):
    """Points crowded around a few centres, with exact duplicates (ties)."""
    rng = np.random.default_rng(seed)
    centres = sphere(8, seed + 1)
    p = centres[rng.integers(0, 8, n)] + rng.normal(0, 0.5, (n, 2))
    p[:, 0] = np.clip(p[:, 0], -90, 90)
    p[:, 1] = (p[:, 1] + 180) % 360 - 180
    p[n // 2:n // 2 + n // 10] = p[:n // 10]  # duplicates
    return p


def haversine_m(a, b):
    """Float64 haversine in metres between rows of a and b (degrees)."""
    la, lo = np.radians(a[..., 0]), np.radians(a[..., 1])
    lb, lob = np.radians(b[..., 0]), np.radians(b[..., 1])
    h = np.sin((lb - la) / 2) ** 2 + np.cos(la) * np.cos(lb) * np.sin((lob - lo) / 2) ** 2
    return 2 * R * np.arcsin(np.sqrt(np.minimum(h, 1)))


def balltree(ref):
    neighbors = pytest.importorskip("sklearn.neighbors", reason="scikit-learn is not installed")
    return neighbors.BallTree(np.radians(ref), metric="haversine")


def check_k(obs, ref, dist, idx, want_dist_m):
    """Every answer within 1 m of the true k-th distance, its distance
    within 1 m of the float64 haversine of the reference it names."""
    assert dist.shape == idx.shape == want_dist_m.shape
    assert dist.dtype == np.float64 and idx.dtype == np.int64
    np.testing.assert_array_less(np.abs(dist - want_dist_m), 1.0)
    true = haversine_m(obs[:, None, :], ref[idx])
    np.testing.assert_array_less(np.abs(dist - true), 1.0)
    assert np.all(np.diff(dist, axis=1) >= 0), "rows not nearest first"


def check_lists(obs, ref, radius, ind, dist, want_ind):
    """Lists equal to BallTree's but for references within 1 m of the
    radius; nearest first; distances within 1 m."""
    for i in range(len(obs)):
        got, want = set(ind[i].tolist()), set(want_ind[i].tolist())
        for j in got ^ want:
            assert abs(haversine_m(obs[i], ref[j]) - radius) <= 1.0, (i, j)
        if len(ind[i]):
            true = haversine_m(obs[i][None, :], ref[ind[i]])
            np.testing.assert_array_less(np.abs(dist[i] - true), 1.0)
            assert np.all(np.diff(dist[i]) >= 0)
