#!/usr/bin/env bash
# Launch bounds of the face cells' kernels (a temporary sweep; cells.cu unchanged in the repository): cells_query
# asked for 6 or 8 blocks of 256 threads a SM, cells_build for 8 blocks of 128, each built to PTX from a copy of
# cells.cu (registers and spills from ptxas), then knn simulate --obs 2^24 --ref 2^16 and the 2^27 x 2^16 grid run
# with each, interleaved, all kernels from PTX (GEOKNN_PTX_DIR) so that every variant loads alike.
set -u
tar xzf .carry/bin.tgz
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date
here=internal/kernels W=/tmp/variants
declare -A SED=(
  [base]='s/XXXX//'
  [q6]='s/__launch_bounds__(CQ_THREADS)/__launch_bounds__(CQ_THREADS, 6)/'
  [q8]='s/__launch_bounds__(CQ_THREADS)/__launch_bounds__(CQ_THREADS, 8)/'
  [b8]='s/__launch_bounds__(CB_WARPS \* 32)/__launch_bounds__(CB_WARPS * 32, 8)/'
)
for v in base q6 q8 b8; do
  mkdir -p $W/$v && cp $here/*.ptx $W/$v/
  sed "${SED[$v]}" $here/cells.cu > $here/cells_$v.cu
  grep -c "__launch_bounds__" $here/cells_$v.cu >/dev/null
  nvcc -ptx -arch=compute_80 -O3 -o $W/$v/cells.ptx $here/cells_$v.cu || echo "$v: PTX failed"
  echo "== $v: ptxas sm_90"
  nvcc -cubin -arch=sm_90 -O3 -Xptxas -v -o /tmp/c_$v.cubin $here/cells_$v.cu 2>&1 | grep -A3 -E "entry function '(cells_build|cells_query_f64)'" | grep -E "entry|registers|spill"
  rm $here/cells_$v.cu
done
sim="simulate --obs 2^24 --ref 2^16 --steps 100 --dt 60 --replace 0.01"
for v in base q6 q8 b8; do GEOKNN_PTX_DIR=$W/$v bin/knn run --obs 2^10 --ref 2^10 -q >/dev/null 2>&1; done  # JIT caches warm
for round in 1 2; do
  for v in base q6 q8 b8; do
    echo "== $v: knn $sim"; GEOKNN_PTX_DIR=$W/$v bin/knn $sim 2>&1 | grep -E "steps:|step phases|rror"
    echo "== $v: knn run --obs 2^27 --ref 2^16 --engine gpu --repeat 3"; GEOKNN_PTX_DIR=$W/$v bin/knn run --obs 2^27 --ref 2^16 --engine gpu --repeat 3 2>&1 | grep -E "query 3|rror"
  done
done
