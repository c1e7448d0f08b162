#!/usr/bin/env bash
# Session 19 run 6 (kept out of git): bench.md's KDA 8/8 lower-bound row beside FLA (checked),
# one sequence set per call as in sessions 17-18, on this session's library.
set -u
cd "$(dirname "$0")/.."
ln -sfn .device/build build
out=${OUT:-/tmp/out}; mkdir -p "$out"
export LD_LIBRARY_PATH=$PWD/build/lib:$PWD/build/runtime PYTHONPATH=$PWD/python:$PWD/third_party_fla
export FLA_DISABLE_BACKEND_DISPATCH=1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$out/device.txt"
date -u | tee -a "$out/device.txt"
for s in 1x8192 1024+7168 8192x4 1x32768 28672+4096; do
  timeout 150 python3 bench/la_bench.py --only kda --configs 'KDA 8/8 gate-in-kernel lb-5' \
    --seqs $s --results-dir "$out/fla_$s" > "$out/fla_$s.log" 2>&1
  echo "rc=$? $(grep -E '^\| KDA 8/8' "$out/fla_$s.log" | head -1)"
done
tar czf /tmp/r6.tgz -C "$out" . && find "$out" -type f -delete && mv /tmp/r6.tgz "$out/"
