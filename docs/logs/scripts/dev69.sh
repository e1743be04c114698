#!/usr/bin/env bash
# The whole-change review's build (the reference unit vectors and the k-d tree's arrays refactored on the GPU
# path too): .ci/gpu-check, then knn run on the CPU against the sphere on 16 cores, validated.
set -u
tar xzf .carry/bin.tgz
export GEOKNN_DATA=$PWD/.data
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date
.ci/gpu-check "$OUT/gc" 2>&1 | tail -32
bin/knn run --obs 2^22 --ref 2^16 --engine cpu --host-points --repeat 3 --validate 20000 2>&1 | grep -E "query [23]|validate:"
