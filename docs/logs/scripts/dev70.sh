#!/usr/bin/env bash
# The face cells' first level queued with the session's query, no host wait (cells_query reads the build's
# status): .ci/gpu-check (PTX rebuilt, every GPU test on it), then knn simulate --obs 2^24 --ref 2^16,
# the build before (knn.old, its own embedded kernels) and this one alternately on the same card, and a
# validated run.
set -u
tar xzf .carry/bin.tgz
gunzip -c .carry/dev70/knn.old.gz > knn.old && chmod +x knn.old
export GEOKNN_DATA=$PWD/.data
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date
.ci/gpu-check "$OUT/gc" 2>&1 | tail -32
export GEOKNN_PTX_DIR=$OUT/gc/ptx GEOKNN_SASS_DIR=$OUT/gc/ptx/sass
sim="simulate --obs 2^24 --ref 2^16 --steps 100 --dt 60 --replace 0.01"
for k in 1 2 3; do
  echo "== before: knn $sim"; ./knn.old $sim 2>&1 | grep -E "steps:|step phases"
  echo "== new: knn $sim"; bin/knn $sim 2>&1 | grep -E "steps:|step phases"
done
echo "== new: knn $sim --validate 16384"; bin/knn $sim --validate 16384 2>&1 | grep -E "steps:|step phases|validate"
