#!/usr/bin/env bash
# (1) cells.cu's machine code rebuilt (internal/kernels/build.sh; cells.fatbin.gz and SUMS come back).
# (2) The face-cell query's lists and ranking taking turns observation by observation (inter; inter32: groups
# of 32 observations) beside the build before (base): BenchmarkCPUGrid 2^22 x 2^16 on 16 and 2 (taskset)
# cores, interleaved, four rounds.
# (3) knn simulate --obs 2^24 --ref 2^16: the build before (knn.old, its embedded kernels) and this one (the
# face cells' first level queued with the query) alternately, three rounds each, on the same card.
set -u
tar xzf .carry/bin.tgz
cd .carry/dev71 && gunzip -f ./*.gz && chmod +x ./* && cd ../..
gunzip -c .carry/dev72/knn.old.gz > knn.old && chmod +x knn.old
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
lscpu | grep -E "Model name|Thread|Core|Socket|L2|L3"; date
internal/kernels/build.sh "$OUT/k" > "$OUT/build.log" 2>&1 || { echo "build failed"; cat "$OUT/build.log"; }
cp "$OUT/k/sass/cells.fatbin.gz" "$OUT/cells.fatbin.gz"; cp "$OUT/k/sass/SUMS" "$OUT/SUMS"
cd internal/engine
for round in 1 2 3 4; do
  for v in base inter inter32; do
    echo "== CPUGrid: $v"
    ../../.carry/dev71/$v.test -test.run XXX -test.bench 'CPUGrid/obs=4194304' -test.benchtime 3x -test.cpu 16 | grep Bench
    taskset -c 0,1 ../../.carry/dev71/$v.test -test.run XXX -test.bench 'CPUGrid/obs=4194304' -test.benchtime 3x -test.cpu 2 | grep Bench
  done
done
cd ../..
sim="simulate --obs 2^24 --ref 2^16 --steps 100 --dt 60 --replace 0.01"
for k in 1 2 3; do
  echo "== before: knn $sim"; ./knn.old $sim 2>&1 | grep -E "steps:|step phases|rror"
  echo "== new: knn $sim"; GEOKNN_PTX_DIR=$OUT/k GEOKNN_SASS_DIR=$OUT/k/sass bin/knn $sim 2>&1 | grep -E "steps:|step phases|rror"
done
rm -rf "$OUT/k"
