#!/usr/bin/env bash
# The review's build (the k-d tree the same on any goroutines, its own arrays as the selection's scratch, the
# pool's survivors resumed after an early split not taken) on whatever card nvidia-h200 brings: .ci/gpu-check,
# the session and GPU headline runs, then on the host's CPU BenchmarkCPUGrid 2^22 x 2^16 on 1, 16 and 2 (taskset)
# cores against HEAD e5411c8 (old) interleaved, and knn run against the sphere and the cities on 16 and 2 cores.
set -u
tar xzf .carry/bin.tgz
gunzip -f .carry/dev65/engine.old.gz && chmod +x .carry/dev65/engine.old
export GEOKNN_DATA=$PWD/.data
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; lscpu | grep -E "Model name"; date
.ci/gpu-check "$OUT/gc" 2>&1 | tail -40
for k in 1 2 3; do
  echo "== knn simulate --obs 2^24 --ref 2^16 --steps 100 --dt 60 --replace 0.01"
  bin/knn simulate --obs 2^24 --ref 2^16 --steps 100 --dt 60 --replace 0.01 2>&1 | grep -E "steps:|step phases"
done
for r in "2^16" .data/cities.csv; do
  echo "== knn run --obs 2^27 --ref $r --engine gpu --repeat 3 --validate 16384"
  bin/knn run --obs 2^27 --ref $r --engine gpu --repeat 3 --validate 16384 2>&1 | grep -E "query 3|index:|validate"
done
cd internal/engine
for round in 1 2; do
  for v in old new; do
    T=../../.carry/dev65/engine.old; [ $v = new ] && T=../../bin/engine.test
    echo "== CPUGrid: $v"
    $T -test.run XXX -test.bench 'CPUGrid/obs=4194304' -test.benchtime 3x -test.cpu 1,16 | grep Bench
    taskset -c 0,1 $T -test.run XXX -test.bench 'CPUGrid/obs=4194304' -test.benchtime 3x -test.cpu 2 | grep Bench
  done
done
cd ../..
for ref in 2^16 .data/cities.csv; do
  echo "== knn run --obs 2^22 --ref $ref --engine cpu --host-points --repeat 3 -v --validate 20000 (16 cores, then taskset 2)"
  bin/knn run --obs 2^22 --ref $ref --engine cpu --host-points --repeat 3 -v --validate 20000 2>&1 | grep -E "query [123]|index|validate|check points|prepare|k-d tree|face cells|  query"
  taskset -c 0,1 bin/knn run --obs 2^22 --ref $ref --engine cpu --host-points --repeat 3 -v --validate 20000 2>&1 | grep -E "query [123]|index|validate|check points|prepare|k-d tree|face cells|  query"
done
