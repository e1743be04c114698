#!/usr/bin/env bash
# The face-cell builders padded apart (two goroutines' build took 4.5 times one's in dev49.sh): BenchmarkFaceBuild
# on 1, 2, 4 and 16 goroutines; BenchmarkCPUGrid 2^22 x 2^16 on 1, 2 (taskset) and 16 cores; knn run against
# 2^16 sphere references and the cities on 16 and 2 cores.
set -u
tar xzf .carry/bin.tgz
export GEOKNN_DATA=$PWD/.data
date
cd internal/engine
T=../../bin/engine.test
$T -test.run XXX -test.bench FaceBuild -test.benchtime 5x -test.cpu 1,2,4,16 2>&1 | grep Bench
$T -test.run XXX -test.bench 'CPUGrid/obs=4194304' -test.benchtime 3x -test.count 2 -test.cpu 1,16 2>&1 | grep Bench
taskset -c 0,1 $T -test.run XXX -test.bench 'CPUGrid/obs=4194304' -test.benchtime 3x -test.count 2 -test.cpu 2 2>&1 | grep Bench
cd ../..
for r in 2^16 .data/cities.csv; do
  for c in "" "taskset -c 0,1"; do
    echo "== $c knn run --obs 2^22 --ref $r --engine cpu --host-points --repeat 3 -v --validate 20000"
    $c bin/knn run --obs 2^22 --ref $r --engine cpu --host-points --repeat 3 -v --validate 20000 2>&1 | grep -E "query [23]|index|validate|face cells|prepare|check points|  batch"
  done
done
