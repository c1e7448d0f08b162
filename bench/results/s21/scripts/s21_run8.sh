#!/usr/bin/env bash
# Session 21 run 8 (kept out of git): 6d17cab beside FLA on bench.md's lower-bound KDA 8/8 row
# (checked cells), and the split without the l2norm at candidate L (a wave there is longer:
# chunk_prep's levels path).
set -u
cd "$(dirname "$0")/.."
ln -sfn .device/build build
out=${OUT:-/tmp/out}; mkdir -p "$out"
export LD_LIBRARY_PATH=$PWD/build/lib:$PWD/build/runtime PYTHONPATH=$PWD/python
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$out/device.txt"
date -u | tee -a "$out/device.txt"
for s in 8192x4 1x8192 1024+7168; do
  PYTHONPATH=$PWD/python:$PWD/third_party_fla FLA_DISABLE_BACKEND_DISPATCH=1 timeout 170 python3 bench/la_bench.py --only kda --configs 'KDA 8/8 gate-in-kernel lb-5' \
    --seqs $s --results-dir "$out/fla_${s/+/p}" > "$out/fla_${s/+/p}.log" 2>&1
  echo "rc=$? $(grep -E '^\| KDA 8/8' "$out/fla_${s/+/p}.log" | tail -1)"
done
for p in "8/8 8192x4:111" "8/8 8192x4:113" "8/8 1x8192:70" "8/8 1x8192:64"; do
  s=${p%%:*}; L=${p##*:}
  echo "$s nol2 L=$L $(TILE_LA_KDA_SPLIT=$L timeout 60 python3 tests/gpu/la_timeline.py kda $s nol2 2>/dev/null | grep graph)" | tee -a "$out/nol2.txt"
done
tar czf /tmp/r8.tgz -C "$out" . && find "$out" -type f -delete && mv /tmp/r8.tgz "$out/"
