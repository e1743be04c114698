#!/usr/bin/env bash
# Review of the face cells (uncommitted on f4adad4): cells.cu's shared warp argmin, corner test and give-up path;
# the session's cells note through the stage times; test helpers. ptxas resources, .ci/gpu-check, the cities and
# sphere headline runs (third query).
set -u
tar xzf .carry/bin.tgz
export GEOKNN_DATA=$PWD/.data
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date
nvcc -cubin -arch=sm_90 -O3 -Xptxas -v -o /tmp/cells.cubin internal/kernels/cells.cu 2>&1 | grep -E "error|registers|spill" | head -12
[ -s /tmp/cells.cubin ] || { echo "cells.cu did not compile"; exit 1; }
.ci/gpu-check $OUT/gc 2>&1 | grep -v 'gpu_test.go:601'
grep -E "^--- FAIL|session_test.go:.*step [67]:" $OUT/gc/engine-tests.log | head -12
(cd $OUT/gc/ptx && tar czf $OUT/kernels.tgz .)
export GEOKNN_PTX_DIR=$OUT/gc/ptx GEOKNN_SASS_DIR=$OUT/gc/ptx/sass
for r in "2^16" .data/cities.csv; do
  echo "== knn run --obs 2^27 --ref $r --engine gpu --repeat 3 --validate 16384"
  bin/knn run --obs 2^27 --ref $r --engine gpu --repeat 3 --validate 16384 2>&1 | grep -E "query 3|index:|validate"
done
