#!/usr/bin/env bash
# CPU only: the build before (base), the query on a team of workers (team: dev81.sh's new), and the team with the
# memory of the last query's references and face cells kept (new), interleaved: BenchmarkCPUGrid 2^22 x 2^16 on
# 16 and 2 (taskset) cores, three rounds; FaceBuild on 16; knn run against the sphere and the cities, validated.
set -u
cd .carry/dev82 && gunzip -f ./*.gz && chmod +x ./* && cd ../..
export GEOKNN_DATA=$PWD/.data
D=$PWD/.carry/dev82
lscpu | grep -E "Model name"; date
cd internal/engine
for round in 1 2 3; do
  for v in base team new; do
    echo "== CPUGrid: $v"
    $D/$v.test -test.run XXX -test.bench 'CPUGrid/obs=4194304' -test.benchtime 5x -test.cpu 16 | grep Bench
    taskset -c 0,1 $D/$v.test -test.run XXX -test.bench 'CPUGrid/obs=4194304' -test.benchtime 3x -test.cpu 2 | grep Bench
  done
done
for v in base team new; do
  echo "== FaceBuild: $v"
  $D/$v.test -test.run XXX -test.bench 'FaceBuild' -test.benchtime 10x -test.cpu 16 | grep Bench
done
cd ../..
for ref in 2^16 .data/cities.csv; do
  for v in knnbase knn knnbase knn; do
    echo "== $v run --obs 2^22 --ref $ref --engine cpu --host-points --repeat 5 -v --validate 20000 (16 cores)"
    $D/$v run --obs 2^22 --ref $ref --engine cpu --host-points --repeat 5 -v --validate 20000 2>&1 | grep -E "query [1-5]|validate:|^index|check|prepare|k-d tree|face cells  |  query  "
  done
done
