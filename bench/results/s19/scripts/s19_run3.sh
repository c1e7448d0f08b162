#!/usr/bin/env bash
# Session 19 run 3 (kept out of git): ncu of chunk_recur's mode 4 (the chain alone; the
# second chunk_recur launch of a KDA 8/8 1x8192 call with the lower-bound gate) and, for
# comparison, HEAD~2's mode 3 (chain + the segment's chunks).
set -u
cd "$(dirname "$0")/.."
ln -sfn .device/build build
out=${OUT:-/tmp/out}; mkdir -p "$out"
export LD_LIBRARY_PATH=$PWD/build/lib:$PWD/build/runtime PYTHONPATH=$PWD/python
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$out/device.txt"
date -u | tee -a "$out/device.txt"
ncu_bin=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
for lib in NEW OLD; do
  [ $lib = OLD ] && export TILE_LA_LIB=$PWD/.device/old/libtilela.so
  timeout 150 "$ncu_bin" -k chunk_recur --launch-skip 1 -c 1 --section SpeedOfLight \
    --section WarpStateStats --section LaunchStats --section MemoryWorkloadAnalysis \
    python3 tests/gpu/la_one.py kda 8192 8 8 l2 lb > "$out/ncu_$lib.txt" 2>&1
  echo "ncu $lib rc=$?"; grep -E 'Duration|Elapsed Cycles|Stall|Warp Cycles Per Issued' "$out/ncu_$lib.txt" | head -12
  timeout 150 "$ncu_bin" -k chunk_recur --launch-skip 1 -c 1 --section SourceCounters \
    --page source --print-source sass --csv python3 tests/gpu/la_one.py kda 8192 8 8 l2 lb \
    > "$out/sass_$lib.csv" 2>/dev/null
  python3 scripts/ncu_hot.py "$out/sass_$lib.csv" 40 > "$out/hot_$lib.txt" 2>&1
  head -3 "$out/hot_$lib.txt"
done
tar czf /tmp/r3.tgz -C "$out" . && find "$out" -type f -delete && mv /tmp/r3.tgz "$out/"
