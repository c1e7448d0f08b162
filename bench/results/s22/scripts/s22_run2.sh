#!/usr/bin/env bash
# Session 22 run 2 (kept out of git): chunk_recur_t in clusters of 4 and 8 instead of 2
# (experiment libraries, chunk_recur_t's launch item only): does keeping the recurrence's CTAs
# together (a cluster stays in one GPC) cut the second chunk_prep's co-run penalty? The
# split's cell (lower-bound gate 8/8 8192x4): timelines, graph times alternating, L = 104, 110.
set -u
cd "$(dirname "$0")/.."
ln -sfn .device/build build
out=${OUT:-/tmp/out}; mkdir -p "$out"
export LD_LIBRARY_PATH=$PWD/build/lib:$PWD/build/runtime PYTHONPATH=$PWD/python
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$out/device.txt"
date -u | tee -a "$out/device.txt"
lib() { case $1 in c2) echo $PWD/.device/build/kernels/libtilela.so;; *) echo $PWD/.device/exp/libtilela_$1.so;; esac; }
tl() { TILE_LA_LIB=$(lib $1) timeout 60 python3 tests/gpu/la_timeline.py kda 8/8 $2 lb 2>&1 | grep -v -i warn; }
for c in c2 c4 c8; do echo "== $c"; tl $c 8192x4 | sed -n 2,5p; done | tee "$out/timelines.txt"
for r in 1 2 3; do
  line="round $r"
  for c in c2 c4 c8; do line="$line | $c $(tl $c 8192x4 | grep graph | awk '{print $2}')"; done
  echo "$line" | tee -a "$out/ab.txt"
done
for L in 104 110; do
  line="L=$L"
  for c in c2 c4 c8; do line="$line | $c $(TILE_LA_KDA_SPLIT=$L tl $c 8192x4 | grep graph | awk '{print $2}')"; done
  echo "$line" | tee -a "$out/sweep.txt"
done
line="1x8192 chained"
for c in c2 c4 c8; do line="$line | $c $(tl $c 1x8192 | grep graph | awk '{print $2}')"; done
echo "$line" | tee -a "$out/ab.txt"
tar czf /tmp/r2.tgz -C "$out" . && find "$out" -type f -delete && mv /tmp/r2.tgz "$out/"
