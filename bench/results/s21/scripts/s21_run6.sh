#!/usr/bin/env bash
# Session 21 run 6 (kept out of git): chunk_recur_t launched in clusters of 2 (a head's two
# value slices on one TPC). The split's cell with L swept, timelines new and old (session
# 20's final library), and the other chunk_recur_t cells ours only, new against old.
set -u
cd "$(dirname "$0")/.."
ln -sfn .device/build build
out=${OUT:-/tmp/out}; mkdir -p "$out"
export LD_LIBRARY_PATH=$PWD/build/lib:$PWD/build/runtime PYTHONPATH=$PWD/python
OLD=$PWD/.device/old/libtilela_s20.so
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$out/device.txt"
date -u | tee -a "$out/device.txt"
tl() { timeout 60 python3 tests/gpu/la_timeline.py kda 8/8 8192x4 lb 2>&1 | grep -v -i warn; }
{ echo "== new, default L"; tl; echo "== old"; TILE_LA_LIB=$OLD tl; } > "$out/timelines.txt"
head -8 "$out/timelines.txt"; grep -E "^==|graph" "$out/timelines.txt"
for L in 100 104 107 110 113 116; do
  for lib in new old; do
    if [ $lib = old ]; then export TILE_LA_LIB=$OLD; else unset TILE_LA_LIB; fi
    g=$(TILE_LA_KDA_SPLIT=$L tl | grep graph)
    echo "L=$L $lib $g" | tee -a "$out/sweep.txt"
  done
done
unset TILE_LA_LIB
for lib in new old; do
  if [ $lib = old ]; then export TILE_LA_LIB=$OLD; else unset TILE_LA_LIB; fi
  timeout 150 python3 bench/la_bench.py --no-fla --only kda --configs 'KDA 8/8 gate-in-kernel lb-5,KDA 16/16,KDA 64/64,KDA 8/8' \
    --seqs 1x8192,8192x4,1024+7168 --results-dir "$out/bench_$lib" > "$out/bench_$lib.log" 2>&1
  echo "bench $lib rc=$?"; grep -E '^\| KDA' "$out/bench_$lib.log" | head -12
done
