#!/usr/bin/env bash
# Sessions on the face cells (uncommitted on 5aef39e): .ci/gpu-check, the session tests' notes, knn simulate
# 2^24 x 2^16 (1% replaced, and none) three times each, the headline runs (sphere, cities; third query).
set -u
tar xzf .carry/bin.tgz
export GEOKNN_DATA=$PWD/.data
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date
.ci/gpu-check $OUT/gc 2>&1
grep -E "gpu_cells_test|--- FAIL|session_test.go.*step [67]" $OUT/gc/engine-tests.log | head -40
export GEOKNN_PTX_DIR=$OUT/gc/ptx GEOKNN_SASS_DIR=$OUT/gc/ptx/sass
for rep in 0.01 0; do
  for i in 1 2 3; do
    echo "== knn simulate --obs 2^24 --ref 2^16 --steps 100 --dt 60 --replace $rep"
    bin/knn simulate --obs 2^24 --ref 2^16 --steps 100 --dt 60 --replace $rep --quiet --validate 16384 2>&1 | grep -E "steps:|step phases|validate"
  done
done
F="query 3|index:|validate"
for r in "2^16" .data/cities.csv; do
  echo "== knn run --obs 2^27 --ref $r --engine gpu --repeat 3 --validate 16384"
  bin/knn run --obs 2^27 --ref $r --engine gpu --repeat 3 --validate 16384 2>&1 | grep -E "$F"
done
