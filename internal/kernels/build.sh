#!/usr/bin/env bash
# Rebuilds each internal/kernels/*.cu with nvcc (run on a machine with the
# CUDA toolkit; `make ptx`): NAME.ptx for compute capability 8.0 (the driver
# JIT-compiles it for any newer GPU), and sass/NAME.fatbin.gz, machine code
# for sm_80, sm_86, sm_89 and sm_90, which the driver loads without compiling
# (seconds saved at every start on those GPUs). Each PTX starts with the
# SHA-256 of its sources (the .cu followed by every *.cuh, in name order) and
# sass/SUMS lists the same for each fatbin; kernels_test.go checks both, so a
# .cu or header changed without its build output fails CI.
# Usage: internal/kernels/build.sh [OUTDIR]   (default: internal/kernels/)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${1:-$here}
mkdir -p "$out/sass"
archs="80 86 89 90"
gencode=""
for a in $archs; do gencode="$gencode -gencode arch=compute_$a,code=sm_$a"; done
sums=$(mktemp)
for cu in "$here"/*.cu; do
  name=$(basename "$cu" .cu)
  sum=$(cat "$cu" $(ls "$here"/*.cuh 2>/dev/null | sort) | sha256sum | cut -d' ' -f1)
  tmp=$(mktemp)
  nvcc -ptx -arch=compute_80 -O3 -o "$tmp" "$cu"
  { echo "// geoknn-source-sha256: $sum"; echo "// built by internal/kernels/build.sh with $(nvcc --version | tail -1)"; cat "$tmp"; } > "$out/$name.ptx"
  nvcc -fatbin -O3 $gencode -o "$tmp" "$cu"
  gzip -9n < "$tmp" > "$out/sass/$name.fatbin.gz"
  echo "$sum  $name.fatbin.gz" >> "$sums"
  rm -f "$tmp"
  echo "built $out/$name.ptx and $out/sass/$name.fatbin.gz (sm_${archs// /, sm_})"
done
sort -k2 "$sums" > "$out/sass/SUMS"
rm -f "$sums"
