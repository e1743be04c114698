"""The suite tests the installed wheel, not the source tree: it builds the
wheel (make wheel) or takes $GEOKNN_WHEEL, installs it into a fresh
virtual environment (--system-site-packages, for NumPy and the rest), and
imports geoknn from there.

$GEOKNN_TEST_ENGINE ("auto", "cpu" or "gpu") picks the engine of every
query; $GEOKNN_DATA names the directory of cities.csv and airports.csv.
"""

import os
import shutil
import subprocess
import sys
import tempfile
import zipfile

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
ENGINE = os.environ.get("GEOKNN_TEST_ENGINE", "auto")

_tmp = None


def _wheel(tmp):
    """The wheel to test: $GEOKNN_WHEEL, or one built here."""
    wheel = os.environ.get("GEOKNN_WHEEL")
    if wheel:
        return wheel
    if shutil.which("go") is None:
        pytest.exit("no Go toolchain to build the wheel: set GEOKNN_WHEEL to a built one (make wheel)", 2)
    out = os.path.join(tmp, "dist")
    dist = os.path.join(REPO, "python", "dist")
    if shutil.which("make"):
        subprocess.run(["make", "-s", "-C", REPO, "wheel", f"PYTHON={sys.executable}"],
                       check=True, stdout=subprocess.DEVNULL)
    else:  # the Makefile's wheel target, by hand
        env = dict(os.environ, CGO_ENABLED="0")
        subprocess.run(["go", "build", "-trimpath", "-ldflags=-s -w", "-o", "python/geoknn/_bin/knn", "./cmd/knn"],
                       cwd=REPO, env=env, check=True)
        for f in os.listdir(dist) if os.path.isdir(dist) else ():
            os.remove(os.path.join(dist, f))
        subprocess.run([sys.executable, "-m", "build", "--wheel", "--no-isolation", "--skip-dependency-check",
                        "--outdir", "dist", "."], cwd=os.path.join(REPO, "python"), check=True,
                       stdout=subprocess.DEVNULL)
    (name,) = [f for f in os.listdir(dist) if f.endswith(".whl")]
    os.makedirs(out)
    return shutil.copy(os.path.join(dist, name), out)


def _install(wheel, tmp):
    """Installs wheel into a fresh venv and returns (site-packages, python);
    where this Python has no venv/ensurepip, unpacks it instead (a wheel is a
    zip) and returns (directory, None)."""
    venv = os.path.join(tmp, "venv")
    made = subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", venv],
                          capture_output=True, text=True)
    python = os.path.join(venv, "bin", "python")
    if made.returncode == 0:
        subprocess.run([python, "-m", "pip", "install", "-q", "--no-index", "--no-deps", wheel], check=True)
        site = subprocess.run([python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                              check=True, capture_output=True, text=True).stdout.strip()
        _see_parent_packages(site)
        return site, python
    site = os.path.join(tmp, "unpacked")
    with zipfile.ZipFile(wheel) as z:
        z.extractall(site)
    os.chmod(os.path.join(site, "geoknn", "_bin", "knn"), 0o755)
    print(f"geoknn tests: no venv here ({made.stderr.strip()[-200:]}): the wheel unpacked instead")
    return site, None


def _see_parent_packages(site):
    """Where this Python is itself a virtual environment (the GPU machine's
    is), a venv made from it sees the base interpreter's packages, not this
    one's NumPy: a .pth file adds this interpreter's site-packages after
    the venv's own, so the wheel's copy of geoknn still comes first."""
    if sys.prefix == sys.base_prefix:
        return
    import site as sitemod
    with open(os.path.join(site, "zz-parent-site.pth"), "w") as f:
        f.write("\n".join(sitemod.getsitepackages()) + "\n")


def pytest_configure(config):
    global _tmp
    _tmp = tempfile.mkdtemp(prefix="geoknn-wheel-")
    site, python = _install(_wheel(_tmp), _tmp)
    sys.path.insert(0, site)
    os.environ.pop("GEOKNN_KNN", None)  # the installed binary, not a development one
    config.geoknn_site, config.geoknn_python = site, python
    import geoknn

    assert geoknn.__file__.startswith(site), geoknn.__file__


def pytest_unconfigure(config):
    if _tmp:
        shutil.rmtree(_tmp, ignore_errors=True)


@pytest.fixture(scope="session")
def installed(pytestconfig):
    return pytestconfig.geoknn_site, pytestconfig.geoknn_python


def data_dir():
    """The real sets: $GEOKNN_DATA, CI's ../shared/data, the device
    machine's shared/data, the machine's
    /work/shared/data, or the sample in testdata/realdata."""
    for d in (os.environ.get("GEOKNN_DATA"), os.path.join(REPO, "..", "shared", "data"),
              os.path.join(REPO, "shared", "data"), "/work/shared/data", os.path.join(REPO, "testdata", "realdata")):
        if d and os.path.exists(os.path.join(d, "cities.csv")):
            return d
    pytest.skip("no cities.csv: set GEOKNN_DATA")
