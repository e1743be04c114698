#!/usr/bin/env bash
# grid_query experiments: phase-1 statistics, a box-based stop test, segmented cooperative passes.
set -u
tar xzf .carry/bin.tgz
K=internal/kernels
nvcc -cubin -arch=sm_90 -O3 -Xptxas -v -o /tmp/x.cubin $K/grid.cu 2>&1 | grep -A1 "grid_query" | tail -1
for v in "base:" "exp:" "box:-DGQ_BOXSTOP" "seg:-DGQ_SEG=2" "segbox:-DGQ_SEG=2 -DGQ_BOXSTOP" "seg3box:-DGQ_SEG=3 -DGQ_BOXSTOP" "stats:-DGQ_STATS" "statsegbox:-DGQ_STATS -DGQ_SEG=2 -DGQ_BOXSTOP"; do
  name=${v%%:*}; flags=${v#*:}
  src=docs/logs/scripts/grid_query_variants.cu; [ $name = base ] && src=$K/grid.cu
  d=/tmp/v_$name; mkdir -p $d; cp $K/*.ptx $d/
  nvcc -ptx -arch=compute_90 -O3 -I$K $flags -o $d/grid.ptx $src 2>/tmp/nv_$name.err || { echo "nvcc failed for $name"; head -30 /tmp/nv_$name.err; continue; }
  nvcc -cubin -arch=sm_90 -O3 -I$K $flags -Xptxas -v -o /tmp/x.cubin $src 2>&1 | grep -A1 "grid_query" | tail -1 | sed "s/^/$name /"
  echo "== variant $name ($flags)"
  case $name in stats*)
    for gen in sphere clustered; do GEOKNN_PTX_DIR=$d timeout 120 bin/knn run --obs 2^27 --ref 2^16 --gen $gen --engine gpu 2>&1 | grep gq_stats | tail -1 | sed "s/^/$gen /"; done
    GEOKNN_PTX_DIR=$d timeout 120 bin/knn run --obs 2^27 --ref .data/cities.csv --engine gpu 2>&1 | grep gq_stats | tail -1 | sed "s/^/cities /"
    continue;;
  esac
  GEOKNN_PTX_DIR=$d timeout 60 bin/knn simulate --obs 2^24 --ref 2^16 --steps 200 --replace 0.01 --quiet 2>&1 | grep -E "^steps" | sed 's/pairs.*whole/whole/'
  for gen in sphere clustered; do GEOKNN_PTX_DIR=$d timeout 60 bin/knn run --obs 2^27 --ref 2^16 --gen $gen --engine gpu --repeat 3 --validate 16384 2>&1 | grep -E "query 3|validat" | sed 's/.*GPU kernels/kernels/;s/(index.*//' | sed "s/^/$gen /"; done
  GEOKNN_PTX_DIR=$d timeout 90 bin/knn run --obs 2^27 --ref .data/cities.csv --engine gpu --repeat 2 --validate 16384 2>&1 | grep -E "query 2|validat" | sed 's/.*GPU kernels/kernels/;s/(index.*//' | sed "s/^/cities /"
done
