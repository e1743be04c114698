#!/usr/bin/env bash
# The k-d tree built on the query's team (one level's median selections in shared steps) in the engine's kept
# memory (new) beside b34d90e (prev): every engine and root-package test on the card (the GPU's plan builds its
# tree the same way); knn run --repeat 11 medians against the sphere and the cities on 16 cores, alternating,
# two rounds; the stages of the cities' query; the tree's and the face build's benchmarks on 16 cores; the
# tree's phases (a temporary test binary: the fill, each level of shared selections, the subtrees).
set -u
tar xzf .carry/bin.tgz
cd .carry/dev86 && gunzip -f ./*.gz && chmod +x ./* && cd ../..
export GEOKNN_DATA=$PWD/.data
D=$PWD/.carry/dev86
nvidia-smi --query-gpu=name --format=csv,noheader; lscpu | grep -E "Model name"; date
(cd internal/engine && timeout 300 ../../bin/engine.test -test.count=1 2>&1 | tail -3)
timeout 150 bin/geoknn.test -test.count=1 2>&1 | tail -3
date
med() { grep -oE "query +[0-9]+: +[0-9.]+ s" | awk '{print $3}' | sort -n | awk '{a[NR]=$1} END {printf "median %.4f s  min %.4f  max %.4f  (%d queries)\n", a[int((NR+1)/2)], a[1], a[NR], NR}'; }
for round in 1 2; do
  for ref in 2^16 .data/cities.csv; do
    echo "== prev --ref $ref, 16 cores"; $D/knnprev run --obs 2^22 --ref $ref --engine cpu --host-points --repeat 11 2>&1 | med
    echo "== new --ref $ref, 16 cores"; bin/knn run --obs 2^22 --ref $ref --engine cpu --host-points --repeat 11 2>&1 | med
  done
done
for v in prev new; do
  K=$D/knnprev; [ $v = new ] && K=bin/knn
  echo "== stages: $v, cities, 11 queries"
  $K run --obs 2^22 --ref .data/cities.csv --engine cpu --host-points --repeat 11 -v --validate 20000 2>&1 | grep -E "validate:|index:|check obs|prepare|k-d tree|face cells|  batch|  query  "
done
cd internal/engine
for v in prev new; do
  T=$D/prev.test; [ $v = new ] && T=../../bin/engine.test
  echo "== FaceBuild: $v"; $T -test.run XXX -test.bench 'FaceBuild' -test.benchtime 20x -test.count 3 -test.cpu 16 | grep Bench
done
../../bin/engine.test -test.run XXX -test.bench 'KDTreeBuild' -test.benchtime 20x -test.count 3 -test.cpu 16 | grep Bench
$D/phase2.test -test.run ZZKDPhases -test.count 1 | head -8
date
