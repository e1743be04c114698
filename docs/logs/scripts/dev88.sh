#!/usr/bin/env bash
# The face build's scratch kept by the engine (outcomes, builders and their lists' arena, the layout's spans), each
# level's children in one slab, the layout in blocks of 64 cells, the grid fill's offsets in blocks of 1,024 cells
# and the distinct references kept on the team (new), beside b34d90e (prev): knn run --repeat 11 medians on 16
# cores, alternating, two rounds; the cities' stages; BenchmarkCPUGrid on 16, -count 5; FaceBuild; then the
# step-by-step timing of this build (docs/logs/cpu-steps).
set -u
tar xzf .carry/bin.tgz
cd .carry/dev88 && gunzip -f ./*.gz && chmod +x ./* && cd ../..
export GEOKNN_DATA=$PWD/.data
D=$PWD/.carry/dev88
nvidia-smi --query-gpu=name --format=csv,noheader; lscpu | grep -E "Model name"; date
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
  echo "== FaceBuild: $v"; $T -test.run XXX -test.bench 'FaceBuild' -test.benchtime 20x -test.count 3 -test.cpu 16 | grep Bench
done
echo "== steps"
$D/steps.test -test.run ZZSteps 2>&1 > $OUT/steps.log
grep -E "rep|steps wall" $OUT/steps.log
date
