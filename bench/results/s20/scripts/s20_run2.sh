#!/usr/bin/env bash
# Session 20 run 2 (kept out of git): the split's L sweep (two rounds), the chained path forced
# at 8192x4 for comparison, then correctness on the split: KDA parity, memcheck, racecheck.
set -u
cd "$(dirname "$0")/.."
ln -sfn .device/build build
out=${OUT:-/tmp/out}; mkdir -p "$out"
export LD_LIBRARY_PATH=$PWD/build/lib:$PWD/build/runtime PYTHONPATH=$PWD/python
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$out/device.txt"
date -u | tee -a "$out/device.txt"
LB='KDA 8/8 gate-in-kernel lb-5'
sweep() {  # name, env...
  local name=$1; shift
  env "$@" timeout 60 python3 bench/la_bench.py --no-fla --configs "$LB" --seqs 8192x4 \
    --results-dir "$out/$name" > "$out/$name.log" 2>&1
  echo "$name: $(grep -E '^\| KDA' "$out/$name.log" | head -1)"
}
for r in 1 2; do
  for L in 106 108 110 112 114 116 120 124; do sweep "r${r}_L$L" TILE_LA_KDA_SPLIT=$L; done
done
sweep cp43 TILE_LA_KDA_SPLIT=0 TILE_LA_KDA_CP=43
sweep cp40 TILE_LA_KDA_SPLIT=0 TILE_LA_KDA_CP=40
sweep cp48 TILE_LA_KDA_SPLIT=0 TILE_LA_KDA_CP=48
timeout 300 python3 tests/gpu/la_parity.py --no-fla -k kda --out "$out/parity_kda.md" > "$out/parity.log" 2>&1
echo "parity kda rc=$? $(grep Summary "$out/parity_kda.md")"; grep -i split "$out/parity_kda.md" | head -8
timeout 90 compute-sanitizer --tool memcheck --error-exitcode 9 python3 tests/gpu/la_one.py kda 3000 2 2 nol2 lb > "$out/memcheck.log" 2>&1
echo "memcheck (split, lb) rc=$? $(grep -h 'ERROR SUMMARY' "$out/memcheck.log")"
timeout 150 compute-sanitizer --tool racecheck --error-exitcode 9 python3 tests/gpu/la_one.py kda 3000 2 2 nol2 lb > "$out/racecheck.log" 2>&1
echo "racecheck (split, lb) rc=$? $(grep -h 'RACECHECK SUMMARY' "$out/racecheck.log")"
tar czf /tmp/r2.tgz -C "$out" . && find "$out" -type f -delete && mv /tmp/r2.tgz "$out/"
