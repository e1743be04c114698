#!/usr/bin/env bash
# The final build's CPU figures once more, on whatever host comes (hosts differ lease to lease): BenchmarkCPUGrid
# 2^22 x 2^16 on 1, 16 and 2 (taskset) cores against HEAD e5411c8 (old), interleaved, three rounds; knn run
# against the sphere and the cities on 16 cores.
set -u
tar xzf .carry/bin.tgz
gunzip -f .carry/dev65/engine.old.gz 2>/dev/null; chmod +x .carry/dev65/engine.old
export GEOKNN_DATA=$PWD/.data
lscpu | grep -E "Model name"; date
cd internal/engine
for round in 1 2 3; do
  for v in old new; do
    T=../../.carry/dev65/engine.old; [ $v = new ] && T=../../bin/engine.test
    echo "== CPUGrid: $v"
    $T -test.run XXX -test.bench 'CPUGrid/obs=4194304' -test.benchtime 3x -test.cpu 1,16 | grep Bench
    taskset -c 0,1 $T -test.run XXX -test.bench 'CPUGrid/obs=4194304' -test.benchtime 3x -test.cpu 2 | grep Bench
  done
done
cd ../..
for ref in 2^16 .data/cities.csv; do
  echo "== knn run --obs 2^22 --ref $ref --engine cpu --host-points --repeat 3 -v (16 cores)"
  bin/knn run --obs 2^22 --ref $ref --engine cpu --host-points --repeat 3 -v 2>&1 | grep -E "query [123]|k-d tree|face cells  "
done
