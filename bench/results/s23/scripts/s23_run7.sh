#!/usr/bin/env bash
# Session 23 run 7 (kept out of git): the final build (3fe32e9: la.c segment_slots refactor,
# kernels as 5177f20): every GPU test; the lower-bound 8/8 8192x4 and 1x8192 cells ours only.
set -u
cd "$(dirname "$0")/.."
ln -sfn .device/build build
out=${OUT:-/tmp/out}; mkdir -p "$out"
export LD_LIBRARY_PATH=$PWD/build/lib:$PWD/build/runtime PYTHONPATH=$PWD/python
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$out/device.txt"
date -u | tee -a "$out/device.txt"
TILE_GPU_LOG_DIR=$out/gpu-logs timeout 300 scripts/gpu-test.sh build > "$out/gpu_test.txt" 2>&1
echo "gpu-test rc=$?"; tail -1 "$out/gpu_test.txt"; grep -h "Summary" "$out/gpu-logs/gpu.la_parity.log" | head -1
for s in 8192x4 1x8192; do echo "lb 8/8 $s: $(timeout 60 python3 tests/gpu/la_timeline.py kda 8/8 $s lb 2>/dev/null | grep graph)"; done
tar czf /tmp/r7.tgz -C "$out" . && find "$out" -type f -delete && mv /tmp/r7.tgz "$out/"
