"""The estimator's surface: input types, shapes and dtypes, parameters,
graphs, sjoin_nearest and errors."""

import pickle

import numpy as np
import pytest

import geoknn
from conftest import ENGINE
from helpers import haversine_m, sphere

REF = sphere(500, 11)
OBS = sphere(300, 12)


@pytest.fixture(scope="module")
def want():
    return geoknn.NearestNeighbors(n_neighbors=3, engine=ENGINE).fit(REF).kneighbors(OBS)


def nn(**kw):
    return geoknn.NearestNeighbors(engine=ENGINE, **kw)


def test_shapes_and_dtypes(want):
    dist, idx = want
    assert dist.shape == idx.shape == (300, 3)
    assert dist.dtype == np.float64 and idx.dtype == np.int64
    assert dist.flags.writeable and idx.flags.c_contiguous
    only = nn(n_neighbors=3).fit(REF).kneighbors(OBS, return_distance=False)
    np.testing.assert_array_equal(only, idx)
    d1, i1 = nn().fit(REF).kneighbors(OBS[:1], n_neighbors=1)
    assert d1.shape == i1.shape == (1, 1)
    d0, i0 = nn().fit(REF).kneighbors(np.empty((0, 2)), n_neighbors=2)
    assert d0.shape == i0.shape == (0, 2)


def test_units_radians(want):
    got = nn(n_neighbors=3, units="radians").fit(np.radians(REF)).kneighbors(np.radians(OBS))
    np.testing.assert_array_equal(got[1], want[1])
    np.testing.assert_allclose(got[0], want[0], atol=1e-6)


@pytest.mark.parametrize("kind", ["list", "float32", "fortran", "strided"])
def test_array_inputs(want, kind):
    conv = {
        "list": lambda a: a.tolist(),
        "float32": lambda a: a.astype(np.float32),
        "fortran": np.asfortranarray,
        "strided": lambda a: np.repeat(a, 2, axis=1)[:, ::2],
    }[kind]
    dist, idx = nn(n_neighbors=3).fit(conv(REF)).kneighbors(conv(OBS))
    if kind == "float32":  # the points moved by float32 rounding: within 1 m
        np.testing.assert_allclose(dist, want[0], atol=2.0)
    else:
        np.testing.assert_array_equal(idx, want[1])


def test_dataframe_input(want):
    pd = pytest.importorskip("pandas", reason="pandas is not installed")
    ref = pd.DataFrame({"name": range(len(REF)), "Latitude": REF[:, 0], "LNG": REF[:, 1]})
    obs = pd.DataFrame({"lon": OBS[:, 1], "lat": OBS[:, 0]})
    dist, idx = nn(n_neighbors=3).fit(ref).kneighbors(obs)
    np.testing.assert_array_equal(idx, want[1])
    with pytest.raises(ValueError, match="exactly one latitude"):
        nn().fit(pd.DataFrame({"x": [1.0], "lon": [2.0]}))
    with pytest.raises(ValueError, match="exactly one longitude"):
        nn().fit(pd.DataFrame({"lat": [1.0], "lon": [2.0], "lng": [2.0]}))


def test_geopandas_input(want):
    gpd = pytest.importorskip("geopandas", reason="GeoPandas is not installed")
    ref = gpd.GeoDataFrame({"i": range(len(REF))}, geometry=gpd.points_from_xy(REF[:, 1], REF[:, 0]), crs="EPSG:4326")
    obs = gpd.GeoSeries(gpd.points_from_xy(OBS[:, 1], OBS[:, 0]), crs="OGC:CRS84")
    np.testing.assert_array_equal(nn(n_neighbors=3).fit(ref).kneighbors(obs)[1], want[1])
    nocrs = gpd.GeoSeries(gpd.points_from_xy(OBS[:, 1], OBS[:, 0]))
    np.testing.assert_array_equal(nn(n_neighbors=3).fit(ref).kneighbors(nocrs)[1], want[1])
    with pytest.raises(ValueError, match="EPSG:3857"):
        nn().fit(ref.to_crs("EPSG:3857"))
    shapely = pytest.importorskip("shapely.geometry")
    with pytest.raises(ValueError, match="geometry row 1"):
        nn().fit(gpd.GeoSeries([shapely.Point(0, 0), shapely.LineString([(0, 0), (1, 1)])], crs="EPSG:4326"))


def test_arrow_input(want):
    pa = pytest.importorskip("pyarrow", reason="pyarrow is not installed")
    ref = pa.table({"lat": REF[:, 0], "lon": REF[:, 1]})
    obs = pa.table({"latitude": OBS[:, 0], "longitude": OBS[:, 1]})
    np.testing.assert_array_equal(nn(n_neighbors=3).fit(ref).kneighbors(obs)[1], want[1])


def test_params_and_clone():
    est = nn(n_neighbors=4, radius=1000.0)
    assert est.get_params() == {"engine": ENGINE, "gpus": 0, "n_neighbors": 4, "radius": 1000.0, "units": "degrees"}
    assert est.set_params(n_neighbors=2) is est and est.n_neighbors == 2
    with pytest.raises(ValueError, match="invalid parameter"):
        est.set_params(metric="euclidean")
    base = pytest.importorskip("sklearn.base", reason="scikit-learn is not installed")
    copy = base.clone(est)
    assert copy is not est and copy.get_params() == est.get_params()
    assert "n_neighbors=2" in repr(est)


def test_pickle(want):
    est = pickle.loads(pickle.dumps(nn(n_neighbors=3).fit(REF)))
    np.testing.assert_array_equal(est.kneighbors(OBS)[1], want[1])


def test_graphs():
    sparse = pytest.importorskip("scipy.sparse", reason="SciPy is not installed")
    est = nn(n_neighbors=2, radius=2_000_000.0).fit(REF)
    g = est.radius_neighbors_graph(OBS, mode="distance")
    assert sparse.issparse(g) and g.format == "csr" and g.shape == (300, 500)
    dist, ind = est.radius_neighbors(OBS)
    row = g.getrow(7)
    np.testing.assert_array_equal(row.indices, ind[7])
    np.testing.assert_array_equal(row.data, dist[7])
    c = est.radius_neighbors_graph(OBS)
    assert np.all(c.data == 1.0) and c.nnz == g.nnz
    k = est.kneighbors_graph(OBS, mode="distance")
    d, i = est.kneighbors(OBS)
    assert k.shape == (300, 500) and k.nnz == 600
    np.testing.assert_array_equal(k.getrow(3).toarray()[0, i[3]], d[3])
    with pytest.raises(ValueError, match="mode"):
        est.radius_neighbors_graph(OBS, mode="weights")


def test_radius_return_distance_false():
    est = nn(radius=1e6).fit(REF)
    ind = est.radius_neighbors(OBS[:5], return_distance=False)
    assert ind.dtype == object and len(ind) == 5
    assert all(a.dtype == np.int64 for a in ind)


def test_radius_nothing_found():
    """A radius that holds no reference for any observation: empty lists
    (the worker once crashed on an answer with no rows)."""
    est = nn().fit(REF)
    for radius in (0, 1.0):
        d, i = est.radius_neighbors(OBS, radius=radius)
        assert d.shape == i.shape == (300,) and all(len(r) == 0 for r in i)
    G = est.radius_neighbors_graph(OBS, radius=1.0, mode="distance")
    assert G.shape == (300, 500) and G.nnz == 0


def test_sjoin_nearest():
    gpd = pytest.importorskip("geopandas", reason="GeoPandas is not installed")
    right = gpd.GeoDataFrame({"name": ["CDG", "LHR", "BER"], "code": [1, 2, 3]},
                             geometry=gpd.points_from_xy([2.55, -0.45, 13.50], [49.01, 51.47, 52.36]),
                             crs="EPSG:4326", index=[10, 20, 30])
    left = gpd.GeoDataFrame({"name": ["Paris", "London", "Reykjavik"]},
                            geometry=gpd.points_from_xy([2.35, -0.13, -21.9], [48.85, 51.51, 64.15]), crs="EPSG:4326")
    out = geoknn.sjoin_nearest(left, right, distance_col="dist_m", engine=ENGINE)
    assert list(out.columns) == ["name_left", "geometry", "index_right", "name_right", "code", "dist_m"]
    assert isinstance(out, gpd.GeoDataFrame) and out.crs == left.crs
    assert out["index_right"].tolist() == [10, 20, 20]
    want = haversine_m(np.array([48.85, 2.35]), np.array([49.01, 2.55]))
    assert abs(out["dist_m"].iloc[0] - want) < 1
    near = geoknn.sjoin_nearest(left, right, max_distance=500_000, engine=ENGINE)
    assert len(near) == 3 and np.isnan(near["code"].iloc[2])
    inner = geoknn.sjoin_nearest(left, right, how="inner", max_distance=500_000, engine=ENGINE)
    assert inner["name_left"].tolist() == ["Paris", "London"]
    with pytest.raises(ValueError, match="how"):
        geoknn.sjoin_nearest(left, right, how="right")
    with pytest.raises(ValueError, match="CRS"):
        geoknn.sjoin_nearest(left.to_crs("EPSG:3857"), right)


def test_errors():
    est = nn(n_neighbors=3)
    with pytest.raises((AttributeError, ValueError), match="not fitted"):
        est.kneighbors(OBS)
    with pytest.raises(ValueError, match=r"reference row 2: latitude 91\.0"):
        est.fit([[0, 0], [1, 1], [91, 0]])
    assert not hasattr(est, "n_samples_fit_"), "a refused fit left the estimator fitted"
    with pytest.raises(ValueError, match=r"observation row 1: latitude nan"):
        nn().fit(REF).kneighbors([[0, 0], [np.nan, 0]])
    with pytest.raises(ValueError, match=r"row 0: .*longitude 181"):
        nn().fit(REF).kneighbors([[0, 181]])
    with pytest.raises(ValueError, match="shape"):
        est.fit(np.zeros((3, 3)))
    with pytest.raises(ValueError, match="complex"):
        nn().fit(REF).kneighbors(OBS.astype(complex))
    with pytest.raises(ValueError, match="no reference points"):
        est.fit(np.zeros((0, 2)))
    fitted = nn(n_neighbors=3).fit(REF[:3])
    with pytest.raises(ValueError, match="n_neighbors=4"):
        fitted.kneighbors(OBS, n_neighbors=4)
    with pytest.raises(ValueError, match="n_neighbors=3: want 1 to 2"):
        fitted.kneighbors()
    with pytest.raises(ValueError, match="one fitted point has no neighbour"):
        nn(n_neighbors=1).fit(REF[:1]).kneighbors()
    with pytest.raises(ValueError, match="max_distance"):
        fitted.kneighbors(OBS, n_neighbors=1, max_distance=-1)
    with pytest.raises(ValueError, match="radius"):
        fitted.radius_neighbors(OBS)
    with pytest.raises(ValueError, match="radius"):
        fitted.radius_neighbors(OBS, radius=float("inf"))
    with pytest.raises(ValueError, match="engine"):
        nn().set_params(engine="tpu").fit(REF)
    with pytest.raises(ValueError, match="units"):
        geoknn.NearestNeighbors(units="grads").fit(REF)
    # The worker lives on after every refusal.
    assert nn().fit(REF).kneighbors(OBS[:2])[1].shape == (2, 5)
