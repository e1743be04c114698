#!/usr/bin/env bash
# Roofline figures per kernel (Nsight Compute metrics), shipped build, one H200.
set -u
tar xzf .carry/bin.tgz
M=gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_bytes.sum,smsp__inst_executed.sum,smsp__thread_inst_executed.sum,sm__throughput.avg.pct_of_peak_sustained_elapsed,dram__throughput.avg.pct_of_peak_sustained_elapsed,smsp__sass_thread_inst_executed_op_fadd_pred_on.sum,smsp__sass_thread_inst_executed_op_fmul_pred_on.sum,smsp__sass_thread_inst_executed_op_ffma_pred_on.sum,smsp__sass_thread_inst_executed_op_dadd_pred_on.sum,smsp__sass_thread_inst_executed_op_dmul_pred_on.sum,smsp__sass_thread_inst_executed_op_dfma_pred_on.sum,sm__warps_active.avg.pct_of_peak_sustained_active
run() { name=$1; shift; echo "== $name: $*"; timeout 200 ncu --csv --metrics $M "$@" > $OUT/$name.csv 2>$OUT/$name.err; echo "rc $?"; grep -v '^==PROF==' $OUT/$name.csv | wc -l; }
run grid --launch-skip 0 --launch-count 40 bin/knn run --obs 2^22 --ref 2^16 --engine gpu -q
run knn8 --kernel-name regex:grid_knn --launch-count 2 bin/knn run --obs 2^22 --ref 2^16 --engine gpu -q --k 8
run within --kernel-name regex:grid_within --launch-count 2 bin/knn run --obs 2^22 --ref 2^16 --engine gpu -q --within-m 50000
run brute --kernel-name regex:"block_min|global_min|refine" --launch-count 6 bin/knn run --obs 2^20 --ref 2^16 --engine gpu --algo brute -q
run session --kernel-name regex:"grid_query|move|draw_replace|gather" --launch-skip 20 --launch-count 8 bin/knn simulate --obs 2^24 --ref 2^16 --steps 12 --replace 0.01 --quiet
tar czf $OUT/ncu.tgz -C $OUT grid.csv knn8.csv within.csv brute.csv session.csv
ls -la $OUT
