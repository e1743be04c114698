#!/usr/bin/env bash
# The CPU face cells to commit (on 55ac65d): .ci/gpu-check (the GPU tests compare with the CPU engine and walk its
# k-d tree, now built on 16 goroutines); on the H100 host's Xeon BenchmarkCPUGrid 2^22 x 2^16 on 1, 2 (taskset)
# and 16 cores, BenchmarkFaceBuild, knn run -v against 2^16 sphere references and the cities on 16 and 2 cores;
# SciPy's cKDTree and scikit-learn's BallTree on the same points (bench/related/cpu_peers.py).
set -u
tar xzf .carry/bin.tgz
export GEOKNN_DATA=$PWD/.data
lscpu | grep -E "Model name"; date
.ci/gpu-check $OUT/gc 2>&1 | grep -v 'gpu_test.go:601' | tail -34
grep -E "^--- FAIL" $OUT/gc/*-tests.log | head
cd internal/engine
T=../../bin/engine.test
B='CPUGrid/obs=4194304'
$T -test.run XXX -test.bench $B -test.benchtime 3x -test.count 2 -test.cpu 1,16 2>&1 | grep Bench
taskset -c 0,1 $T -test.run XXX -test.bench $B -test.benchtime 3x -test.count 2 -test.cpu 2 2>&1 | grep Bench
$T -test.run XXX -test.bench FaceBuild -test.benchtime 3x -test.cpu 1,2,16 2>&1 | grep Bench
cd ../..
for r in 2^16 .data/cities.csv; do
  for c in "" "taskset -c 0,1"; do
    echo "== $c knn run --obs 2^22 --ref $r --engine cpu --host-points --repeat 3 -v --validate 20000"
    $c bin/knn run --obs 2^22 --ref $r --engine cpu --host-points --repeat 3 -v --validate 20000 2>&1 | grep -E "query [23]|index|validate|face cells|prepare|check points|batch|  query"
  done
done
python3 bench/related/cpu_peers.py 16 22 16
taskset -c 0,1 python3 bench/related/cpu_peers.py 2 22 16
python3 bench/related/cpu_peers.py 16 22 .data/cities.csv
taskset -c 0,1 python3 bench/related/cpu_peers.py 2 22 .data/cities.csv
