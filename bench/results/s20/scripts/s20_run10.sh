#!/usr/bin/env bash
# Session 20 run 10 (kept out of git): does the split pay beyond the lower-bound cell? KDA
# without the in-kernel l2norm (no context parallelism: whole sequences on chunk_recur_t),
# the library's choice (split) against TILE_LA_KDA_SPLIT=0, graph-timed, two rounds.
set -u
cd "$(dirname "$0")/.."
ln -sfn .device/build build
out=${OUT:-/tmp/out}; mkdir -p "$out"
export LD_LIBRARY_PATH=$PWD/build/lib:$PWD/build/runtime PYTHONPATH=$PWD/python
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$out/device.txt"
date -u | tee -a "$out/device.txt"
for r in 1 2; do
  for shape in "8/8 1x8192" "8/8 1x32768" "4/4 8192x4" "8/8 8192x4" "2/2 1x8192"; do
    for sp in default 0; do
      if [ $sp = default ]; then unset TILE_LA_KDA_SPLIT; else export TILE_LA_KDA_SPLIT=0; fi
      f="$out/tl_${shape//[\/ ]/_}_${sp}_${r}.txt"
      timeout 60 python3 tests/gpu/la_timeline.py kda $shape nol2 > "$f" 2>&1
      echo "$shape split=$sp round $r: $(grep graph "$f") ($(grep -c chunk_prep "$f") chunk_prep launches in 3 calls)"
    done
  done
done
unset TILE_LA_KDA_SPLIT
tar czf /tmp/r10.tgz -C "$out" . && find "$out" -type f -delete && mv /tmp/r10.tgz "$out/"
