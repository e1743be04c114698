#!/usr/bin/env bash
# The face-cell build's two-goroutine slowdown on the H100 host: BenchmarkFaceBuild of the current build (A) on
# 1, 2 and 16 goroutines, on 2 goroutines pinned to one core, to cores 0,1 and to 0,8; and of B, where each cell's
# split flag lives in its task instead of a bool slice all goroutines write.
set -u
tar xzf .carry/bin.tgz
gunzip -k -f .carry/vB.test.gz; chmod +x .carry/vB.test
export GEOKNN_DATA=$PWD/.data
cd internal/engine
A=../../bin/engine.test
B=../../.carry/vB.test
echo "== A"; $A -test.run XXX -test.bench 'FaceBuild/sphere' -test.benchtime 5x -test.cpu 1,2,16 2>&1 | grep Bench
echo "== B"; $B -test.run XXX -test.bench 'FaceBuild/sphere' -test.benchtime 5x -test.cpu 1,2,16 2>&1 | grep Bench
for c in 0 0,1 0,8; do
  echo "== A, taskset -c $c"; taskset -c $c $A -test.run XXX -test.bench 'FaceBuild/sphere' -test.benchtime 5x -test.cpu 2 2>&1 | grep Bench
done
echo "== A, GODEBUG=asyncpreemptoff=1"; GODEBUG=asyncpreemptoff=1 $A -test.run XXX -test.bench 'FaceBuild/sphere' -test.benchtime 5x -test.cpu 2 2>&1 | grep Bench
