#!/usr/bin/env bash
# The review build (new: the face tree built only between steps, a waiting first-level tile rebuilt without the
# grid gather it already tried, buildKDTreeIn) beside d2e867a (prev): the engine's and the root package's tests on
# the card (the GPU's plans build their tree through buildKDTree); 2^27 x 2^16 sphere and 2^27 x the cities on the
# GPU; knn run medians on 16 cores against the sphere and the cities, two rounds; BenchmarkFaceBuild on 16.
set -u
tar xzf .carry/bin.tgz
cd .carry/dev96 && gunzip -f ./*.gz && chmod +x ./* && cd ../..
export GEOKNN_DATA=$PWD/.data
D=$PWD/.carry/dev96
nvidia-smi --query-gpu=name --format=csv,noheader; lscpu | grep -E "Model name"; date
(cd internal/engine && timeout 300 ../../bin/engine.test -test.count=1 2>&1 | tail -2)
timeout 150 bin/geoknn.test -test.count=1 2>&1 | tail -2
for ref in "2^16" ".data/cities.csv"; do
  echo "== GPU --ref $ref"; bin/knn run --obs 2^27 --ref $ref --engine gpu --repeat 3 --validate 16384 2>&1 | grep -E "query 3|validate:|rror"
done
med() { grep -oE "query +[0-9]+: +[0-9.]+ s" | awk '{print $3}' | sort -n | awk '{a[NR]=$1} END {printf "median %.4f s  min %.4f  max %.4f  (%d queries)\n", a[int((NR+1)/2)], a[1], a[NR], NR}'; }
for round in 1 2; do
  for ref in 2^16 .data/cities.csv; do
    for v in prev new; do
      K=$D/knnprev; [ $v = new ] && K=bin/knn
      echo "== $v --ref $ref, 16 cores"; $K run --obs 2^22 --ref $ref --engine cpu --host-points --repeat 11 2>&1 | med
    done
  done
done
echo "== new: validated, cities, 16 cores"
bin/knn run --obs 2^22 --ref .data/cities.csv --engine cpu --host-points --repeat 11 -v --validate 20000 2>&1 | grep -E "validate:|k-d tree|face cells|  query  "
cd internal/engine
for round in 1 2; do
  for v in prev new; do
    T=$D/prev.test; [ $v = new ] && T=../../bin/engine.test
    echo "== FaceBuild: $v"; $T -test.run XXX -test.bench 'FaceBuild' -test.benchtime 20x -test.count 3 -test.cpu 16 | grep Bench
  done
done
date
