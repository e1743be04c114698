"""geoknn.Client against a real `knn serve` on loopback (the installed
wheel's binary, CPU engine): its answers equal NearestNeighbors' on the
same references, before and after moves, and refusals name the field."""

import os
import subprocess
import tempfile
import time

import numpy as np
import pytest

from helpers import sphere


@pytest.fixture(scope="module")
def server(installed):
    site, _ = installed
    knn = os.path.join(site, "geoknn", "_bin", "knn")
    tmp = tempfile.mkdtemp(prefix="geoknn-serve-")
    refs = sphere(3000, 11)
    path = os.path.join(tmp, "refs.csv")
    with open(path, "w") as f:
        f.write("id,lat,lon\n")
        for i, (la, lo) in enumerate(refs):
            f.write(f"car-{i},{la!r},{lo!r}\n")
    ready = os.path.join(tmp, "addr")
    proc = subprocess.Popen([knn, "serve", "--ref", path, "--ref-id", "id", "--engine", "cpu",
                             "--addr", "127.0.0.1:0", "--ready-file", ready],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    for _ in range(300):
        if os.path.exists(ready) and os.path.getsize(ready) > 0:
            break
        if proc.poll() is not None:
            pytest.fail(f"knn serve ended: {proc.stderr.read().decode()}")
        time.sleep(0.05)
    with open(ready) as f:
        url = "http://" + f.read().strip()
    yield url, refs
    proc.terminate()
    assert proc.wait(timeout=30) == 0, proc.stderr.read().decode()


def test_client_matches_nearest_neighbors(server):
    import geoknn

    url, refs = server
    X = sphere(200, 12)
    c = geoknn.Client(url)
    nn = geoknn.NearestNeighbors(n_neighbors=4, engine="cpu").fit(refs)
    d, i = c.kneighbors(X, n_neighbors=4)
    dw, iw = nn.kneighbors(X)
    np.testing.assert_array_equal(i, iw)
    np.testing.assert_allclose(d, dw, atol=0.01)
    assert c.ids_[0, 0] == f"car-{i[0, 0]}"
    d1, i1 = c.nearest(X)
    np.testing.assert_array_equal(i1, iw[:, 0])
    # max_distance cuts rows: inf and -1, as NearestNeighbors'.
    d, i = c.kneighbors(X, n_neighbors=4, max_distance=150e3)
    dw, iw = nn.kneighbors(X, n_neighbors=4, max_distance=150e3)
    np.testing.assert_array_equal(i, iw)
    rd, ri = c.radius_neighbors(X[:20], radius=300e3)
    rdw, riw = nn.radius_neighbors(X[:20], radius=300e3)
    for a, b in zip(ri, riw):
        np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(c.radius_neighbors_count(X, radius=300e3), nn.radius_neighbors_count(X, radius=300e3))
    assert c.health()["references"] == len(refs)


def test_client_moves_and_errors(server):
    import geoknn

    url, refs = server
    c = geoknn.Client(url)
    v0 = c.health()["version"]
    v = c.move(["car-5"], [[10.0, 20.0]])
    assert v == v0 + 1
    d, i = c.nearest([[10.0, 20.0]])
    assert i[0] == 5 and d[0] < 0.01 and c.version_ >= v
    with pytest.raises(geoknn.ServerError) as e:
        c.move(["no-such-car"], [[0.0, 0.0]])
    assert e.value.status == 422 and e.value.field == "id"
    with pytest.raises(geoknn.ServerError) as e:
        c.kneighbors([[95.0, 0.0]], n_neighbors=1)
    assert e.value.field == "lat"
    c.move(["car-5"], [refs[5]])
