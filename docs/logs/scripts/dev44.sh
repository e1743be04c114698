#!/usr/bin/env bash
# CPU face cells (uncommitted on 55ac65d) against the build before (55ac65d, engine-prof.test / bin/knn) on the
# GPU host's Xeon: BenchmarkCPUGrid 2^22 x 2^16 on 1, 2 (taskset) and 16 cores; the cells' scale swept on one
# core (uniform and the cities as references); a profile of one core; knn run against the cities.
set -u
export GEOKNN_DATA=$PWD/.data
for f in .carry/*.gz; do gunzip -k -f $f; done; chmod +x .carry/knn-* .carry/*.test
lscpu | grep -E "Model name"; grep -m1 MHz /proc/cpuinfo
B='CPUGrid/obs=4194304'
for t in .carry/engine-prof.test .carry/engine-new.test; do
  echo "== $t"
  $t -test.run XXX -test.bench $B -test.benchtime 3x -test.cpu 1,16 2>&1 | grep Bench
  taskset -c 0,1 $t -test.run XXX -test.bench $B -test.benchtime 3x -test.cpu 2 2>&1 | grep Bench
done
N=.carry/engine-new.test
$N -test.run XXX -test.bench 'ZZSweep$' -test.benchtime 2x -test.cpu 1 -test.v 2>&1 | grep -E "^Bench.*obs/s|face cells" | uniq
$N -test.run XXX -test.bench 'ZZSweepCities' -test.benchtime 2x -test.cpu 1 -test.v 2>&1 | grep -E "^Bench.*obs/s|face cells" | uniq
$N -test.run XXX -test.bench 'ZZFaceBuild' -test.benchtime 3x -test.cpu 1 2>&1 | grep Bench
$N -test.run XXX -test.bench $B -test.benchtime 3x -test.cpu 1 -test.cpuprofile $OUT/new1.prof 2>&1 | grep Bench
for k in .carry/knn-old .carry/knn-new; do
  echo "== $k cities, 16 cores / 2 cores"
  $k run --obs 2^22 --ref .data/cities.csv --engine cpu --host-points --repeat 3 --validate 20000 2>&1 | grep -E "query [23]|index|validate"
  taskset -c 0,1 $k run --obs 2^22 --ref .data/cities.csv --engine cpu --host-points --repeat 2 2>&1 | grep -E "query 2|index"
done
