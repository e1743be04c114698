#!/usr/bin/env bash
# CPU face cells, the build to commit (uncommitted on 55ac65d): .ci/gpu-check (the GPU tests compare with the CPU
# engine), then on the host's Xeon BenchmarkCPUGrid 2^22 x 2^16 on 1, 2 (taskset) and 16 cores, BenchmarkFaceBuild,
# and knn run 2^22 against 2^16 sphere references and against the cities, on 16 and on 2 cores.
set -u
tar xzf .carry/bin.tgz
export GEOKNN_DATA=$PWD/.data
lscpu | grep -E "Model name"; date
.ci/gpu-check $OUT/gc 2>&1 | grep -v 'gpu_test.go:601' | tail -40
grep -E "^--- FAIL" $OUT/gc/*-tests.log | head
cd internal/engine
T=../../bin/engine.test
B='CPUGrid/obs=4194304'
$T -test.run XXX -test.bench $B -test.benchtime 3x -test.count 2 -test.cpu 1,16 2>&1 | grep Bench
taskset -c 0,1 $T -test.run XXX -test.bench $B -test.benchtime 3x -test.count 2 -test.cpu 2 2>&1 | grep Bench
$T -test.run XXX -test.bench FaceBuild -test.benchtime 3x -test.cpu 1,16 2>&1 | grep Bench
cd ../..
for r in 2^16 .data/cities.csv; do
  echo "== knn run --obs 2^22 --ref $r --engine cpu --host-points: 16 cores, then 2 (taskset -c 0,1)"
  bin/knn run --obs 2^22 --ref $r --engine cpu --host-points --repeat 3 --validate 20000 2>&1 | grep -E "query [23]|index|validate"
  taskset -c 0,1 bin/knn run --obs 2^22 --ref $r --engine cpu --host-points --repeat 3 2>&1 | grep -E "query [23]|index"
done
