#!/usr/bin/env bash
# (1) The session's face-cell query counting the changed answers in each block, then once a block (no
# count_changed pass), with the first level queued with the query: .ci/gpu-check (PTX rebuilt, every GPU test
# on it); knn simulate --obs 2^24 --ref 2^16, the build before this session (knn.old) and this one alternately.
# (2) CPU: the first level's tile pools gathered through a fitted grid, the k-d tree built only where a cell
# needs it: BenchmarkCPUGrid 2^22 x 2^16 beside the build before (base) on 16 and 2 (taskset) cores, three
# rounds; knn run against the sphere and the cities on 16 cores, validated, with their stages.
set -u
tar xzf .carry/bin.tgz
cd .carry/dev73 && gunzip -f ./*.gz && chmod +x ./* && cd ../..
export GEOKNN_DATA=$PWD/.data
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
lscpu | grep -E "Model name"; date
.ci/gpu-check "$OUT/gc" 2>&1 | tail -32
grep -E "^--- FAIL|^    --- FAIL" -A3 "$OUT/gc/engine-tests.log" | head -20
export P="GEOKNN_PTX_DIR=$OUT/gc/ptx GEOKNN_SASS_DIR=$OUT/gc/ptx/sass"
sim="simulate --obs 2^24 --ref 2^16 --steps 100 --dt 60 --replace 0.01"
for k in 1 2 3; do
  echo "== before: knn $sim"; .carry/dev73/knn.old $sim 2>&1 | grep -E "steps:|step phases|rror"
  echo "== new: knn $sim"; env $P bin/knn $sim 2>&1 | grep -E "steps:|step phases|rror"
done
echo "== new: knn $sim --validate 16384 (the last steps' lines)"
env $P bin/knn $sim --validate 16384 2>&1 | grep -E "^ *(step|9[8-9]|100) |steps:|step phases|validate|rror"
cd internal/engine
for round in 1 2 3; do
  for v in base new; do
    b=../../.carry/dev73/base.test; [ $v = new ] && b=../../bin/engine.test
    echo "== CPUGrid: $v"
    $b -test.run XXX -test.bench 'CPUGrid/obs=4194304' -test.benchtime 3x -test.cpu 16 | grep Bench
    taskset -c 0,1 $b -test.run XXX -test.bench 'CPUGrid/obs=4194304' -test.benchtime 3x -test.cpu 2 | grep Bench
  done
done
cd ../..
for ref in 2^16 .data/cities.csv; do
  echo "== knn run --obs 2^22 --ref $ref --engine cpu --host-points --repeat 3 -v --validate 20000 (16 cores, new)"
  bin/knn run --obs 2^22 --ref $ref --engine cpu --host-points --repeat 3 -v --validate 20000 2>&1 | grep -E "query [123]|validate:|^index|check|prepare|k-d tree|face cells  "
done
mkdir -p "$OUT/k" && cp "$OUT/gc/ptx/cells.ptx" "$OUT/gc/ptx/sass/cells.fatbin.gz" "$OUT/gc/ptx/sass/SUMS" "$OUT/k/"
rm -rf "$OUT/gc/ptx"
