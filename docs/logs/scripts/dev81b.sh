#!/usr/bin/env bash
# dev81.sh's knn runs again (its first try ran them from the wrong folder): the build before (knnbase) and the
# team's (knn) alternating, against the sphere and the cities on 16 cores, validated.
set -u
cd .carry/dev81 && gunzip -f ./*.gz 2>/dev/null; chmod +x ./* ; cd ../..
export GEOKNN_DATA=$PWD/.data
D=$PWD/.carry/dev81
for ref in 2^16 .data/cities.csv; do
  for v in knnbase knn knnbase knn; do
    echo "== $v run --obs 2^22 --ref $ref --engine cpu --host-points --repeat 5 -v --validate 20000 (16 cores)"
    $D/$v run --obs 2^22 --ref $ref --engine cpu --host-points --repeat 5 -v --validate 20000 2>&1 | grep -E "query [1-5]|validate:|^index|check|prepare|k-d tree|face cells  |  query  "
  done
done
