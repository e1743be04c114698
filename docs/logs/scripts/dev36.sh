#!/usr/bin/env bash
# Face cells' layout sweep (cellsPerRef, split above, levels) through GEOKNN_X_CELLS on the build of dev35 without
# the 8-blocks bound (uncommitted on 8ad0e98): ptxas resources, fresh kernels, then 2^27 observations against
# cities, clustered 2^16, sphere 2^16 and 2^20 (third query, 4096 validated).
set -u
tar xzf .carry/bin.tgz
export GEOKNN_DATA=$PWD/.data
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date
nvcc -cubin -arch=sm_90 -O3 -Xptxas -v -o /tmp/cells.cubin internal/kernels/cells.cu 2>&1 | grep -E "Function properties|registers|spill" | grep -A2 cells_build
internal/kernels/build.sh $OUT/ptx > $OUT/build.log 2>&1 || { cat $OUT/build.log; exit 1; }
(cd $OUT/ptx && tar czf $OUT/kernels.tgz .)
export GEOKNN_PTX_DIR=$OUT/ptx GEOKNN_SASS_DIR=$OUT/ptx/sass
for ref in .data/cities.csv "2^16 --gen clustered" "2^16 --gen sphere" "2^20"; do
  for x in 2,32,3 1,32,3 0.5,32,3 0.5,32,4 0.25,32,4 0.25,16,4 0.5,16,4 1,16,3 1,32,4; do
    echo "== GEOKNN_X_CELLS=$x knn run --obs 2^27 --ref $ref --engine gpu --repeat 3 --validate 4096"
    GEOKNN_X_CELLS=$x timeout 60 bin/knn run --obs 2^27 --ref $ref --engine gpu --repeat 3 --validate 4096 2>&1 | grep -E "query 3|index:|validate" | sed 's/k-d tree.*query (sampled[^)]*);//'
  done
done
