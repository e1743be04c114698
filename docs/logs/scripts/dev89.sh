#!/usr/bin/env bash
# A face tile whose pool overflows gathers a pool for each quarter before its cells walk the tree: the face
# build with it (on: bin/engine.test) and without (q_off.test: the same build with the quarters switched off) on 16 and 2 cores,
# alternating; then the current build (new: dev88.sh's, the quarters, the tree's top levels shared only while
# fewer than half the workers' nodes, the observations' check in blocks of 2^16) beside b34d90e (prev): knn run
# --repeat 11 medians on 16 cores, two rounds; BenchmarkCPUGrid on 16, -count 5.
set -u
tar xzf .carry/bin.tgz
cd .carry/dev89 && gunzip -f ./*.gz && chmod +x ./* && cd ../..
export GEOKNN_DATA=$PWD/.data
D=$PWD/.carry/dev89
nvidia-smi --query-gpu=name --format=csv,noheader; lscpu | grep -E "Model name"; date
cd internal/engine
for cpu in 16 2; do
  for round in 1 2; do
    for v in off on; do
      T=$D/q_off.test; [ $v = on ] && T=../../bin/engine.test
      echo "== quarters $v, $cpu cores"; $T -test.run XXX -test.bench 'FaceBuild' -test.benchtime 10x -test.count 3 -test.cpu $cpu | grep Bench
    done
  done
done
cd ../..
med() { grep -oE "query +[0-9]+: +[0-9.]+ s" | awk '{print $3}' | sort -n | awk '{a[NR]=$1} END {printf "median %.4f s  min %.4f  max %.4f  (%d queries)\n", a[int((NR+1)/2)], a[1], a[NR], NR}'; }
for round in 1 2; do
  for ref in 2^16 .data/cities.csv; do
    echo "== prev --ref $ref, 16 cores"; $D/knnprev run --obs 2^22 --ref $ref --engine cpu --host-points --repeat 11 2>&1 | med
    echo "== new --ref $ref, 16 cores"; bin/knn run --obs 2^22 --ref $ref --engine cpu --host-points --repeat 11 2>&1 | med
  done
done
echo "== stages: new, cities, 11 queries"
bin/knn run --obs 2^22 --ref .data/cities.csv --engine cpu --host-points --repeat 11 -v --validate 20000 2>&1 | grep -E "validate:|index:|check obs|prepare|k-d tree|face cells|  batch|  query  "
cd internal/engine
for v in prev new; do
  T=$D/prev.test; [ $v = new ] && T=../../bin/engine.test
  echo "== CPUGrid: $v"; $T -test.run XXX -test.bench 'CPUGrid/obs=4194304' -test.benchtime 3x -test.count 5 -test.cpu 16 | grep Bench
done
date
