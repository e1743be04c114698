#!/usr/bin/env python3
"""Per-kernel roofline figures from the Nsight Compute CSVs beside this file
(run.sh made them on one H200): mean over a kernel's launches."""
import collections, csv, io, pathlib

here = pathlib.Path(__file__).parent
for name in ["grid", "knn8", "within", "brute", "session"]:
    rows = [l for l in open(here / f"{name}.csv") if l.startswith('"')]
    launches = collections.OrderedDict()
    for row in csv.DictReader(io.StringIO("".join(rows))):
        v = float(row["Metric Value"].replace(",", ""))
        launches.setdefault((row["ID"], row["Kernel Name"]), {})[row["Metric Name"]] = v
    kernels = collections.OrderedDict()
    for (_, kernel), m in launches.items():
        kernels.setdefault(kernel, []).append(m)
    print("==", name)
    for kernel, ms in kernels.items():
        mean = lambda k: sum(m[k] for m in ms) / len(ms)
        op = lambda k: mean(f"smsp__sass_thread_inst_executed_op_{k}_pred_on.sum")
        f32, f64 = 2 * op("ffma") + op("fadd") + op("fmul"), 2 * op("dfma") + op("dadd") + op("dmul")
        inst = mean("smsp__inst_executed.sum")
        print(f"{kernel:18s} launches {len(ms):2d}  {mean('gpu__time_duration.sum') / 1e3:9.1f} us  "
              f"DRAM {mean('dram__bytes_read.sum') / 1e6:7.1f} MB read {mean('dram__bytes_write.sum') / 1e6:7.1f} MB written  "
              f"L2 {mean('lts__t_bytes.sum') / 1e6:8.1f} MB  warp instructions {inst / 1e6:8.2f} M "
              f"({mean('smsp__thread_inst_executed.sum') / max(inst, 1):4.1f} lanes)  FP32 {f32 / 1e9:7.3f} GFLOP  FP64 {f64 / 1e9:6.3f} GFLOP  "
              f"SM {mean('sm__throughput.avg.pct_of_peak_sustained_elapsed'):4.1f}%  DRAM {mean('dram__throughput.avg.pct_of_peak_sustained_elapsed'):4.1f}%  "
              f"warps active {mean('sm__warps_active.avg.pct_of_peak_sustained_active'):4.1f}%")
