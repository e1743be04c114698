#!/usr/bin/env bash
# The build of dev34 (face cells, survivors passed down) plus: the ball search starting from r0 and stopping at
# the first nearest within its ball, an fp32 corner test before the fp64 one, cells_build asked for 8 blocks a SM
# (uncommitted on 8ad0e98): ptxas resources, .ci/gpu-check, the headline runs (third query), Nsight Compute on the
# cells kernels (2^16 sphere, cities).
set -u
tar xzf .carry/bin.tgz
export GEOKNN_DATA=$PWD/.data
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date
nvcc -cubin -arch=sm_90 -O3 -Xptxas -v -o /tmp/cells.cubin internal/kernels/cells.cu 2>&1 | grep -E "Function properties|registers|spill" | head -12
.ci/gpu-check $OUT/gc 2>&1
grep -E "after the fault|gpu_cells_test|--- FAIL" $OUT/gc/engine-tests.log
(cd $OUT/gc/ptx && tar czf $OUT/kernels.tgz .)
export GEOKNN_PTX_DIR=$OUT/gc/ptx GEOKNN_SASS_DIR=$OUT/gc/ptx/sass
F="query 3|index:|validate"
for g in sphere seed clustered; do
  echo "== knn run --obs 2^27 --ref 2^16 --gen $g --engine gpu --repeat 3 --validate 16384"
  bin/knn run --obs 2^27 --ref 2^16 --gen $g --engine gpu --repeat 3 --validate 16384 2>&1 | grep -E "$F"
done
for r in .data/cities.csv .data/airports.csv 2^12 2^20; do
  echo "== knn run --obs 2^27 --ref $r --engine gpu --repeat 3 --validate 16384"
  bin/knn run --obs 2^27 --ref $r --engine gpu --repeat 3 --validate 16384 2>&1 | grep -E "$F"
done
echo "== whole command: /usr/bin/time knn run --obs 2^27 --ref 2^16 (three times)"
for i in 1 2 3; do /usr/bin/time -f "whole=%e s" bin/knn run --obs 2^27 --ref 2^16 2>&1 | grep -E "query|total|whole"; done
echo "== ncu: knn run --obs 2^21 --ref R (sphere 2^16, cities) cells kernels"
M=gpu__time_duration.sum,dram__bytes.sum,smsp__inst_executed.sum,launch__registers_per_thread,sm__warps_active.avg.pct_of_peak_sustained_active,dram__throughput.avg.pct_of_peak_sustained_elapsed,sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active
for r in 2^16 .data/cities.csv; do
  timeout 200 ncu --csv --kernel-name regex:cells --metrics $M bin/knn run --obs 2^21 --ref $r --engine gpu -q > $OUT/ncu.csv 2>&1
  python3 -c "
import csv
for r in csv.DictReader(l for l in open('$OUT/ncu.csv') if l.startswith('\"')):
    print(r['ID'], r['Kernel Name'].split('(')[0], r['Metric Name'], r['Metric Unit'], r['Metric Value'])
"
done
