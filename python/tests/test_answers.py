"""Answers against scikit-learn's BallTree(haversine) on the real sets and
generated ones: k = 1 and 8, max_distance, radius counts and lists, and
the fitted set against itself."""

import os

import numpy as np
import pytest

import geoknn
from conftest import ENGINE, data_dir
from helpers import R, balltree, check_k, check_lists, clustered, read_csv, sphere


@pytest.fixture(scope="module")
def real():
    d = data_dir()
    cities, airports = read_csv(os.path.join(d, "cities.csv")), read_csv(os.path.join(d, "airports.csv"))
    return cities[::7], airports  # a seventh of the cities keeps BallTree quick


def sets(real):
    cities, airports = real
    return {
        "cities-airports": (cities, airports),
        "airports-cities": (airports, cities),
        "sphere": (sphere(20000, 1), sphere(3000, 2)),
        "clustered": (clustered(20000, 3), clustered(3000, 4)),
    }


@pytest.mark.parametrize("name", ["cities-airports", "airports-cities", "sphere", "clustered"])
@pytest.mark.parametrize("k", [1, 8])
def test_kneighbors_vs_balltree(real, name, k):
    obs, ref = sets(real)[name]
    want, _ = balltree(ref).query(np.radians(obs), k=k)
    dist, idx = geoknn.NearestNeighbors(n_neighbors=k, engine=ENGINE).fit(ref).kneighbors(obs)
    check_k(obs, ref, dist, idx, want * R)


@pytest.mark.parametrize("name", ["cities-airports", "clustered"])
def test_max_distance(real, name):
    obs, ref = sets(real)[name]
    limit = 150_000.0
    want, _ = balltree(ref).query(np.radians(obs), k=4)
    dist, idx = geoknn.NearestNeighbors(engine=ENGINE).fit(ref).kneighbors(obs, n_neighbors=4, max_distance=limit)
    beyond = want * R > limit + 1
    inside = want * R < limit - 1
    assert np.all(idx[beyond] == -1) and np.all(np.isinf(dist[beyond]))
    assert np.all(idx[inside] >= 0)
    np.testing.assert_array_less(np.abs(dist[inside] - want[inside] * R), 1.0)


@pytest.mark.parametrize("name", ["cities-airports", "sphere", "clustered"])
def test_radius_vs_balltree(real, name):
    obs, ref = sets(real)[name]
    obs = obs[:5000]
    radius = 200_000.0
    want_ind = balltree(ref).query_radius(np.radians(obs), r=radius / R)
    nn = geoknn.NearestNeighbors(radius=radius, engine=ENGINE).fit(ref)
    dist, ind = nn.radius_neighbors(obs)
    assert ind.dtype == object and dist.dtype == object and len(ind) == len(obs)
    check_lists(obs, ref, radius, ind, dist, want_ind)
    counts = nn.radius_neighbors_count(obs)
    assert counts.dtype == np.int64
    np.testing.assert_array_equal(counts, [len(i) for i in ind])


@pytest.mark.parametrize("name", ["airports", "clustered"])
def test_self_query(real, name):
    ref = real[1] if name == "airports" else clustered(5000, 5)
    k = 5
    want, _ = balltree(ref).query(np.radians(ref), k=k + 1)
    nn = geoknn.NearestNeighbors(n_neighbors=k, engine=ENGINE).fit(ref)
    dist, idx = nn.kneighbors()
    assert idx.shape == (len(ref), k)
    assert not np.any(idx == np.arange(len(ref))[:, None]), "own index returned"
    # Without its own index a row is the k+1 nearest less the one at 0 m
    # (or, among duplicates, one of the points at 0 m).
    check_k(ref, ref, dist, idx, want[:, 1:] * R)


def test_self_radius(real):
    ref = real[1]
    radius = 100_000.0
    nn = geoknn.NearestNeighbors(engine=ENGINE).fit(ref)
    dist, ind = nn.radius_neighbors(radius=radius)
    want = balltree(ref).query_radius(np.radians(ref), r=radius / R)
    check_lists(ref, ref, radius, ind, dist, [w[w != i] for i, w in enumerate(want)])
    counts = nn.radius_neighbors_count(radius=radius)
    np.testing.assert_array_equal(counts, [len(i) for i in ind])


def test_ties_to_lowest_index():
    ref = np.array([[10.0, 20.0], [0.0, 0.0], [10.0, 20.0], [10.0, 20.0]])
    dist, idx = geoknn.NearestNeighbors(n_neighbors=3, engine=ENGINE).fit(ref).kneighbors([[10.0, 20.0]])
    np.testing.assert_array_equal(idx, [[0, 2, 3]])
    np.testing.assert_array_equal(dist, [[0, 0, 0]])


def test_repeated_nearest_alike():
    """A query repeated with the same points reuses the worker's buffers
    (and on GPUs pins them: the GPUs then read the points and write the
    answers in place): every answer the same, bytes and all, as a
    smaller query's through the same buffer."""
    obs, ref = sphere(40000, 21), sphere(2000, 22)
    nn = geoknn.NearestNeighbors(n_neighbors=1, engine=ENGINE).fit(ref)
    first_dist, first_idx = nn.kneighbors(obs)
    want, _ = balltree(ref).query(np.radians(obs), k=1)
    check_k(obs, ref, first_dist, first_idx, want * R)
    for rows in (40000, 40000, 40000, 25000, 25000, 40000, 40000):
        dist, idx = nn.kneighbors(obs[:rows])
        assert dist.tobytes() == first_dist[:rows].tobytes() and idx.tobytes() == first_idx[:rows].tobytes()
        del dist, idx
    st = nn.last_query_stats_
    assert st["engine_seconds"] > 0 and st["convert_seconds"] > 0 and st["call_seconds"] >= st["seconds"]
    if st["engine"] == "gpu":
        assert st["pinned"] == ["points", "answers"], st.get("pin_error")
