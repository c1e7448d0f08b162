#!/usr/bin/env bash
# Session 19 run 9 (kept out of git): ncu of chunk_chain_t at KDA 8/8 1x8192, lower-bound gate.
set -u
cd "$(dirname "$0")/.."
ln -sfn .device/build build
out=${OUT:-/tmp/out}; mkdir -p "$out"
export LD_LIBRARY_PATH=$PWD/build/lib:$PWD/build/runtime PYTHONPATH=$PWD/python
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$out/device.txt"
ncu_bin=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
timeout 150 "$ncu_bin" -k chunk_chain_t -c 1 --section SpeedOfLight --section WarpStateStats \
  --section MemoryWorkloadAnalysis --section LaunchStats \
  python3 tests/gpu/la_one.py kda 8192 8 8 l2 lb > "$out/ncu_chain.txt" 2>&1
echo "ncu rc=$?"; grep -E 'Duration|Elapsed Cycles|Warp Cycles Per Issued|Stall|L2|Memory Throughput|DRAM' "$out/ncu_chain.txt" | head -30
timeout 150 "$ncu_bin" -k chunk_chain_t -c 1 --section SourceCounters --page source --print-source sass \
  --csv python3 tests/gpu/la_one.py kda 8192 8 8 l2 lb > "$out/sass_chain.csv" 2>/dev/null
python3 scripts/ncu_hot.py "$out/sass_chain.csv" 30 > "$out/hot_chain.txt" 2>&1
head -32 "$out/hot_chain.txt"
rm -f "$out/sass_chain.csv"
