#!/usr/bin/env bash
# CPU only, on an H100 host's Xeon: where the 16-core grid query's time goes. The face-cell build and the
# references' preparation at 1-16 cores; BenchmarkCPUGrid 2^22 x 2^16 on 16 cores with a CPU profile and an
# execution trace, and with the collector off; knn run's stages on 16 cores.
set -u
cd .carry/dev79 && gunzip -f ./*.gz && chmod +x ./* && cd ../..
export GEOKNN_DATA=$PWD/.data
lscpu | grep -E "Model name|Thread|Core|Socket|L3|L2|NUMA node"; nproc; date
cd internal/engine
T=../../.carry/dev79/engine.test
echo "== FaceBuild, PrepareRefs by cores"
$T -test.run XXX -test.bench 'FaceBuild/sphere|PrepareRefs' -test.benchtime 10x -test.cpu 1,2,4,8,16 | grep Bench
echo "== CPUGrid 16 cores, profiled"
$T -test.run XXX -test.bench 'CPUGrid/obs=4194304' -test.benchtime 10x -test.cpu 16 -test.cpuprofile $OUT/cpu16.pprof | grep Bench
echo "== CPUGrid 16 cores, traced"
$T -test.run XXX -test.bench 'CPUGrid/obs=4194304' -test.benchtime 3x -test.cpu 16 -test.trace /tmp/trace16.out | grep Bench
gzip -c /tmp/trace16.out > $OUT/trace16.out.gz
echo "== CPUGrid 16 cores, GOGC=off; then default"
GOGC=off $T -test.run XXX -test.bench 'CPUGrid/obs=4194304' -test.benchtime 5x -test.cpu 16 | grep Bench
$T -test.run XXX -test.bench 'CPUGrid/obs=4194304' -test.benchtime 5x -test.cpu 16 | grep Bench
cd ../..
echo "== knn run --obs 2^22 --ref 2^16 --engine cpu --host-points --repeat 3 -v (16 cores)"
.carry/dev79/knn run --obs 2^22 --ref 2^16 --engine cpu --host-points --repeat 3 -v 2>&1 | tail -22
