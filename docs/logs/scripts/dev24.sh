#!/usr/bin/env bash
# The whole GPU check on the current sources (the observation sort straight from the columns); timings against the build before it.
set -u
tar xzf .carry/bin.tgz
export GEOKNN_DATA=$PWD/.data
timeout 400 bash .ci/gpu-check /tmp/gc > $OUT/gc.log 2>&1; echo "gpu-check rc $?"
grep -vE "^\s*$" $OUT/gc.log | sed -n '/GPU tests/,$p' | head -40
tar czf $OUT/kernels.tgz -C /tmp/gc/ptx .
cp /tmp/gc/*-tests.log $OUT/ 2>/dev/null
for v in "new:/tmp/gc/ptx" "old:.carry/oldkb"; do
  name=${v%%:*}; d=${v#*:}
  echo "== $name"
  export GEOKNN_PTX_DIR=$d GEOKNN_SASS_DIR=$d/sass
  timeout 60 bin/knn simulate --obs 2^24 --ref 2^16 --steps 200 --replace 0.01 --quiet 2>&1 | grep -E "^steps" | sed 's/pairs.*whole/whole/'
  for gen in sphere clustered; do timeout 90 bin/knn run --obs 2^27 --ref 2^16 --gen $gen --engine gpu --repeat 3 --validate 16384 2>&1 | grep -E "query 3|validat" | sed 's/.*GPU kernels/kernels/;s/(index.*//' | sed "s/^/$gen /"; done
  timeout 120 bin/knn run --obs 2^27 --ref .data/cities.csv --engine gpu --repeat 3 --validate 16384 2>&1 | grep -E "query 3|validat" | sed 's/.*GPU kernels/kernels/;s/(index.*//' | sed "s/^/cities /"
done
export GEOKNN_PTX_DIR=/tmp/gc/ptx GEOKNN_SASS_DIR=/tmp/gc/ptx/sass
M=gpu__time_duration.sum,smsp__inst_executed.sum,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_bytes.sum,sm__throughput.avg.pct_of_peak_sustained_elapsed
timeout 150 ncu --csv --metrics $M --kernel-name regex:"grid_obs|grid_query" --launch-count 24 bin/knn run --obs 2^24 --ref 2^16 --engine gpu -q > /tmp/k.csv 2>/dev/null; echo "ncu rc $?"
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
    print(f"{k:26s} n {len(ms):3d} {mean('gpu__time_duration.sum')/1e3:9.1f} us  warp inst {mean('smsp__inst_executed.sum')/1e6:8.2f} M DRAM r/w {mean('dram__bytes_read.sum')/1e6:7.1f}/{mean('dram__bytes_write.sum')/1e6:7.1f} MB L2 {mean('lts__t_bytes.sum')/1e6:8.1f} MB SM {mean('sm__throughput.avg.pct_of_peak_sustained_elapsed'):5.1f}%")
PY
