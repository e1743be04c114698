#!/usr/bin/env bash
# The whole GPU check on the current sources; grid_query's per-lane staging and branch-free ranking against the banded build before it.
set -u
tar xzf .carry/bin.tgz
export GEOKNN_DATA=$PWD/.data
timeout 400 bash .ci/gpu-check /tmp/gc > $OUT/gc.log 2>&1; echo "gpu-check rc $?"
grep -vE "^\s*$" $OUT/gc.log | sed -n '/GPU tests/,$p' | head -40
tar czf $OUT/kernels.tgz -C /tmp/gc/ptx .
cp /tmp/gc/*-tests.log $OUT/ 2>/dev/null
for v in "new:/tmp/gc/ptx" "old:.carry/oldkb"; do
  name=${v%%:*}; d=${v#*:}
  echo "== $name"
  export GEOKNN_PTX_DIR=$d GEOKNN_SASS_DIR=$d/sass
  timeout 60 bin/knn simulate --obs 2^24 --ref 2^16 --steps 200 --replace 0.01 --quiet 2>&1 | grep -E "^steps" | sed 's/pairs.*whole/whole/'
  for gen in sphere clustered; do timeout 90 bin/knn run --obs 2^27 --ref 2^16 --gen $gen --engine gpu --repeat 3 --validate 16384 2>&1 | grep -E "query 3|validat" | sed 's/.*GPU kernels/kernels/;s/(index.*//' | sed "s/^/$gen /"; done
  timeout 120 bin/knn run --obs 2^27 --ref .data/cities.csv --engine gpu --repeat 3 --validate 16384 2>&1 | grep -E "query 3|validat" | sed 's/.*GPU kernels/kernels/;s/(index.*//' | sed "s/^/cities /"
done
