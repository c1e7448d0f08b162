#!/usr/bin/env bash
# Session 20 run 1 (kept out of git): the split in time at KDA 8/8 8192x4 (lower-bound gate):
# timelines, a sweep of L (TILE_LA_KDA_SPLIT), and ours-only A/B against session 19's library.
set -u
cd "$(dirname "$0")/.."
ln -sfn .device/build build
out=${OUT:-/tmp/out}; mkdir -p "$out"
export LD_LIBRARY_PATH=$PWD/build/lib:$PWD/build/runtime PYTHONPATH=$PWD/python
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$out/device.txt"
date -u | tee -a "$out/device.txt"
NEW=$PWD/build/kernels/libtilela.so OLD=$PWD/.device/old/libtilela_s19.so
LB='KDA 8/8 gate-in-kernel lb-5'
for lib in NEW OLD; do
  TILE_LA_LIB=${!lib} timeout 60 python3 tests/gpu/la_timeline.py kda 8/8 8192x4 lb > "$out/tl_${lib}.txt" 2>&1
  echo "timeline $lib"; grep -E 'chunk|graph' "$out/tl_${lib}.txt" | head -8
done
for L in default 0 96 100 104 108 112; do
  if [ $L = default ]; then unset TILE_LA_KDA_SPLIT; else export TILE_LA_KDA_SPLIT=$L; fi
  timeout 60 python3 bench/la_bench.py --no-fla --configs "$LB" --seqs 8192x4 \
    --results-dir "$out/sweep_$L" > "$out/sweep_$L.log" 2>&1
  echo "L=$L: $(grep -E '^\| KDA' "$out/sweep_$L.log" | head -1)"
done
unset TILE_LA_KDA_SPLIT
for r in 1 2; do for lib in NEW OLD; do
  TILE_LA_LIB=${!lib} timeout 100 python3 bench/la_bench.py --no-fla --configs "KDA 16/32,KDA 8/8,$LB" \
    --seqs 8192x4,1x8192 --results-dir "$out/ab_${lib}_$r" > "$out/ab_${lib}_$r.log" 2>&1
  echo "$lib round $r:"; grep -E '^\| (config|KDA)' "$out/ab_${lib}_$r.log" | head -8
done; done
tar czf /tmp/r1.tgz -C "$out" . && find "$out" -type f -delete && mv /tmp/r1.tgz "$out/"
