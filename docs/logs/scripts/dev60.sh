#!/usr/bin/env bash
# The CPU face cells after dev59: the first-level cell of four observations at a time in AVX2 (faceTop4AVX2),
# observations read from their columns four at a time. On the H100 host: the engine's CPU tests, BenchmarkCPUGrid
# 2^22 x 2^16 on 1, 16 and 2 (taskset) cores against HEAD e5411c8 (old) interleaved, the query alone and the
# preparation (temporary benchmarks, not committed) on 1 and 16 cores, then knn run against the sphere and cities.
set -u
cd .carry/dev60 && gunzip -f ./*.gz && chmod +x ./* && cd ../..
export GEOKNN_DATA=$PWD/.data
lscpu | grep -E "Model name|MHz"
cd internal/engine
D=../../.carry/dev60
echo "== engine tests, CPU (new)"
$D/engine.new -test.run 'Face|PoolScan|Top4|Lanes1|Unit4|ChordToAngle4|CPU|Refs|SelectNth|Tree' -test.count 1 2>&1 | tail -2
for round in 1 2; do
  for v in old new; do
    echo "== CPUGrid: $v"
    $D/engine.$v -test.run XXX -test.bench 'CPUGrid/obs=4194304' -test.benchtime 3x -test.cpu 1,16 | grep Bench
    taskset -c 0,1 $D/engine.$v -test.run XXX -test.bench 'CPUGrid/obs=4194304' -test.benchtime 3x -test.cpu 2 | grep Bench
  done
done
echo "== the query alone, the preparation, the build (new)"
$D/engine.new -test.run XXX -test.bench 'ZZQueryOnly/ref=2\^1[46]|ZZPrep|ZZBuildWorkers/.*/w(1|16)$' -test.benchtime 3x -test.cpu 1,16 | grep Bench
cd ../..
for ref in 2^16 .data/cities.csv; do
  echo "== knn run --obs 2^22 --ref $ref --engine cpu --host-points --repeat 3 -v --validate 20000 (16 cores, then taskset 2)"
  .carry/dev60/knn.new run --obs 2^22 --ref $ref --engine cpu --host-points --repeat 3 -v --validate 20000 2>&1 | grep -E "query [123]|index|validate|check points|prepare|k-d tree|face cells|  query"
  taskset -c 0,1 .carry/dev60/knn.new run --obs 2^22 --ref $ref --engine cpu --host-points --repeat 3 -v --validate 20000 2>&1 | grep -E "query [123]|index|validate|check points|prepare|k-d tree|face cells|  query"
done
