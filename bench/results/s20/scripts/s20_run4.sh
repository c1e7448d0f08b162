#!/usr/bin/env bash
# Session 20 run 4 (kept out of git): final rule (L = 113 at 8/8 8192x4). Every GPU test
# (scripts/gpu-test.sh), the lower-bound 8192x4 cell beside FLA, ours-only A/B of other KDA
# cells against session 19's library (chunk_prep's code changed).
set -u
cd "$(dirname "$0")/.."
ln -sfn .device/build build
out=${OUT:-/tmp/out}; mkdir -p "$out"
export LD_LIBRARY_PATH=$PWD/build/lib:$PWD/build/runtime PYTHONPATH=$PWD/python
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$out/device.txt"
date -u | tee -a "$out/device.txt"
NEW=$PWD/build/kernels/libtilela.so OLD=$PWD/.device/old/libtilela_s19.so
PYTHONPATH=$PWD/python:$PWD/third_party_fla FLA_DISABLE_BACKEND_DISPATCH=1 timeout 110 python3 bench/la_bench.py --only kda --configs 'KDA 8/8 gate-in-kernel lb-5' \
  --seqs 8192x4 --results-dir "$out/fla_8192x4" > "$out/fla_8192x4.log" 2>&1
echo "rc=$? $(grep -E '^\| KDA 8/8' "$out/fla_8192x4.log" | tail -1)"
timeout 60 python3 tests/gpu/la_timeline.py kda 8/8 8192x4 lb > "$out/tl_final.txt" 2>&1
grep -E 'chunk|graph' "$out/tl_final.txt" | head -4; grep graph "$out/tl_final.txt"
for lib in NEW OLD; do
  TILE_LA_LIB=${!lib} timeout 100 python3 bench/la_bench.py --no-fla --configs "KDA 8/8,KDA 16/16,KDA 64/64,KDA 16/32" \
    --seqs 1x8192,8192x4 --results-dir "$out/ab_${lib}" > "$out/ab_${lib}.log" 2>&1
  echo "$lib:"; grep -E '^\| (config|KDA)' "$out/ab_${lib}.log" | head -5
done
TILE_GPU_LOG_DIR=$out/gpu-logs timeout 330 scripts/gpu-test.sh build > "$out/gpu_test.txt" 2>&1
echo "gpu-test rc=$?"; tail -16 "$out/gpu_test.txt"
grep Summary "$out"/gpu-logs/*.log 2>/dev/null | head -3
tar czf /tmp/r4.tgz -C "$out" . && find "$out" -type f -delete && mv /tmp/r4.tgz "$out/"
