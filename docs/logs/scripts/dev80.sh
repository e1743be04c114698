#!/usr/bin/env bash
# CPU only: the face-cell build serial, parallel, and as 16 serial builds at once, with page faults and user/system
# time a build (TestTmpBuildScaling, a temporary test built into this run's engine.test and not kept: it timed buildFaceCells
# on 1 and GOMAXPROCS workers, 16 concurrent one-worker builds and faceGridFor alone, with getrusage's faults and times), at GOMAXPROCS 1 and 16; FaceBuild by cores again.
set -u
cd .carry/dev80 && gunzip -f ./*.gz && chmod +x ./* && cd ../..
export GEOKNN_DATA=$PWD/.data
lscpu | grep -E "Model name|MHz|Flags" | cut -c1-200; date; which perf; cat /sys/kernel/mm/transparent_hugepage/enabled
cd internal/engine
T=../../.carry/dev80/engine.test
for c in 1 16 16; do echo "== GOMAXPROCS=$c"; GOMAXPROCS=$c $T -test.run TestTmpBuildScaling -test.v | grep tmpscale; done
echo "== GOGC=off GOMAXPROCS=16"; GOGC=off $T -test.run TestTmpBuildScaling -test.v | grep tmpscale
$T -test.run XXX -test.bench 'FaceBuild/sphere' -test.benchtime 10x -test.cpu 1,2,16,1,2,16 | grep Bench
