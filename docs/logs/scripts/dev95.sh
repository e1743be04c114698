#!/usr/bin/env bash
# cells_query answering two observations a thread, their stages side by side (CQ_OBS 2; the launch takes half the
# blocks: bin is the new build, knnprev 1f9dd02 with the shipped kernels): cells.cu rebuilt (PTX and machine code) into
# $OUT/k, ptxas's registers, the face-cell and session GPU tests on it, then the build before (the shipped
# kernels) and new alternating: 2^27 x 2^16 sphere and clustered and 2^27 x the cities (--repeat 3, the third
# query's kernels), two rounds, and the session's 100 steps.
set -u
tar xzf .carry/bin.tgz
export GEOKNN_DATA=$PWD/.data
cd .carry/dev95 && gunzip -f ./*.gz && chmod +x ./* && cd ../..
D=$PWD/.carry/dev95
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date
here=internal/kernels k=$OUT/k
mkdir -p "$k/sass" && cp $here/*.ptx "$k/" && cp $here/sass/*.fatbin.gz "$k/sass/"
sum=$(cat $here/cells.cu $(ls $here/*.cuh | sort) | sha256sum | cut -d' ' -f1)
gencode=""; for a in 80 86 89 90; do gencode="$gencode -gencode arch=compute_$a,code=sm_$a"; done
nvcc -ptx -arch=compute_80 -O3 -o /tmp/c.ptx $here/cells.cu || echo "PTX build failed"
{ echo "// geoknn-source-sha256: $sum"; echo "// built by internal/kernels/build.sh with $(nvcc --version | tail -1)"; cat /tmp/c.ptx; } > "$k/cells.ptx"
nvcc -fatbin -O3 $gencode -o /tmp/c.fatbin $here/cells.cu || echo "fatbin build failed"
gzip -9n < /tmp/c.fatbin > "$k/sass/cells.fatbin.gz"
echo "$sum  cells.fatbin.gz" > "$OUT/cells.sum"
nvcc -cubin -arch=sm_90 -O3 -Xptxas -v -o /tmp/c.cubin $here/cells.cu 2>&1 | grep -A3 "entry function .cells_query_f64" | grep -E "Used|spill"
cd internal/engine
GEOKNN_PTX_DIR=$k GEOKNN_SASS_DIR=$k/sass timeout 150 ../../bin/engine.test -test.v -test.count=1 -test.run '^TestGPU(Cells|Session|MatchesCPU|Tree|CitiesAirports)' > "$OUT/engine-cells-tests.log" 2>&1; echo "engine tests rc $?"
grep -E "^(--- FAIL|ok|PASS|FAIL)" "$OUT/engine-cells-tests.log" | head; grep -c -- "--- PASS" "$OUT/engine-cells-tests.log"
cd ../..
for round in 1 2; do
  for ref in "2^16 --gen sphere" "2^16 --gen clustered" ".data/cities.csv"; do
    for v in before new; do
      env=""; [ $v = new ] && env="GEOKNN_PTX_DIR=$k GEOKNN_SASS_DIR=$k/sass"
      echo "== $v: --ref $ref"
      K=$D/knnprev; [ $v = new ] && K=bin/knn
      env $env $K run --obs 2^27 --ref $ref --engine gpu --repeat 3 --validate 16384 2>&1 | grep -E "query 3|validate:|rror"
    done
  done
done
for v in before new; do
  env=""; [ $v = new ] && env="GEOKNN_PTX_DIR=$k GEOKNN_SASS_DIR=$k/sass"
  echo "== $v: knn simulate --obs 2^24 --ref 2^16 --steps 100 --dt 60 --replace 0.01"
  K=$D/knnprev; [ $v = new ] && K=bin/knn
  env $env $K simulate --obs 2^24 --ref 2^16 --steps 100 --dt 60 --replace 0.01 2>&1 | grep -E "steps:|rror"
done
date
