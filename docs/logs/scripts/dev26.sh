#!/usr/bin/env bash
# The whole GPU check on the final sources (patched session records queried apart, review mends), then the session and skew figures.
set -u
tar xzf .carry/bin.tgz
export GEOKNN_DATA=$PWD/.data
timeout 330 bash .ci/gpu-check /tmp/gc > $OUT/gc.log 2>&1; echo "gpu-check rc $?"
grep -vE "^\s*$" $OUT/gc.log | sed -n '/GPU tests/,$p' | head -40
grep -E "^--- FAIL" -A8 /tmp/gc/*-tests.log | head -40
tar czf $OUT/kernels.tgz -C /tmp/gc/ptx .
cp /tmp/gc/*-tests.log $OUT/ 2>/dev/null
export GEOKNN_PTX_DIR=/tmp/gc/ptx GEOKNN_SASS_DIR=/tmp/gc/ptx/sass
for r in 1 2; do timeout 60 bin/knn simulate --obs 2^24 --ref 2^16 --steps 200 --replace 0.01 --quiet 2>&1 | grep -E "^steps|phases" | sed 's/pairs.*whole/whole/'; done
timeout 60 bin/knn simulate --obs 2^24 --ref 2^16 --steps 100 --replace 0 --quiet 2>&1 | grep -E "^steps" | sed 's/pairs.*whole/whole/;s/^/replace 0 /'
timeout 90 bin/knn run --obs 2^27 --ref .data/cities.csv --engine gpu --repeat 3 --validate 16384 2>&1 | grep -E "query 3|validat" | sed 's/.*GPU kernels/kernels/;s/(index.*//;s/^/cities /'
