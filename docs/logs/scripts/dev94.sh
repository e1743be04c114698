#!/usr/bin/env bash
# geoknn's CPU engine (the build of 1f9dd02) beside SciPy's cKDTree and scikit-learn's BallTree(haversine) on one
# lease (bench/related/cpu_peers.py): 2^22 observations against 2^16 sphere references and the cities, on 16
# cores and on 2 (taskset -c 0,1); knn run's median of 11 queries (5 on 2 cores).
set -u
tar xzf .carry/bin.tgz
export GEOKNN_DATA=$PWD/.data
lscpu | grep -E "Model name"; date
python3 -c "import scipy, sklearn, numpy; print('scipy', scipy.__version__, 'scikit-learn', sklearn.__version__, 'numpy', numpy.__version__)"
med() { grep -oE "query +[0-9]+: +[0-9.]+ s" | awk '{print $3}' | sort -n | awk '{a[NR]=$1} END {printf "median %.4f s  min %.4f  max %.4f  (%d queries)\n", a[int((NR+1)/2)], a[1], a[NR], NR}'; }
for ref in 16 .data/cities.csv; do
  r=$ref; [ $ref = 16 ] && r=2^16
  echo "== geoknn --ref $r, 16 cores"; bin/knn run --obs 2^22 --ref $r --engine cpu --host-points --repeat 11 2>&1 | med
  echo "== geoknn --ref $r, 2 cores"; taskset -c 0,1 bin/knn run --obs 2^22 --ref $r --engine cpu --host-points --repeat 5 2>&1 | med
  echo "== peers --ref $r, 16 cores"; python3 bench/related/cpu_peers.py 16 22 $ref
  echo "== peers --ref $r, 2 cores"; taskset -c 0,1 python3 bench/related/cpu_peers.py 2 22 $ref
done
date
