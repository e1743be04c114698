#!/usr/bin/env bash
# The face cells' final build (cells laid out for the job's size, coarser first level under skew; uncommitted on
# 8ad0e98): ptxas resources, .ci/gpu-check, the headline runs (third query), the whole command, Nsight Compute on
# the cells kernels of a 2^27 job (sphere 2^16, cities).
set -u
tar xzf .carry/bin.tgz
export GEOKNN_DATA=$PWD/.data
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date
nvcc -cubin -arch=sm_90 -O3 -Xptxas -v -o /tmp/cells.cubin internal/kernels/cells.cu 2>&1 | grep -E "Function properties|registers|spill" | grep -v internal_trig -A2 | grep -v internal_trig
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
echo "== knn run --obs 2^24 --ref 2^16 --engine gpu --repeat 3 --validate 16384"
bin/knn run --obs 2^24 --ref 2^16 --engine gpu --repeat 3 --validate 16384 2>&1 | grep -E "$F"
echo "== whole command: /usr/bin/time knn run --obs 2^27 --ref 2^16 (three times)"
for i in 1 2 3; do /usr/bin/time -f "whole=%e s" bin/knn run --obs 2^27 --ref 2^16 2>&1 | grep -E "query|total|whole"; done
echo "== knn simulate --obs 2^24 --ref 2^16 --steps 100 --replace 0.01"
bin/knn simulate --obs 2^24 --ref 2^16 --steps 100 --replace 0.01 --quiet 2>&1 | tail -2
echo "== ncu: knn run --obs 2^27 --ref R (sphere 2^16, cities) cells kernels, first 6 launches"
M=gpu__time_duration.sum,dram__bytes.sum,lts__t_bytes.sum,smsp__inst_executed.sum,smsp__thread_inst_executed.sum,launch__registers_per_thread,sm__warps_active.avg.pct_of_peak_sustained_active,dram__throughput.avg.pct_of_peak_sustained_elapsed,sm__throughput.avg.pct_of_peak_sustained_elapsed,smsp__sass_thread_inst_executed_op_fadd_pred_on.sum,smsp__sass_thread_inst_executed_op_fmul_pred_on.sum,smsp__sass_thread_inst_executed_op_ffma_pred_on.sum
for r in 2^16 .data/cities.csv; do
  echo "-- ref $r"
  timeout 150 ncu --csv --kernel-name regex:cells --launch-count 6 --metrics $M bin/knn run --obs 2^27 --ref $r --engine gpu -q > $OUT/ncu.csv 2>&1
  python3 -c "
import csv
for r in csv.DictReader(l for l in open('$OUT/ncu.csv') if l.startswith('\"')):
    print(r['ID'], r['Kernel Name'].split('(')[0], r['Grid Size'] if 'Grid Size' in r else '', r['Metric Name'], r['Metric Unit'], r['Metric Value'])
"
done
