#!/usr/bin/env bash
# Session 21 run 1 (kept out of git): chunk_prep beside kernels that hold 64 SMs (why is it
# ~1.7x slower per CTA beside the recurrence?), and ncu of chunk_recur_t's chain (whole
# sequence, lower-bound gate 8/8 1x8192, no context parallelism, no split).
set -u
cd "$(dirname "$0")/.."
ln -sfn .device/build build
out=${OUT:-/tmp/out}; mkdir -p "$out"
export LD_LIBRARY_PATH=$PWD/build/lib:$PWD/build/runtime PYTHONPATH=$PWD/python
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee "$out/device.txt"
date -u | tee -a "$out/device.txt"
timeout 200 python3 .device/s21/corun.py 8192x4 > "$out/corun.txt" 2>&1; echo "corun rc=$?"; cat "$out/corun.txt" | tail -12
ncu_bin=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
export TILE_LA_KDA_CP=0 TILE_LA_KDA_SPLIT=0
timeout 150 "$ncu_bin" -k chunk_recur_t -c 1 --section SpeedOfLight --section WarpStateStats \
  --section LaunchStats --section Occupancy \
  python3 tests/gpu/la_one.py kda 8192 8 8 l2 lb > "$out/ncu_recur_t.txt" 2>&1
echo "ncu rc=$?"; grep -E 'Duration|Elapsed Cycles|SM Frequency|Warp Cycles Per Issued|Stall|Registers|Compute \(SM\)' "$out/ncu_recur_t.txt" | head -30
timeout 150 "$ncu_bin" -k chunk_recur_t -c 1 --section SourceCounters --page source --print-source sass \
  --csv python3 tests/gpu/la_one.py kda 8192 8 8 l2 lb > "$out/sass_recur_t.csv" 2>/dev/null
python3 scripts/ncu_hot.py "$out/sass_recur_t.csv" 60 > "$out/hot_recur_t.txt" 2>&1
head -30 "$out/hot_recur_t.txt"
gzip "$out/sass_recur_t.csv"
