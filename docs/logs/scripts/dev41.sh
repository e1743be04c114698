#!/usr/bin/env bash
# Sessions on the face cells, a refused plan not retried, the session test with 30,000 references on the GPU and two crowded steps (uncommitted on 5aef39e): .ci/gpu-check and
# the session tests' notes.
set -u
tar xzf .carry/bin.tgz
export GEOKNN_DATA=$PWD/.data
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date
.ci/gpu-check $OUT/gc 2>&1 | grep -v 'gpu_test.go:601'
grep -E "^(=== RUN|---).*Session|--- FAIL|session_test.go" $OUT/gc/engine-tests.log | head -80
