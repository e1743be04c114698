#!/usr/bin/env bash
# The final build: the face cells' first level queued with the session's query (cells_query reads the build's
# status), the CPU's first-level tile pools from a fitted grid. .ci/gpu-check (PTX rebuilt, every GPU test on it),
# then knn simulate --obs 2^24 --ref 2^16 with the build before this session (knn.old) and this one (its embedded
# kernels) alternately, three rounds.
set -u
tar xzf .carry/bin.tgz
gunzip -c .carry/dev74/knn.old.gz > knn.old && chmod +x knn.old
export GEOKNN_DATA=$PWD/.data
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date
.ci/gpu-check "$OUT/gc" 2>&1 | tail -32
grep -E "^--- FAIL|^    --- FAIL" -A3 "$OUT/gc/engine-tests.log" | head -20
sim="simulate --obs 2^24 --ref 2^16 --steps 100 --dt 60 --replace 0.01"
for k in 1 2 3; do
  echo "== before: knn $sim"; ./knn.old $sim 2>&1 | grep -E "steps:|step phases|rror"
  echo "== new: knn $sim"; bin/knn $sim 2>&1 | grep -E "steps:|step phases|rror"
done
rm -rf "$OUT/gc/ptx"
