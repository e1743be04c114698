#!/usr/bin/env bash
# CPU face-cell query on the H100 host's Xeon, BenchmarkCPUGrid 2^22 x 2^16 on 1, 2 (taskset) and 16 cores, after
# unit vectors and distances four at a time in AVX2 (unit4, chordToAngle4) and the cheaper build (box distance
# in plain compares, the second filter against nearer survivors only, the k-d tree built on 16 goroutines):
# v8 the groups of 16 in three passes; v9 the three-stage pipeline across groups of 16; v9_32 groups of 32.
# Then knn run -v (stage times), 2^16 sphere references and the cities, 16 and 2 cores; a profile of v9 on one.
set -u
export GEOKNN_DATA=$PWD/.data
for f in .carry/*.gz; do gunzip -k -f $f; done; chmod +x .carry/*.test .carry/knn
lscpu | grep -E "Model name"; date
B='CPUGrid/obs=4194304'
for round in 1 2; do
  for v in 8 9 9_32; do
    echo -n "v$v 1 core: "; .carry/$v.test -test.run XXX -test.bench $B -test.benchtime 3x -test.cpu 1 2>&1 | grep Bench
  done
done
for v in 8 9 9_32; do
  echo -n "v$v 2 cores: "; taskset -c 0,1 .carry/$v.test -test.run XXX -test.bench $B -test.benchtime 3x -test.cpu 2 2>&1 | grep Bench
  echo -n "v$v 16 cores: "; .carry/$v.test -test.run XXX -test.bench $B -test.benchtime 5x -test.cpu 16 2>&1 | grep Bench
done
.carry/9.test -test.run XXX -test.bench $B -test.benchtime 3x -test.cpu 1 -test.cpuprofile $OUT/v9-1.prof 2>&1 | grep Bench
for r in 2^16 .data/cities.csv; do
  for c in "" "taskset -c 0,1"; do
    echo "== $c knn run --obs 2^22 --ref $r --engine cpu --host-points --repeat 3 -v"
    $c .carry/knn run --obs 2^22 --ref $r --engine cpu --host-points --repeat 3 -v 2>&1 | grep -E "query [23]|index|face cells|prepare|check points|batch|  query"
  done
done
