#!/usr/bin/env bash
# nvidia-h200, build of the face-cell query (uncommitted on 8ad0e98): .ci/gpu-check, the headline
# runs (third query) for sphere, seed, clustered and cities as references, reference-count sweep,
# the whole command, and Nsight Compute on the cells kernels of one 2^21 job.
set -u
tar xzf .carry/bin.tgz
export GEOKNN_DATA=$PWD/.data
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader
.ci/gpu-check $OUT/gc 2>&1
(cd $OUT/gc/ptx && tar czf $OUT/kernels.tgz .)
export GEOKNN_PTX_DIR=$OUT/gc/ptx GEOKNN_SASS_DIR=$OUT/gc/ptx/sass
F="query 3|kernel|index|validate|note|cells|tree|plan"
for g in sphere seed clustered; do
  echo "== knn run --obs 2^27 --ref 2^16 --gen $g --engine gpu --repeat 3 --validate 16384"
  bin/knn run --obs 2^27 --ref 2^16 --gen $g --engine gpu --repeat 3 --validate 16384 2>&1 | grep -E "$F"
done
echo "== knn run --obs 2^27 --ref .data/cities.csv --engine gpu --repeat 3 --validate 16384"
bin/knn run --obs 2^27 --ref .data/cities.csv --engine gpu --repeat 3 --validate 16384 2>&1 | grep -E "$F"
for r in 2^12 2^20; do
  echo "== knn run --obs 2^27 --ref $r --engine gpu --repeat 3 --validate 16384"
  bin/knn run --obs 2^27 --ref $r --engine gpu --repeat 3 --validate 16384 2>&1 | grep -E "$F"
done
echo "== whole command: /usr/bin/time knn run --obs 2^27 --ref 2^16 (three times)"
for i in 1 2 3; do /usr/bin/time -f "whole=%e s" bin/knn run --obs 2^27 --ref 2^16 2>&1 | grep -E "query|total|whole"; done
echo "== knn simulate --obs 2^24 --ref 2^16 --steps 100 --replace 0.01"
bin/knn simulate --obs 2^24 --ref 2^16 --steps 100 --replace 0.01 2>&1 | tail -6
echo "== ncu: knn run --obs 2^21 --ref 2^16 (sphere, then seed) cells kernels"
M=gpu__time_duration.sum,dram__bytes.sum,smsp__inst_executed.sum,launch__registers_per_thread,sm__warps_active.avg.pct_of_peak_sustained_active,dram__throughput.avg.pct_of_peak_sustained_elapsed,sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active,sm__inst_executed_pipe_fp64.sum
for g in sphere seed; do
  timeout 200 ncu --csv --kernel-name regex:cells --metrics $M bin/knn run --obs 2^21 --ref 2^16 --gen $g --engine gpu -q 2>&1 | grep -E '^"' | cut -d, -f5,12-16
done
