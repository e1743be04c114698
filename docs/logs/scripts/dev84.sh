#!/usr/bin/env bash
# After the review commit: every GPU test of the engine and the root package on the card (the references'
# preparation and the face cells' status reads were refactored), and the CPU query of the review build (new)
# beside the build dev83.sh ran (prev), alternating: knn run --repeat 11 against the sphere and the cities on 16
# cores, each query's time printed (the median is the figure); BenchmarkCPUGrid 2^22 x 2^16 on 16, -count 5.
set -u
tar xzf .carry/bin.tgz
cd .carry/dev84 && gunzip -f ./*.gz && chmod +x ./* && cd ../..
export GEOKNN_DATA=$PWD/.data
D=$PWD/.carry/dev84
nvidia-smi --query-gpu=name --format=csv,noheader; lscpu | grep -E "Model name"; date
(cd internal/engine && timeout 400 ../../bin/engine.test -test.count=1 2>&1 | tail -3)
timeout 200 bin/geoknn.test -test.count=1 2>&1 | tail -3
med() { grep -oE "query +[0-9]+: +[0-9.]+ s" | awk '{print $3}' | sort -n | awk '{a[NR]=$1} END {printf "median %.4f s  min %.4f  max %.4f  (%d queries)\n", a[int((NR+1)/2)], a[1], a[NR], NR}'; }
for round in 1 2; do
  for ref in 2^16 .data/cities.csv; do
    echo "== prev --ref $ref, 16 cores"; $D/knnprev run --obs 2^22 --ref $ref --engine cpu --host-points --repeat 11 2>&1 | med
    echo "== new --ref $ref, 16 cores"; bin/knn run --obs 2^22 --ref $ref --engine cpu --host-points --repeat 11 2>&1 | med
  done
done
bin/knn run --obs 2^22 --ref 2^16 --engine cpu --host-points --repeat 3 -v --validate 20000 2>&1 | grep -E "validate:|check obs|prepare|face cells  |  query  "
cd internal/engine
for v in prev new; do
  T=$D/prev.test; [ $v = new ] && T=../../bin/engine.test
  echo "== CPUGrid: $v"; $T -test.run XXX -test.bench 'CPUGrid/obs=4194304' -test.benchtime 3x -test.count 5 -test.cpu 16 | grep Bench
done
