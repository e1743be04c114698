#!/usr/bin/env bash
# CPU only: the build before this session (base) and the final one (new: a team of workers awake across the
# query's steps, the grid's counting sort on every worker, the last query's memory kept), alternating: knn run
# --repeat 11 against the sphere and the cities on 16 cores and on 2 (taskset), each query's time printed (the
# median is the figure); BenchmarkCPUGrid 2^22 x 2^16 on 16 cores, -count 5.
set -u
cd .carry/dev83 && gunzip -f ./*.gz && chmod +x ./* && cd ../..
export GEOKNN_DATA=$PWD/.data
D=$PWD/.carry/dev83
lscpu | grep -E "Model name"; date
med() { grep -oE "query +[0-9]+: +[0-9.]+ s" | awk '{print $3}' | sort -n | awk '{a[NR]=$1} END {printf "median %.4f s  min %.4f  max %.4f  (%d queries)\n", a[int((NR+1)/2)], a[1], a[NR], NR}'; }
for round in 1 2; do
  for ref in 2^16 .data/cities.csv; do
    for v in knnbase knn; do
      echo "== $v --ref $ref, 16 cores"; $D/$v run --obs 2^22 --ref $ref --engine cpu --host-points --repeat 11 2>&1 | med
      echo "== $v --ref $ref, 2 cores"; taskset -c 0,1 $D/$v run --obs 2^22 --ref $ref --engine cpu --host-points --repeat 5 2>&1 | med
    done
  done
done
echo "== new: validated, 16 cores"
for ref in 2^16 .data/cities.csv; do
  $D/knn run --obs 2^22 --ref $ref --engine cpu --host-points --repeat 3 -v --validate 20000 2>&1 | grep -E "validate:|^index|check obs|prepare|k-d tree|face cells  |  query  "
done
cd internal/engine
for v in base new; do
  echo "== CPUGrid: $v"
  $D/$v.test -test.run XXX -test.bench 'CPUGrid/obs=4194304' -test.benchtime 3x -test.count 5 -test.cpu 16 | grep Bench
done
