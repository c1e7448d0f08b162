#!/usr/bin/env bash
# Session 20 run 3 (kept out of git): the final rule (L = 111 at 8/8 8192x4): timeline, then
# bench.md's lower-bound KDA 8/8 row beside FLA (one la_bench call per cell, every cell checked).
set -u
cd "$(dirname "$0")/.."
ln -sfn .device/build build
out=${OUT:-/tmp/out}; mkdir -p "$out"
export LD_LIBRARY_PATH=$PWD/build/lib:$PWD/build/runtime PYTHONPATH=$PWD/python
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$out/device.txt"
date -u | tee -a "$out/device.txt"
timeout 60 python3 tests/gpu/la_timeline.py kda 8/8 8192x4 lb > "$out/tl_final.txt" 2>&1
grep -E 'chunk|graph' "$out/tl_final.txt" | head -5
for s in 8192x4 1x8192 1024+7168 1x32768 28672+4096; do
  PYTHONPATH=$PWD/python:$PWD/third_party_fla FLA_DISABLE_BACKEND_DISPATCH=1 timeout 110 python3 bench/la_bench.py --only kda --configs 'KDA 8/8 gate-in-kernel lb-5' \
    --seqs $s --results-dir "$out/fla_$s" > "$out/fla_$s.log" 2>&1
  echo "rc=$? $(grep -E '^\| KDA 8/8' "$out/fla_$s.log" | tail -1)"
done
tar czf /tmp/r3.tgz -C "$out" . && find "$out" -type f -delete && mv /tmp/r3.tgz "$out/"
