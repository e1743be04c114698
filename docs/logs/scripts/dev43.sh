#!/usr/bin/env bash
# CPU grid profile on the GPU host's Xeon: CPU model and clock, then BenchmarkCPUGrid 2^22 x 2^16 with a CPU
# profile on 1, 2 (taskset) and 16 cores (an unstripped engine.test built at 55ac65d).
set -u
lscpu | grep -E "Model name|MHz|L1d|L2|L3|Flags" | cut -c1-400
grep -m1 MHz /proc/cpuinfo; which perf || echo "no perf"
T=.carry/engine-prof.test
B='CPUGrid/obs=4194304'
$T -test.run XXX -test.bench $B -test.benchtime 3x -test.cpu 1 -test.cpuprofile $OUT/x1.prof 2>&1 | grep Bench
taskset -c 0,1 $T -test.run XXX -test.bench $B -test.benchtime 3x -test.cpu 2 -test.cpuprofile $OUT/x2.prof 2>&1 | grep Bench
$T -test.run XXX -test.bench $B -test.benchtime 5x -test.cpu 16 -test.cpuprofile $OUT/x16.prof 2>&1 | grep Bench
