"""README.md's Python section runs as printed: its marked setup block
(make wheel, a venv, pip install) in a fresh $HOME, then its example fed
to the venv's interpreter, whose printed lines must be the ones the
example's comments show."""

import os
import re
import shutil
import subprocess
import sys

import pytest

from conftest import REPO


def _block(text, marker):
    m = re.search(r"^<!-- " + re.escape(marker) + r" -->\n```[a-z]*\n(.*?)^```$", text, re.S | re.M)
    assert m, f"README.md has no block marked <!-- {marker} -->"
    return m.group(1)


def test_readme_python_section(tmp_path):
    if shutil.which("make") is None or shutil.which("go") is None:
        pytest.skip("no make or go to build the wheel as the README does")
    made = subprocess.run([sys.executable, "-c", "import ensurepip, venv"], capture_output=True)
    if made.returncode != 0:
        pytest.skip("this Python has no venv/ensurepip (Debian: python3-venv)")
    with open(os.path.join(REPO, "README.md"), encoding="utf-8") as f:
        text = f.read()
    setup = _block(text, "readme-test: python-setup")
    example = _block(text, "readme-test: python")
    # The README's interpreter is /usr/bin/python3; a test run by another
    # one (the GPU machine's) uses its own, as make wheel PYTHON= does.
    script = setup.replace("/usr/bin/python3", sys.executable).replace("make wheel", f"make -s wheel PYTHON={sys.executable}")
    # A fresh $HOME for ~/geoknn-env, with Go's caches where they are (Go
    # puts them under $HOME by default: a cold build would download and
    # compile every dependency again).
    goenv = subprocess.run(["go", "env", "GOPATH", "GOMODCACHE", "GOCACHE"], capture_output=True, text=True,
                           check=True).stdout.split("\n")
    env = dict(os.environ, HOME=str(tmp_path), PIP_NO_INDEX="1", GOPATH=goenv[0], GOMODCACHE=goenv[1], GOCACHE=goenv[2])
    env.pop("GEOKNN_KNN", None)
    run = subprocess.run(["bash", "-c", "set -e\n" + script], cwd=REPO, env=env, input=example,
                         capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stdout + run.stderr
    wheels = [f for f in os.listdir(os.path.join(REPO, "python", "dist")) if f.endswith(".whl")]
    assert len(wheels) == 1
    assert os.stat(os.path.join(REPO, "python", "dist", wheels[0])).st_mode & 0o777 == 0o644
    want = [re.sub(r"\s+", " ", m.strip()) for m in re.findall(r"^print\(.*?\)\s+# (.*)$", example, re.M)]
    # The example's lines come last, after make's and pip's.
    got = [re.sub(r"\s+", " ", line.strip()) for line in run.stdout.strip().splitlines()][-len(want):]
    assert got == want, run.stderr
