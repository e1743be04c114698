#!/usr/bin/env bash
# The shipped build: grid sides around the planner's 84 for 2^16 uniform references; per-kernel times of one 2^22 job (Nsight Compute).
set -u
tar xzf .carry/bin.tgz
for side in 60 72 84 100 120 144; do
  for obs in 2^27 2^24; do
    timeout 60 bin/knn run --obs $obs --ref 2^16 --grid-side $side --engine gpu --repeat 3 2>&1 | grep -E "query 3" | sed 's/.*GPU kernels/kernels/;s/(index.*//' | sed "s/^/side $side obs $obs /"
  done
done
timeout 60 bin/knn run --obs 2^27 --ref 2^16 --engine gpu --repeat 3 --validate 16384 2>&1 | grep -E "query 3|index|validat"
M=gpu__time_duration.sum,smsp__inst_executed.sum,smsp__thread_inst_executed.sum,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_bytes.sum,sm__throughput.avg.pct_of_peak_sustained_elapsed,sm__warps_active.avg.pct_of_peak_sustained_active
timeout 150 ncu --csv --metrics $M --launch-skip 0 --launch-count 60 bin/knn run --obs 2^24 --ref 2^16 --engine gpu -q > /tmp/k.csv 2>/dev/null; echo "ncu rc $?"
python3 - <<'PY'
import csv, io, collections
rows=[l for l in open('/tmp/k.csv') if l.startswith('"')]
L=collections.OrderedDict()
for r in csv.DictReader(io.StringIO("".join(rows))):
    L.setdefault((r["ID"], r["Kernel Name"]), {})[r["Metric Name"]] = float(r["Metric Value"].replace(",",""))
K=collections.OrderedDict()
for (_,k),m in L.items(): K.setdefault(k,[]).append(m)
for k,ms in K.items():
    mean=lambda x: sum(m[x] for m in ms)/len(ms)
    print(f"{k:20s} n {len(ms):3d} {mean('gpu__time_duration.sum')/1e3:9.1f} us  warp inst {mean('smsp__inst_executed.sum')/1e6:8.2f} M lanes {mean('smsp__thread_inst_executed.sum')/max(mean('smsp__inst_executed.sum'),1):5.1f} DRAM r/w {mean('dram__bytes_read.sum')/1e6:7.1f}/{mean('dram__bytes_write.sum')/1e6:7.1f} MB L2 {mean('lts__t_bytes.sum')/1e6:8.1f} MB SM {mean('sm__throughput.avg.pct_of_peak_sustained_elapsed'):5.1f}% warps {mean('sm__warps_active.avg.pct_of_peak_sustained_active'):5.1f}%")
PY
