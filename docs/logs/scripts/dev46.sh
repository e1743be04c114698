#!/usr/bin/env bash
# CPU face-cell query variants on the H100 host's Xeon, BenchmarkCPUGrid 2^22 x 2^16, one core then two:
# v5 the build of dev45.sh; v6 input indices kept in the list blocks (no lookup through the references) and the
# first-level heads prefetched a pass ahead of the lists; v6b the blocks without the head pass; _16/_64 the
# observations in flight. Then knn run -v (stage times) on 16 and 2 cores, and a profile of v6_16 on 16 cores.
set -u
for f in .carry/*.gz; do gunzip -k -f $f; done; chmod +x .carry/*.test .carry/knn
lscpu | grep -E "Model name"; date
B='CPUGrid/obs=4194304'
for round in 1 2; do
  for v in v5 v6_16 v6_64 v6b_16 v6b_64; do
    echo -n "$v 1 core: "; .carry/$v.test -test.run XXX -test.bench $B -test.benchtime 3x -test.cpu 1 2>&1 | grep Bench
  done
done
for v in v5 v6_16 v6b_16 v6_64; do
  echo -n "$v 2 cores: "; taskset -c 0,1 .carry/$v.test -test.run XXX -test.bench $B -test.benchtime 3x -test.cpu 2 2>&1 | grep Bench
  echo -n "$v 16 cores: "; .carry/$v.test -test.run XXX -test.bench $B -test.benchtime 5x -test.cpu 16 2>&1 | grep Bench
done
.carry/v6_16.test -test.run XXX -test.bench $B -test.benchtime 10x -test.cpu 16 -test.cpuprofile $OUT/v6-16.prof 2>&1 | grep Bench
.carry/v6_16.test -test.run XXX -test.bench $B -test.benchtime 3x -test.cpu 1 -test.cpuprofile $OUT/v6-1.prof 2>&1 | grep Bench
for c in "" "taskset -c 0,1"; do
  echo "== $c knn run --obs 2^22 --ref 2^16 --engine cpu --host-points --repeat 3 -v"
  $c .carry/knn run --obs 2^22 --ref 2^16 --engine cpu --host-points --repeat 3 -v 2>&1 | grep -E "query [23]|face cells|prepare|check points|batch|  query"
done
