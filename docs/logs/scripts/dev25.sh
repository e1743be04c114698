#!/usr/bin/env bash
# Session and one-shot grid queries against the observation sort's band (2^20, 2^21, 2^22) and the session's re-sort fraction
# (an experimental build reading GEOKNN_X_BAND and GEOKNN_X_RESORT; the shipped build has 2^22 and 1/32).
set -u
tar xzf .carry/exp.tgz -C /tmp
K=/tmp/binexp/knn
for b in 22 21 20; do
  export GEOKNN_X_BAND=$b
  for r in 1 2; do timeout 60 $K simulate --obs 2^24 --ref 2^16 --steps 200 --replace 0.01 --quiet 2>&1 | grep -E "^steps|phases" | sed 's/pairs.*whole/whole/' | sed "s/^/band $b /"; done
  timeout 60 $K simulate --obs 2^24 --ref 2^16 --steps 100 --replace 0 --quiet 2>&1 | grep -E "^steps" | sed 's/pairs.*whole/whole/' | sed "s/^/band $b replace 0 /"
  timeout 60 $K run --obs 2^27 --ref 2^16 --engine gpu --repeat 3 2>&1 | grep -E "query 3" | sed 's/.*GPU kernels/kernels/;s/(index.*//' | sed "s/^/band $b 2^27 /"
  timeout 60 $K run --obs 2^24 --ref 2^16 --batch-size 16777216 --engine gpu --repeat 3 --validate 16384 2>&1 | grep -E "query 3|validat" | sed 's/.*GPU kernels/kernels/;s/(index.*//' | sed "s/^/band $b 2^24 one job /"
done
for res in 16 64; do
  for b in 22 20; do
    GEOKNN_X_BAND=$b GEOKNN_X_RESORT=$res timeout 60 $K simulate --obs 2^24 --ref 2^16 --steps 200 --replace 0.01 --quiet 2>&1 | grep -E "^steps" | sed 's/pairs.*whole/whole/' | sed "s/^/resort 1\/$res band $b /"
  done
done
export GEOKNN_X_BAND=20
(cd internal/engine && timeout 200 /tmp/binexp/engine.test -test.run 'Session|TestGPUMatchesCPU|TestGPUNeighbours' -test.count=1 > /tmp/e.log 2>&1; echo "engine session tests with band 2^20: rc $?"; grep -E "^(--- FAIL|FAIL|ok|PASS)" /tmp/e.log | head -5)
