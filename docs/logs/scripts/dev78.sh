#!/usr/bin/env bash
# cells_build asked for 8 blocks of 128 threads a SM (64 registers; dev77.sh measured the session step 1.50 -> 1.48
# ms with it): cells.cu rebuilt (PTX and machine code, as internal/kernels/build.sh makes them), the face-cell and
# session GPU tests on it, the cities as references (the skew target) beside the build before, and the session
# validated.
set -u
tar xzf .carry/bin.tgz
export GEOKNN_DATA=$PWD/.data
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
cp "$k/cells.ptx" "$k/sass/cells.fatbin.gz" "$OUT/"
cd internal/engine
GEOKNN_PTX_DIR=$k GEOKNN_SASS_DIR=$k/sass timeout 100 ../../bin/engine.test -test.v -test.count=1 -test.run '^TestGPU(Cells|Session|MatchesCPU|Tree|CitiesAirports)' > "$OUT/engine-cells-tests.log" 2>&1; echo "engine tests rc $?"
grep -E "^(--- |ok|PASS|FAIL)" "$OUT/engine-cells-tests.log" | head -30
cd ../..
for v in before new; do
  env=""; [ $v = new ] && env="GEOKNN_PTX_DIR=$k GEOKNN_SASS_DIR=$k/sass"
  echo "== $v: knn run --obs 2^27 --ref cities.csv --engine gpu --repeat 3 --validate 16384"
  env $env bin/knn run --obs 2^27 --ref .data/cities.csv --engine gpu --repeat 3 --validate 16384 2>&1 | grep -E "query 3|validate|rror"
done
echo "== new: knn simulate --obs 2^24 --ref 2^16 --steps 100 --dt 60 --replace 0.01 --validate 16384"
GEOKNN_PTX_DIR=$k GEOKNN_SASS_DIR=$k/sass bin/knn simulate --obs 2^24 --ref 2^16 --steps 100 --dt 60 --replace 0.01 --validate 16384 2>&1 | grep -E "steps:|step phases|validate|rror"
rm -rf "$k"
