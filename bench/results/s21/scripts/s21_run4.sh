#!/usr/bin/env bash
# Session 21 run 4 (kept out of git): the split's second chunk_prep grid (480 CTAs) beside 64
# SMs of idle / 8 KB code / 32 KB code / DRAM streaming and beside the real chunk_recur_t;
# ncu source counters of chunk_prep (lower-bound gate and bench.md's gates: the SASS it runs).
set -u
cd "$(dirname "$0")/.."
ln -sfn .device/build build
out=${OUT:-/tmp/out}; mkdir -p "$out"
export LD_LIBRARY_PATH=$PWD/build/lib:$PWD/build/runtime PYTHONPATH=$PWD/python
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$out/device.txt"
timeout 200 python3 .device/s21/corun3.py 3840 2>&1 | grep -v -i warn | tee "$out/corun4.txt"
ncu_bin=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
for g in lb plain; do
  a=""; [ $g = lb ] && a=lb
  timeout 150 "$ncu_bin" -k chunk_prep -c 1 --section SourceCounters --section WarpStateStats --page source --print-source sass \
    --csv python3 tests/gpu/la_one.py kda 8192 8 8 l2 $a > "$out/sass_prep_$g.csv" 2>/dev/null
  python3 scripts/ncu_hot.py "$out/sass_prep_$g.csv" 5 > "$out/hot_prep_$g.txt" 2>&1
  head -3 "$out/hot_prep_$g.txt"
  rm -f "$out/sass_prep_$g.csv"
done
