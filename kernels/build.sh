#!/usr/bin/env bash
# Rebuilds each kernels/*.cu into PTX with nvcc (run on a machine with the
# CUDA toolkit; `make ptx`). Each PTX starts with the SHA-256 of its source
# (the .cu followed by every kernels/*.cuh, in name order), which
# kernels_test.go checks, so a .cu or header changed without its PTX fails CI.
# Usage: kernels/build.sh [OUTDIR]   (default: kernels/)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${1:-$here}
mkdir -p "$out"
for cu in "$here"/*.cu; do
  name=$(basename "$cu" .cu)
  sum=$(cat "$cu" $(ls "$here"/*.cuh 2>/dev/null | sort) | sha256sum | cut -d' ' -f1)
  tmp=$(mktemp)
  nvcc -ptx -arch=compute_80 -O3 -o "$tmp" "$cu"
  { echo "// geoknn-source-sha256: $sum"; echo "// built by kernels/build.sh with $(nvcc --version | tail -1)"; cat "$tmp"; } > "$out/$name.ptx"
  rm -f "$tmp"
  echo "built $out/$name.ptx"
done
