#!/usr/bin/env bash
# The build of dev33 plus split cells passing their survivors down to their children (uncommitted on 8ad0e98):
# .ci/gpu-check, the headline runs
# (third query) for sphere, seed, clustered, cities and airports as references, 2^12 and 2^20 references,
# the whole command, the simulation, Nsight Compute on the cells kernels, and the CPU engine on this host.
set -u
tar xzf .carry/bin.tgz
export GEOKNN_DATA=$PWD/.data
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date
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
echo "== knn simulate --obs 2^24 --ref 2^16 --steps 100 --replace 0.01"
bin/knn simulate --obs 2^24 --ref 2^16 --steps 100 --replace 0.01 2>&1 | tail -3
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
echo "== CPU of this host"
lscpu | grep -E "Model name|^CPU\(s\)|Thread|MHz"; grep -m1 -ow avx2 /proc/cpuinfo; grep -m1 -ow fma /proc/cpuinfo
echo "== CPU engine: knn run --obs 2^22 --ref 2^16 --engine cpu --repeat 3 (16 cores, then taskset 2 cores, 1 core)"
bin/knn run --obs 2^22 --ref 2^16 --engine cpu --repeat 3 2>&1 | grep -E "engine:|query"
taskset -c 0,1 bin/knn run --obs 2^22 --ref 2^16 --engine cpu --repeat 3 2>&1 | grep -E "engine:|query"
taskset -c 0 bin/knn run --obs 2^21 --ref 2^16 --engine cpu --repeat 3 2>&1 | grep -E "engine:|query"
echo "== cities as references: 16 cores, 2 cores"
bin/knn run --obs 2^22 --ref .data/cities.csv --engine cpu --repeat 3 2>&1 | grep -E "query"
taskset -c 0,1 bin/knn run --obs 2^22 --ref .data/cities.csv --engine cpu --repeat 3 2>&1 | grep -E "query"
echo "== go test -bench CPUGrid (engine.test -test.bench CPUGrid -test.benchtime 3x -test.cpu 1,2,16)"
(cd internal/engine && ../../bin/engine.test -test.run XXX -test.bench 'CPUGrid$' -test.benchtime 3x -test.cpu 1,2,16 2>&1 | grep -E "Benchmark|ok")
