#!/usr/bin/env bash
# The session's face cells against their scale (a temporary build reading GEOKNN_FACE_SCALE in cellsSideFor, not
# committed): knn simulate --obs 2^24 --ref 2^16 at scales 0.022 to 0.088 (0.044 the rule), interleaved, twice.
set -u
gunzip -f .carry/dev64/knn.scale.gz && chmod +x .carry/dev64/knn.scale
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date
for round in 1 2; do
  for s in 0.044 0.022 0.031 0.062 0.088; do
    echo "== scale $s: knn simulate --obs 2^24 --ref 2^16 --steps 100 --dt 60 --replace 0.01"
    GEOKNN_FACE_SCALE=$s .carry/dev64/knn.scale simulate --obs 2^24 --ref 2^16 --steps 100 --dt 60 --replace 0.01 --quiet 2>&1 | grep -E "steps:|step phases|index|note"
  done
done
