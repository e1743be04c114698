#!/usr/bin/env bash
# nvidia-h200, build of the face cells for every plan (k-d tree plans too; far cells split; uncommitted
# on 8ad0e98): .ci/gpu-check, the headline runs (third query) for sphere, seed, clustered, cities and
# airports as references, and Nsight Compute on the cells kernels of one 2^21 job.
set -u
tar xzf .carry/bin.tgz
export GEOKNN_DATA=$PWD/.data
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
.ci/gpu-check $OUT/gc 2>&1
grep -E "TestGPUFaults|after the fault|TestGPUCells|gpu_cells_test" $OUT/gc/engine-tests.log
(cd $OUT/gc/ptx && tar czf $OUT/kernels.tgz .)
export GEOKNN_PTX_DIR=$OUT/gc/ptx GEOKNN_SASS_DIR=$OUT/gc/ptx/sass
F="query 3|index:|validate"
for g in sphere seed clustered; do
  echo "== knn run --obs 2^27 --ref 2^16 --gen $g --engine gpu --repeat 3 --validate 16384"
  bin/knn run --obs 2^27 --ref 2^16 --gen $g --engine gpu --repeat 3 --validate 16384 2>&1 | grep -E "$F"
done
for r in cities airports; do
  echo "== knn run --obs 2^27 --ref .data/$r.csv --engine gpu --repeat 3 --validate 16384"
  bin/knn run --obs 2^27 --ref .data/$r.csv --engine gpu --repeat 3 --validate 16384 2>&1 | grep -E "$F"
done
echo "== knn run --obs 2^27 --ref 2^20 --engine gpu --repeat 3 --validate 16384"
bin/knn run --obs 2^27 --ref 2^20 --engine gpu --repeat 3 --validate 16384 2>&1 | grep -E "$F"
echo "== ncu: knn run --obs 2^21 --ref 2^16 (sphere, then clustered) cells kernels"
M=gpu__time_duration.sum,dram__bytes.sum,smsp__inst_executed.sum,launch__registers_per_thread,sm__warps_active.avg.pct_of_peak_sustained_active,dram__throughput.avg.pct_of_peak_sustained_elapsed,sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active
for g in sphere clustered; do
  timeout 200 ncu --csv --kernel-name regex:cells --metrics $M bin/knn run --obs 2^21 --ref 2^16 --gen $g --engine gpu -q > $OUT/ncu-$g.csv 2>&1
  python3 -c "
import csv,sys
for r in csv.DictReader(l for l in open('$OUT/ncu-$g.csv') if l.startswith('\"')):
    print(r['ID'], r['Kernel Name'].split('(')[0], r['Metric Name'], r['Metric Unit'], r['Metric Value'])
"
done
