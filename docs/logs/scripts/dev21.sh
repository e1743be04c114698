#!/usr/bin/env bash
# Banded observation sort (sessions: answers written within one 2^22 band at a time); grid_query's SASS profile.
set -u
tar xzf .carry/bin.tgz
mkdir -p /tmp/kb
internal/kernels/build.sh /tmp/kb > /tmp/build.log 2>&1; echo "build rc $?"; grep -iE "error" /tmp/build.log | head -20
tar czf $OUT/kernels.tgz -C /tmp/kb .
export GEOKNN_PTX_DIR=/tmp/kb GEOKNN_SASS_DIR=/tmp/kb/sass GEOKNN_DATA=$PWD/.data
(cd internal/engine && timeout 300 ../../bin/engine.test -test.run 'TestGPU|Session' -test.count=1 > /tmp/eng.log 2>&1; echo "engine tests rc $?"; grep -E "^(--- FAIL|FAIL|ok|PASS)" /tmp/eng.log | head; grep -c -- "--- PASS" /tmp/eng.log)
cp /tmp/eng.log $OUT/eng.log
echo "== timings"
for r in 1 2 3; do timeout 60 bin/knn simulate --obs 2^24 --ref 2^16 --steps 200 --replace 0.01 --quiet 2>&1 | grep -E "^steps" | sed 's/pairs.*whole/whole/'; done
timeout 60 bin/knn simulate --obs 2^26 --ref 2^16 --steps 50 --replace 0.01 --quiet 2>&1 | grep -E "^steps" | sed 's/pairs.*whole/whole/;s/^/2^26 /'
for gen in sphere; do timeout 90 bin/knn run --obs 2^27 --ref 2^16 --gen $gen --engine gpu --repeat 3 --validate 16384 2>&1 | grep -E "query 3|validat" | sed 's/.*GPU kernels/kernels/' | sed "s/^/$gen /"; done
echo "== ncu"
M=gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,smsp__inst_executed.sum,smsp__thread_inst_executed.sum,sm__throughput.avg.pct_of_peak_sustained_elapsed,sm__warps_active.avg.pct_of_peak_sustained_active
timeout 120 ncu --csv --metrics $M --kernel-name regex:"grid_query" --launch-skip 20 --launch-count 2 bin/knn simulate --obs 2^24 --ref 2^16 --steps 12 --replace 0.01 --quiet > $OUT/session_ncu.csv 2>/dev/null; echo "session ncu rc $?"
grep -E "grid_query" $OUT/session_ncu.csv | awk -F'","' '{print $(NF-2), $(NF-1), $NF}' | head -14
timeout 200 ncu --set full --kernel-name grid_query --launch-skip 2 --launch-count 1 -o /tmp/gq bin/knn run --obs 2^22 --ref 2^16 --engine gpu -q > /tmp/ncu1.log 2>&1; echo "ncu full rc $?"; tail -3 /tmp/ncu1.log
ncu -i /tmp/gq.ncu-rep --page source --csv --print-source sass > /tmp/gq_sass.csv 2>/tmp/src.err; echo "source page rc $?"; head -c 600 /tmp/src.err; wc -l /tmp/gq_sass.csv
ncu -i /tmp/gq.ncu-rep --page details --csv > /tmp/gq_details.csv 2>&1
tar czf $OUT/gq.tgz -C /tmp gq_sass.csv gq_details.csv
