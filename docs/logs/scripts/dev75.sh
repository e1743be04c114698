#!/usr/bin/env bash
# CPU only, on an H100 host's Xeon (the leases where 16 cores fell short before): BenchmarkCPUGrid 2^22 x 2^16,
# the build before this session (base) and the final build (new: the first level's tile pools from a fitted
# grid) interleaved on 16 and 2 (taskset) cores, three rounds; knn run against the sphere and the cities on 16
# cores, validated, with their stages.
set -u
cd .carry/dev75 && gunzip -f ./*.gz && chmod +x ./* && cd ../..
export GEOKNN_DATA=$PWD/.data
nvidia-smi --query-gpu=name --format=csv,noheader; lscpu | grep -E "Model name|L3"; date
cd internal/engine
for round in 1 2 3; do
  for v in base new; do
    echo "== CPUGrid: $v"
    ../../.carry/dev75/$v.test -test.run XXX -test.bench 'CPUGrid/obs=4194304' -test.benchtime 3x -test.cpu 16 | grep Bench
    taskset -c 0,1 ../../.carry/dev75/$v.test -test.run XXX -test.bench 'CPUGrid/obs=4194304' -test.benchtime 3x -test.cpu 2 | grep Bench
  done
done
cd ../..
for ref in 2^16 .data/cities.csv; do
  echo "== knn run --obs 2^22 --ref $ref --engine cpu --host-points --repeat 3 -v --validate 20000 (16 cores, new)"
  .carry/dev75/knn run --obs 2^22 --ref $ref --engine cpu --host-points --repeat 3 -v --validate 20000 2>&1 | grep -E "query [123]|validate:|^index|check|prepare|k-d tree|face cells  "
done
