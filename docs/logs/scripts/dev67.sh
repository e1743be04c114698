#!/usr/bin/env bash
# The observations' check beside the references' preparation and index (CPU engine): BenchmarkCPUGrid 2^22 x 2^16
# on 16 and 2 (taskset) cores, the build before it (prev, cd65ac2) and this one (new) interleaved, three rounds;
# then knn run against the sphere and the cities on 16 cores, its stages.
set -u
cd .carry/dev67 && gunzip -f ./*.gz && chmod +x ./* && cd ../..
export GEOKNN_DATA=$PWD/.data
lscpu | grep -E "Model name"; date
cd internal/engine
for round in 1 2 3; do
  for v in prev new; do
    echo "== CPUGrid: $v"
    ../../.carry/dev67/engine.$v -test.run XXX -test.bench 'CPUGrid/obs=4194304' -test.benchtime 3x -test.cpu 16 | grep Bench
    taskset -c 0,1 ../../.carry/dev67/engine.$v -test.run XXX -test.bench 'CPUGrid/obs=4194304' -test.benchtime 3x -test.cpu 2 | grep Bench
  done
done
cd ../..
for ref in 2^16 .data/cities.csv; do
  echo "== knn run --obs 2^22 --ref $ref --engine cpu --host-points --repeat 3 -v --validate 20000 (16 cores, new)"
  .carry/dev67/knn.new run --obs 2^22 --ref $ref --engine cpu --host-points --repeat 3 -v --validate 20000 2>&1 | grep -E "query [123]|validate:|check|prepare|k-d tree|face cells  "
done
