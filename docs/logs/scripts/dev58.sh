#!/usr/bin/env bash
# The CPU face cells' build from tile pools (vector scans) against the build before it (HEAD e5411c8), on the
# H100 host: the machine's own scaling (a shared-tree query loop and an L1-resident loop on 1-16 goroutines), the
# build on 1-16 goroutines set explicitly (temporary benchmarks, not committed), BenchmarkCPUGrid 2^22 x 2^16 on 1,
# 16 and 2 (taskset) cores, old and new interleaved, then knn run (new) against the sphere and the cities.
set -u
cd .carry/dev58 && gunzip -f ./*.gz && chmod +x ./* && cd ../..
export GEOKNN_DATA=$PWD/.data
lscpu | grep -E "Model name|MHz|Thread|Core|Socket|L2|L3|NUMA node"
cd internal/engine
D=../../.carry/dev58
echo "== face-cell tests (new)"
$D/engine.new -test.run 'Face|PoolScan|Lanes1|Unit4|ChordToAngle4' -test.count 1 2>&1 | tail -2
echo "== machine scaling (new binary)"
$D/engine.new -test.run XXX -test.bench ZZMachine -test.benchtime 3x -test.cpu 16 | grep Bench
for round in 1 2; do
  for v in old new; do
    echo "== build on w goroutines: $v"
    $D/engine.$v -test.run XXX -test.bench ZZBuildWorkers -test.benchtime 3x -test.cpu 16 | grep Bench
    echo "== CPUGrid: $v"
    $D/engine.$v -test.run XXX -test.bench 'CPUGrid/obs=4194304' -test.benchtime 3x -test.cpu 1,16 | grep Bench
    taskset -c 0,1 $D/engine.$v -test.run XXX -test.bench 'CPUGrid/obs=4194304' -test.benchtime 3x -test.cpu 2 | grep Bench
  done
done
cd ../..
for ref in 2^16 .data/cities.csv; do
  echo "== knn run --obs 2^22 --ref $ref --engine cpu --host-points --repeat 3 -v --validate 20000 (16 cores, then taskset 2)"
  .carry/dev58/knn.new run --obs 2^22 --ref $ref --engine cpu --host-points --repeat 3 -v --validate 20000 2>&1 | grep -E "query [23]|index|validate|check points|prepare|face cells|  query"
  taskset -c 0,1 .carry/dev58/knn.new run --obs 2^22 --ref $ref --engine cpu --host-points --repeat 3 -v --validate 20000 2>&1 | grep -E "query [23]|index|validate|check points|prepare|face cells|  query"
done
