#!/usr/bin/env bash
# The CPU face cells' first-level count on the H100 host (a temporary build reading GEOKNN_FACE_SCALE and
# GEOKNN_FACE_MIN, not committed): scale 0.044 (min 0.25 a reference, the current rule), 0.031, 0.022 and 0.016
# (min 0.1), BenchmarkCPUGrid 2^22 x 2^16 on 1, 2 (taskset) and 16 cores, and knn run against the cities on 16
# cores, the settings interleaved.
set -u
tar xzf .carry/bin.tgz
export GEOKNN_DATA=$PWD/.data
cd internal/engine
T=../../bin/engine.test
for round in 1 2; do
  for s in 0.044 0.031 0.022 0.016; do
    m=0.25; [ $s != 0.044 ] && m=0.1
    echo "== scale $s min $m"
    GEOKNN_FACE_SCALE=$s GEOKNN_FACE_MIN=$m $T -test.run XXX -test.bench 'CPUGrid/obs=4194304' -test.benchtime 3x -test.cpu 1,16 2>&1 | grep Bench
    GEOKNN_FACE_SCALE=$s GEOKNN_FACE_MIN=$m taskset -c 0,1 $T -test.run XXX -test.bench 'CPUGrid/obs=4194304' -test.benchtime 3x -test.cpu 2 2>&1 | grep Bench
    GEOKNN_FACE_SCALE=$s GEOKNN_FACE_MIN=$m ../../bin/knn run --obs 2^22 --ref ../../.data/cities.csv --engine cpu --host-points --repeat 3 2>&1 | grep -E "query 3|index"
  done
done
