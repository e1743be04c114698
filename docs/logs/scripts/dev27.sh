#!/usr/bin/env bash
# nvidia-h200-x2, build 8ad0e98: MPI with one rank a GPU against one process with both GPUs (2^30 x 2^16),
# and the CPU engine on the machine's 16 cores and on 2 (taskset), uniform and cities as references.
set -u
tar xzf .carry/bin.tgz
export GEOKNN_DATA=$PWD/.data
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
export GEOKNN_MPI_LIB=$(ls /lib/x86_64-linux-gnu/libmpi.so.40 2>/dev/null)
T() { /usr/bin/time -f "whole=%e_s_RSS=%M_KB" "$@"; }
K="bin/knn run --obs 2^30 --ref 2^16 -q"
echo "== one process, both GPUs: $K --gpus 2 (three times)"
for r in 1 2 3; do T $K --gpus 2 2>&1 | grep -E "query 1|total|whole"; done
echo "== one process, one GPU: $K --gpus 1 (twice)"
for r in 1 2; do T $K --gpus 1 2>&1 | grep -E "query 1|total|whole"; done
M="mpirun --allow-run-as-root --oversubscribe --bind-to none -x GEOKNN_MPI_LIB"
echo "== $M -np 2 $K --mpi (one rank a GPU; three times)"
for r in 1 2 3; do T $M -np 2 $K --mpi 2>&1 | grep -E "mpi:|rank|slowest|whole"; done
echo "== $M -np 1 $K --mpi --gpus-per-rank 2 (twice)"
for r in 1 2; do T $M -np 1 $K --mpi --gpus-per-rank 2 2>&1 | grep -E "mpi:|rank|slowest|whole"; done
echo "== byte for byte: --obs 2^24 --ref 2^16 --out .npz, one process (2 GPUs) against $M -np 2 (--validate 4096)"
bin/knn run --obs 2^24 --ref 2^16 -q --gpus 2 --out /tmp/b1.npz --validate 4096 2>&1 | grep -E "validat"
$M -np 2 bin/knn run --mpi --obs 2^24 --ref 2^16 -q --out /tmp/b2.npz --validate 4096 2>&1 | grep -E "validat|slowest"
cmp /tmp/b1.npz /tmp/b2.npz && echo identical
echo "== CPU engine, 16 cores: bin/knn run --obs 2^22 --ref 2^16 --engine cpu --repeat 3"
bin/knn run --obs 2^22 --ref 2^16 --engine cpu --repeat 3 2>&1 | grep -E "engine:|query"
echo "== CPU engine, 2 cores (taskset -c 0,1)"
taskset -c 0,1 bin/knn run --obs 2^22 --ref 2^16 --engine cpu --repeat 3 2>&1 | grep -E "engine:|query"
echo "== CPU engine, 1 core (taskset -c 0)"
taskset -c 0 bin/knn run --obs 2^21 --ref 2^16 --engine cpu --repeat 3 2>&1 | grep -E "engine:|query"
echo "== cities as references, 16 cores / 2 cores: --obs 2^22 --ref .data/cities.csv --engine cpu --repeat 3"
bin/knn run --obs 2^22 --ref .data/cities.csv --engine cpu --repeat 3 2>&1 | grep -E "engine:|query|plan|tree"
taskset -c 0,1 bin/knn run --obs 2^22 --ref .data/cities.csv --engine cpu --repeat 3 2>&1 | grep -E "query"
lscpu | grep -E "Model name|^CPU\(s\)|Thread"
