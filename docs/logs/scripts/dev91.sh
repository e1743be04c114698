#!/usr/bin/env bash
# Issue #17's GPU rows on the build of 1f9dd02 (its GPU kernels unchanged; the references' preparation, the grid
# fill and the k-d tree the GPU's plans take changed on the host): 2^27 x 2^16 sphere, clustered and seed, and
# 2^27 x the cities, --repeat 3, validated; then the session, 2^24 x 2^16, 100 steps, validated at the end.
set -u
tar xzf .carry/bin.tgz
export GEOKNN_DATA=$PWD/.data
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date
for gen in sphere clustered seed; do
  echo "== knn run --obs 2^27 --ref 2^16 --gen $gen --engine gpu --repeat 3 --validate 16384"
  bin/knn run --obs 2^27 --ref 2^16 --gen $gen --engine gpu --repeat 3 --validate 16384 2>&1 | grep -E "^index|query [123]|validate|rror"
done
echo "== knn run --obs 2^27 --ref cities.csv --engine gpu --repeat 3 --validate 16384"
bin/knn run --obs 2^27 --ref .data/cities.csv --engine gpu --repeat 3 --validate 16384 2>&1 | grep -E "^index|query [123]|validate|rror"
echo "== knn simulate --obs 2^24 --ref 2^16 --steps 100 --dt 60 --replace 0.01 --validate 16384"
bin/knn simulate --obs 2^24 --ref 2^16 --steps 100 --dt 60 --replace 0.01 --validate 16384 2>&1 | grep -E "steps:|step phases|query|validate|rror"
date
