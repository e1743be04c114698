#!/usr/bin/env bash
# The build of dev52.sh again (the level build no longer writes a failure slot shared by all its goroutines at
# every cell): BenchmarkCPUGrid 2^22 x 2^16 three times on 1, 2 (taskset) and 16 cores, BenchmarkFaceBuild on 1,
# 2 and 16 goroutines, knn run -v against 2^16 sphere references and the cities on 16 and 2 cores.
set -u
tar xzf .carry/bin.tgz
export GEOKNN_DATA=$PWD/.data
date
cd internal/engine
T=../../bin/engine.test
$T -test.run XXX -test.bench 'CPUGrid/obs=4194304' -test.benchtime 3x -test.count 3 -test.cpu 1,16 2>&1 | grep Bench
taskset -c 0,1 $T -test.run XXX -test.bench 'CPUGrid/obs=4194304' -test.benchtime 3x -test.count 3 -test.cpu 2 2>&1 | grep Bench
$T -test.run XXX -test.bench FaceBuild -test.benchtime 5x -test.cpu 1,2,16 2>&1 | grep Bench
cd ../..
for r in 2^16 .data/cities.csv; do
  for c in "" "taskset -c 0,1"; do
    echo "== $c knn run --obs 2^22 --ref $r --engine cpu --host-points --repeat 3 -v"
    $c bin/knn run --obs 2^22 --ref $r --engine cpu --host-points --repeat 3 -v 2>&1 | grep -E "query [23]|index|face cells|prepare|check points|  batch"
  done
done
