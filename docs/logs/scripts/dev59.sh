#!/usr/bin/env bash
# The CPU face cells after dev58: survivors sorted by keys, cells that may split stop at 256 survivors when those
# say so, reference unit vectors four at a time, the k-d tree traced apart. On the H100 host: the face-cell tests,
# BenchmarkCPUGrid 2^22 x 2^16 on 1, 16 and 2 (taskset) cores against HEAD e5411c8 (old), the build on 1 and 16
# goroutines with tile pools of at most 1024 (new) and 4096 references, then knn run against the sphere and cities.
set -u
cd .carry/dev59 && gunzip -f ./*.gz && chmod +x ./* && cd ../..
export GEOKNN_DATA=$PWD/.data
cd internal/engine
D=../../.carry/dev59
echo "== face-cell tests (new)"
$D/engine.new -test.run 'Face|PoolScan|Lanes1|Unit4|ChordToAngle4|CPUNearest|Refs' -test.count 1 2>&1 | tail -2
for round in 1 2; do
  for v in old new; do
    echo "== CPUGrid: $v"
    $D/engine.$v -test.run XXX -test.bench 'CPUGrid/obs=4194304' -test.benchtime 3x -test.cpu 1,16 | grep Bench
    taskset -c 0,1 $D/engine.$v -test.run XXX -test.bench 'CPUGrid/obs=4194304' -test.benchtime 3x -test.cpu 2 | grep Bench
  done
  for v in new p4096; do
    echo "== build on 1 and 16 goroutines: $v"
    $D/engine.$v -test.run XXX -test.bench 'ZZBuildWorkers/.*/w(1|16)$' -test.benchtime 3x -test.cpu 16 | grep Bench
  done
done
cd ../..
for ref in 2^16 .data/cities.csv; do
  echo "== knn run --obs 2^22 --ref $ref --engine cpu --host-points --repeat 3 -v --validate 20000 (16 cores, then taskset 2)"
  .carry/dev59/knn.new run --obs 2^22 --ref $ref --engine cpu --host-points --repeat 3 -v --validate 20000 2>&1 | grep -E "query [123]|index|validate|check points|prepare|k-d tree|face cells|  query"
  taskset -c 0,1 .carry/dev59/knn.new run --obs 2^22 --ref $ref --engine cpu --host-points --repeat 3 -v --validate 20000 2>&1 | grep -E "query [123]|index|validate|check points|prepare|k-d tree|face cells|  query"
done
