#!/usr/bin/env bash
# CPU only, on an H100 host's Xeon: the query on a team of workers kept awake across its steps (new) beside the
# build before (base): BenchmarkCPUGrid 2^22 x 2^16 on 16 and 2 (taskset) cores interleaved, three rounds; the
# face build alone; an execution trace of the new build; knn run against the sphere and the cities, validated.
set -u
cd .carry/dev81 && gunzip -f ./*.gz && chmod +x ./* && cd ../..
export GEOKNN_DATA=$PWD/.data
lscpu | grep -E "Model name"; date
cd internal/engine
D=$PWD/../../.carry/dev81
for round in 1 2 3; do
  for v in base new; do
    echo "== CPUGrid: $v"
    $D/$v.test -test.run XXX -test.bench 'CPUGrid/obs=4194304' -test.benchtime 5x -test.cpu 16 | grep Bench
    taskset -c 0,1 $D/$v.test -test.run XXX -test.bench 'CPUGrid/obs=4194304' -test.benchtime 3x -test.cpu 2 | grep Bench
  done
done
for v in base new; do
  echo "== FaceBuild: $v"
  $D/$v.test -test.run XXX -test.bench 'FaceBuild' -test.benchtime 10x -test.cpu 16 | grep Bench
done
echo "== new: build scaling (TestTmpBuildScaling, dev80.sh's temporary test)"
$D/new.test -test.run TestTmpBuildScaling -test.v | grep tmpscale | head -4
$D/new.test -test.run XXX -test.bench 'CPUGrid/obs=4194304' -test.benchtime 3x -test.cpu 16 -test.trace /tmp/trace.out | grep Bench
gzip -c /tmp/trace.out > $OUT/trace-new.out.gz
cd ../..
for ref in 2^16 .data/cities.csv; do
  for v in knnbase knn; do
    echo "== $v run --obs 2^22 --ref $ref --engine cpu --host-points --repeat 5 -v --validate 20000 (16 cores)"
    $D/$v run --obs 2^22 --ref $ref --engine cpu --host-points --repeat 5 -v --validate 20000 2>&1 | grep -E "query [1-5]|validate:|^index|check|prepare|k-d tree|face cells  |  query  "
  done
done
