#!/usr/bin/env bash
# The face-cell build's slowdown on the H100 host: the build on 1, 2 and 16 goroutines under GOMAXPROCS 1, 2 and
# 16 (a temporary benchmark, not committed), and the query alone (2^22 observations, cells built once).
set -u
gunzip -k -f .carry/zz.test.gz; chmod +x .carry/zz.test
cd internal/engine
Z=../../.carry/zz.test
$Z -test.run XXX -test.bench 'ZZBuildWorkers' -test.benchtime 5x -test.cpu 1,2,16 2>&1 | grep Bench
$Z -test.run XXX -test.bench 'ZZQueryOnly' -test.benchtime 3x -test.cpu 1,2,16 2>&1 | grep Bench
