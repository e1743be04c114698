#!/usr/bin/env bash
# The build of 1f9dd02 (new: the k-d tree on the query's team, the face build's scratch kept; dev88.sh's build
# plus the tree's top levels shared only while fewer than half the workers' nodes and the observations' check in
# blocks of 2^16) on the card: .ci/gpu-check (the references' preparation, the grid fill and the k-d tree, which
# the GPU's paths share, changed); then beside b34d90e (prev), alternating: knn run medians against the sphere and
# the cities on 16 cores (--repeat 11) and 2 (taskset -c 0,1, --repeat 5), two rounds; the validated stages;
# BenchmarkCPUGrid on 16 (-count 5) and on 2 (taskset, -count 3).
set -u
tar xzf .carry/bin.tgz
cd .carry/dev90 && gunzip -f ./*.gz && chmod +x ./* && cd ../..
export GEOKNN_DATA=$PWD/.data
D=$PWD/.carry/dev90
nvidia-smi --query-gpu=name --format=csv,noheader; lscpu | grep -E "Model name"; date
.ci/gpu-check /tmp/gc > $OUT/gpu-check.txt 2>&1; echo "gpu-check exit $?"
grep -E "^==|FAILED|passed|skipped|identical|validate|query 3" $OUT/gpu-check.txt | head -40
date
med() { grep -oE "query +[0-9]+: +[0-9.]+ s" | awk '{print $3}' | sort -n | awk '{a[NR]=$1} END {printf "median %.4f s  min %.4f  max %.4f  (%d queries)\n", a[int((NR+1)/2)], a[1], a[NR], NR}'; }
for round in 1 2; do
  for ref in 2^16 .data/cities.csv; do
    for v in prev new; do
      K=$D/knnprev; [ $v = new ] && K=bin/knn
      echo "== $v --ref $ref, 16 cores"; $K run --obs 2^22 --ref $ref --engine cpu --host-points --repeat 11 2>&1 | med
      echo "== $v --ref $ref, 2 cores"; taskset -c 0,1 $K run --obs 2^22 --ref $ref --engine cpu --host-points --repeat 5 2>&1 | med
    done
  done
done
echo "== new: validated, 16 cores"
for ref in 2^16 .data/cities.csv; do
  bin/knn run --obs 2^22 --ref $ref --engine cpu --host-points --repeat 11 -v --validate 20000 2>&1 | grep -E "validate:|^index|check obs|prepare|k-d tree|face cells|  batch|  query  "
done
cd internal/engine
for v in prev new; do
  T=$D/prev.test; [ $v = new ] && T=../../bin/engine.test
  echo "== CPUGrid 16: $v"; $T -test.run XXX -test.bench 'CPUGrid/obs=4194304' -test.benchtime 3x -test.count 5 -test.cpu 16 | grep Bench
  echo "== CPUGrid 2: $v"; taskset -c 0,1 $T -test.run XXX -test.bench 'CPUGrid/obs=4194304' -test.benchtime 3x -test.count 3 -test.cpu 2 | grep Bench
done
date
