#!/usr/bin/env bash
# Why the face-cell build on two or more goroutines does ten times one's work on the H100 host: BenchmarkFaceBuild
# on 1, 2 and 16 goroutines with the collector on and off, and BenchmarkCPUGrid on 16 cores likewise.
set -u
tar xzf .carry/bin.tgz
export GEOKNN_DATA=$PWD/.data
cd internal/engine
T=../../bin/engine.test
for gc in 100 off; do
  echo "== GOGC=$gc"
  GOGC=$gc $T -test.run XXX -test.bench 'FaceBuild/sphere' -test.benchtime 5x -test.cpu 1,2,16 2>&1 | grep Bench
  GOGC=$gc $T -test.run XXX -test.bench 'CPUGrid/obs=4194304' -test.benchtime 3x -test.cpu 16 2>&1 | grep Bench
done
GODEBUG=gctrace=1 $T -test.run XXX -test.bench 'FaceBuild/sphere' -test.benchtime 5x -test.cpu 2 2>&1 | grep -c "^gc "
