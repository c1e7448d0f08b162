#!/usr/bin/env bash
# Session 20 run 11 (kept out of git): after the review's la.c refactor (launch_prep,
# launch_split_part; host code only): every GPU test, the split's parity cases, the
# lower-bound row ours only.
set -u
cd "$(dirname "$0")/.."
ln -sfn .device/build build
out=${OUT:-/tmp/out}; mkdir -p "$out"
export LD_LIBRARY_PATH=$PWD/build/lib:$PWD/build/runtime PYTHONPATH=$PWD/python
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$out/device.txt"
date -u | tee -a "$out/device.txt"
TILE_GPU_LOG_DIR=$out/gpu-logs timeout 300 scripts/gpu-test.sh build > "$out/gpu_test.txt" 2>&1
echo "gpu-test rc=$?"; tail -1 "$out/gpu_test.txt"; grep -h "Summary" "$out/gpu-logs/gpu.la_parity.log" | head -1
timeout 100 python3 bench/la_bench.py --no-fla --configs 'KDA 8/8 gate-in-kernel lb-5' \
  --seqs 1x8192,8192x4,1024+7168 --results-dir "$out/lb" > "$out/lb.log" 2>&1
grep -E '^\| (config|KDA)' "$out/lb.log" | head -2
tar czf /tmp/r11.tgz -C "$out" . && find "$out" -type f -delete && mv /tmp/r11.tgz "$out/"
