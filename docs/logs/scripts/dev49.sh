#!/usr/bin/env bash
# The CPU face cells to commit, after dev48.sh's failing GPU-machine check (a build on more goroutines than its
# first level had builders): .ci/gpu-check; BenchmarkFaceBuild on 1, 2, 4 and 16 goroutines; BenchmarkCPUGrid on
# one core; knn run on two cores pinned to 0,1 and to 2,3.
set -u
tar xzf .carry/bin.tgz
export GEOKNN_DATA=$PWD/.data
date
.ci/gpu-check $OUT/gc 2>&1 | grep -v 'gpu_test.go:601' | sed -n '/GPU tests/,/real data/p'
grep -E "^--- FAIL" $OUT/gc/*-tests.log | head
grep -E "^(ok|FAIL|PASS)" $OUT/gc/engine-tests.log | tail -2
cd internal/engine
T=../../bin/engine.test
$T -test.run XXX -test.bench FaceBuild -test.benchtime 5x -test.cpu 1,2,4,16 2>&1 | grep Bench
$T -test.run XXX -test.bench 'CPUGrid/obs=4194304' -test.benchtime 3x -test.cpu 1 2>&1 | grep Bench
cd ../..
for cpus in 0,1 2,3; do
  echo "== taskset -c $cpus knn run --obs 2^22 --ref 2^16 --engine cpu --host-points --repeat 3 -v"
  taskset -c $cpus bin/knn run --obs 2^22 --ref 2^16 --engine cpu --host-points --repeat 3 -v 2>&1 | grep -E "query [23]|face cells|  batch"
done
