#!/usr/bin/env bash
# The session's face-cell query counting the changed answers as it writes them (no count_changed pass), on
# top of the first level queued with the query: .ci/gpu-check (PTX rebuilt, every GPU test on it), then knn
# simulate --obs 2^24 --ref 2^16, the build before this session (knn.old) and this one alternately, three
# rounds, the last with its step lines.
set -u
tar xzf .carry/bin.tgz
gunzip -c .carry/dev72/knn.old.gz > knn.old && chmod +x knn.old
export GEOKNN_DATA=$PWD/.data
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date
.ci/gpu-check "$OUT/gc" 2>&1 | tail -32
grep -E "^--- FAIL|^    --- FAIL" -A3 "$OUT/gc/engine-tests.log" | head -20
grep -A9 "^=== RUN   TestGPUSessionCellsSpeculation" "$OUT/gc/engine-tests.log"
sim="simulate --obs 2^24 --ref 2^16 --steps 100 --dt 60 --replace 0.01"
for k in 1 2 3; do
  echo "== before: knn $sim"; ./knn.old $sim 2>&1 | grep -E "steps:|step phases|rror"
  echo "== new: knn $sim"; GEOKNN_PTX_DIR=$OUT/gc/ptx GEOKNN_SASS_DIR=$OUT/gc/ptx/sass bin/knn $sim 2>&1 | grep -E "steps:|step phases|rror"
done
echo "== new: knn $sim --validate 16384 (the last steps' lines)"
GEOKNN_PTX_DIR=$OUT/gc/ptx GEOKNN_SASS_DIR=$OUT/gc/ptx/sass bin/knn $sim --validate 16384 2>&1 | grep -E "^ *(step|9[6-9]|100) |steps:|step phases|validate|rror"
mkdir -p "$OUT/k" && cp "$OUT/gc/ptx/cells.ptx" "$OUT/gc/ptx/sass/cells.fatbin.gz" "$OUT/gc/ptx/sass/SUMS" "$OUT/k/"
rm -rf "$OUT/gc/ptx"
