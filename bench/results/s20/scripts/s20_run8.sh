#!/usr/bin/env bash
# Session 20 run 8 (kept out of git): the final build (7519bbc's kernels and rule) beside FLA:
# the lower-bound 8/8 row's three cells nearest 2x.
set -u
cd "$(dirname "$0")/.."
ln -sfn .device/build build
out=${OUT:-/tmp/out}; mkdir -p "$out"
export LD_LIBRARY_PATH=$PWD/build/lib:$PWD/build/runtime PYTHONPATH=$PWD/python
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$out/device.txt"
date -u | tee -a "$out/device.txt"
for s in 8192x4 1x8192 1024+7168; do
  PYTHONPATH=$PWD/python:$PWD/third_party_fla FLA_DISABLE_BACKEND_DISPATCH=1 timeout 150 python3 bench/la_bench.py --only kda --configs 'KDA 8/8 gate-in-kernel lb-5' \
    --seqs $s --results-dir "$out/fla_${s/+/p}" > "$out/fla_${s/+/p}.log" 2>&1
  echo "rc=$? $(grep -E '^\| KDA 8/8' "$out/fla_${s/+/p}.log" | tail -1)"
done
tar czf /tmp/r8.tgz -C "$out" . && find "$out" -type f -delete && mv /tmp/r8.tgz "$out/"
