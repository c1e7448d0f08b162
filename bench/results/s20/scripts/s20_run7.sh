#!/usr/bin/env bash
# Session 20 run 7 (kept out of git): la_split_len leaves calls whose chunk_prep is one wave
# whole. The split's parity cases, la_smoke under memcheck, racecheck with a forced split,
# and the lower-bound row ours only (unchanged choices there).
set -u
cd "$(dirname "$0")/.."
ln -sfn .device/build build
out=${OUT:-/tmp/out}; mkdir -p "$out"
export LD_LIBRARY_PATH=$PWD/build/lib:$PWD/build/runtime PYTHONPATH=$PWD/python
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$out/device.txt"
date -u | tee -a "$out/device.txt"
timeout 150 python3 tests/gpu/la_parity.py --no-fla -k split --out "$out/parity_split.md" > "$out/parity.log" 2>&1
echo "parity split rc=$? $(grep Summary "$out/parity_split.md")"
timeout 150 compute-sanitizer --tool memcheck --error-exitcode 9 python3 tests/gpu/la_smoke.py > "$out/memcheck_smoke.log" 2>&1
echo "memcheck la_smoke rc=$? $(grep -h 'ERROR SUMMARY' "$out/memcheck_smoke.log")"
TILE_LA_KDA_SPLIT=24 timeout 150 compute-sanitizer --tool racecheck --error-exitcode 9 python3 tests/gpu/la_one.py kda 3000 2 2 nol2 lb > "$out/racecheck_split.log" 2>&1
echo "racecheck split (L = 24) rc=$? $(grep -h 'RACECHECK SUMMARY' "$out/racecheck_split.log")"
timeout 100 python3 bench/la_bench.py --no-fla --configs 'KDA 8/8 gate-in-kernel lb-5' \
  --seqs 1x8192,8192x4,1024+7168 --results-dir "$out/lb" > "$out/lb.log" 2>&1
grep -E '^\| (config|KDA)' "$out/lb.log" | head -2
tar czf /tmp/r7.tgz -C "$out" . && find "$out" -type f -delete && mv /tmp/r7.tgz "$out/"
