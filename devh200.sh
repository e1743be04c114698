export GEOKNN_DATA=$PWD/.data
mkdir -p $OUT/ptx
kernels/build.sh $OUT/ptx > $OUT/build.log 2>&1 || { cat $OUT/build.log; exit 1; }
export GEOKNN_PTX_DIR=$OUT/ptx
nvidia-smi --query-gpu=name,clocks.sm --format=csv,noheader
(cd engine && timeout 300 ../bin/engine.test -test.run 'GPU|Session|ListDevices' -test.v 2>&1 | grep -E "^(--- |PASS|FAIL|ok)" > $OUT/engine-tests.log; tail -4 $OUT/engine-tests.log)
for gen in sphere clustered; do timeout 100 ./bin/knn run --obs 2^27 --ref 2^16 --gen $gen --engine gpu --repeat 3 --validate 16384 2>&1 | grep "query 3\|validate"; done
timeout 150 ./bin/knn simulate --obs 2^24 --ref 2^16 --steps 100 --replace 0.01 --quiet 2>&1 | tail -1
timeout 300 ./bin/knn bench --engine gpu --gpus 1 --algo seed,brute,grid --gen seed --obs 2^27 --ref 2^16 --repeat 3 --validate 4096 --json $OUT/h200-headline.json --plot $OUT/h200-headline.png > $OUT/h200-headline.md 2>$OUT/bench.err; tail -2 $OUT/bench.err; sed -n 1,16p $OUT/h200-headline.md
