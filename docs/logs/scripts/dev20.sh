#!/usr/bin/env bash
# The k-d tree query (tree.cu) and grid_query's two cooperative passes: build every kernel file, GPU tests, timings.
set -u
tar xzf .carry/bin.tgz
K=internal/kernels
mkdir -p /tmp/kb
internal/kernels/build.sh /tmp/kb > /tmp/build.log 2>&1; echo "build rc $?"; grep -iE "error|warning" /tmp/build.log | head -20
tar czf $OUT/kernels.tgz -C /tmp/kb .
for f in grid tree; do nvcc -cubin -arch=sm_90 -O3 -Xptxas -v -o /tmp/x.cubin $K/$f.cu 2>&1 | grep -A1 -E "_query" | grep -E "registers|stack" | sed "s/^/$f /"; done
export GEOKNN_PTX_DIR=/tmp/kb GEOKNN_SASS_DIR=/tmp/kb/sass GEOKNN_DATA=$PWD/.data
(cd internal/engine && timeout 300 ../../bin/engine.test -test.run 'TestGPUTree|TestGPUMatchesCPU|TestGPUCitiesAirports|TestGridFallsBack|TestGPUNeighboursMatchCPU' -test.v -test.count=1 > /tmp/eng.log 2>&1; echo "engine tests rc $?"; grep -E "^(--- |FAIL|ok|PASS)|k-d tree|gpu_test.go:3[0-9][0-9]" /tmp/eng.log | head -60)
cp /tmp/eng.log $OUT/eng.log
echo "== timings"
timeout 60 bin/knn simulate --obs 2^24 --ref 2^16 --steps 200 --replace 0.01 --quiet 2>&1 | grep -E "^steps" | sed 's/pairs.*whole/whole/'
for gen in sphere clustered; do timeout 90 bin/knn run --obs 2^27 --ref 2^16 --gen $gen --engine gpu --repeat 3 --validate 16384 2>&1 | grep -E "query 3|validat|index|plan" | sed 's/.*GPU kernels/kernels/' | sed "s/^/$gen /"; done
timeout 90 bin/knn run --obs 2^27 --ref 2^16 --gen clustered --grid-side 42 --engine gpu --repeat 3 2>&1 | grep -E "query 3|index" | sed 's/.*GPU kernels/kernels/' | sed "s/^/clustered grid42 /"
timeout 120 bin/knn run --obs 2^27 --ref .data/cities.csv --engine gpu --repeat 3 --validate 16384 2>&1 | grep -E "query 3|validat|index|plan" | sed 's/.*GPU kernels/kernels/' | sed "s/^/cities /"
timeout 120 bin/knn run --obs 2^27 --ref .data/cities.csv --grid-side 30 --engine gpu --repeat 3 2>&1 | grep -E "query 3|index" | sed 's/.*GPU kernels/kernels/' | sed "s/^/cities grid30 /"
timeout 120 bin/knn run --obs 2^27 --ref .data/airports.csv --engine gpu --repeat 3 --validate 16384 2>&1 | grep -E "query 3|validat|index" | sed 's/.*GPU kernels/kernels/' | sed "s/^/airports /"
timeout 120 bin/knn run --obs .data/airports.csv --ref .data/cities.csv --engine gpu --validate 100000 2>&1 | grep -E "query|validat|index" | sed "s/^/airports->cities /"
