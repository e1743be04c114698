#!/usr/bin/env bash
# After the review of the CPU face cells (cells without a list answered by the k-d tree, the cell limit checked
# level by level, the trigonometry in Go under GOAMD64=v3, the tree's build goroutines bounded by GOMAXPROCS):
# .ci/gpu-check, then BenchmarkCPUGrid 2^22 x 2^16 on 1, 2 (taskset) and 16 cores and knn run against the cities.
set -u
tar xzf .carry/bin.tgz
export GEOKNN_DATA=$PWD/.data
date
.ci/gpu-check $OUT/gc > $OUT/gc.log 2>&1
grep -v 'gpu_test.go:601' $OUT/gc.log | grep -E "^==|passed|skipped|FAILED|identical|differ|validate|PASS" | head -40
grep -E "^--- FAIL" $OUT/gc/*-tests.log | head
cd internal/engine
T=../../bin/engine.test
$T -test.run XXX -test.bench 'CPUGrid/obs=4194304' -test.benchtime 3x -test.cpu 1,16 2>&1 | grep Bench
taskset -c 0,1 $T -test.run XXX -test.bench 'CPUGrid/obs=4194304' -test.benchtime 3x -test.cpu 2 2>&1 | grep Bench
cd ../..
for c in "" "taskset -c 0,1"; do
  echo "== $c knn run --obs 2^22 --ref .data/cities.csv --engine cpu --host-points --repeat 3 --validate 20000"
  $c bin/knn run --obs 2^22 --ref .data/cities.csv --engine cpu --host-points --repeat 3 --validate 20000 2>&1 | grep -E "query [23]|index|validate"
done
