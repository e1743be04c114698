#!/usr/bin/env bash
# Copies Debian's pytest (pure Python) and what it imports into DIR, for a
# machine whose Python has NumPy but no pytest and no package index (the GPU
# machine): there,
#   PYTEST_DISABLE_PLUGIN_AUTOLOAD=1 PYTHONPATH=DIR python3 -m pytest -p no:cacheprovider python/tests
# (the variable keeps plugins installed in that Python, such as a
# pytest_timeout made for another pytest, out of this one).
set -euo pipefail
dir=${1:?usage: bundle-pytest.sh DIR}
src=/usr/lib/python3/dist-packages
mkdir -p "$dir"
for m in pytest _pytest pluggy iniconfig attr attrs packaging py py.py exceptiongroup tomli; do
	if [ -e "$src/$m" ]; then
		cp -r "$src/$m" "$dir/"
	fi
done
find "$dir" -name __pycache__ -prune -exec rm -rf {} +
