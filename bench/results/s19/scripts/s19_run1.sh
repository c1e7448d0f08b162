#!/usr/bin/env bash
# Session 19 run 1 (kept out of git): correctness of mode 3's chain with one barrier per step
# and B_j by frag_load from global, then ours-only A/B against HEAD's library (OLD) and a
# segment-length sweep with the lower-bound gate. Builds nothing.
set -u
cd "$(dirname "$0")/.."
ln -sfn .device/build build
out=${OUT:-/tmp/out}; mkdir -p "$out"
export LD_LIBRARY_PATH=$PWD/build/lib:$PWD/build/runtime PYTHONPATH=$PWD/python
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$out/device.txt"
date -u | tee -a "$out/device.txt"
NEW=$PWD/build/kernels/libtilela.so OLD=$PWD/.device/old/libtilela.so
LB='KDA 8/8 gate-in-kernel lb-5'
timeout 60 build/tests/gpu/test_gpu_tiles > "$out/tiles.log" 2>&1
echo "test_gpu_tiles rc=$? PASS $(grep -c PASS "$out/tiles.log") FAIL $(grep -c FAIL "$out/tiles.log")"
grep -E 'frag_load' "$out/tiles.log"
timeout 240 python3 tests/gpu/la_parity.py --no-fla -k kda --out "$out/parity_kda.md" > "$out/parity.log" 2>&1
echo "parity kda rc=$? $(grep Summary "$out/parity_kda.md")"
TILE_LA_KDA_CP=4 timeout 90 compute-sanitizer --tool memcheck --error-exitcode 9 python3 tests/gpu/la_one.py kda 1500 2 2 l2 lb > "$out/memcheck.log" 2>&1
echo "memcheck (forced 4-chunk segments, lb) rc=$? $(grep -h 'ERROR SUMMARY' "$out/memcheck.log")"
TILE_LA_KDA_CP=4 timeout 120 compute-sanitizer --tool racecheck --error-exitcode 9 python3 tests/gpu/la_one.py kda 1500 2 2 l2 lb > "$out/racecheck.log" 2>&1
echo "racecheck (forced 4-chunk segments, lb) rc=$? $(grep -h 'RACECHECK SUMMARY' "$out/racecheck.log")"
for s in 1x8192 1024+7168; do for lib in NEW OLD; do
  TILE_LA_LIB=${!lib} timeout 60 python3 tests/gpu/la_timeline.py kda 8/8 $s lb > "$out/tl_${lib}_$s.txt" 2>&1
  echo "timeline $lib $s"; grep -E 'chunk' "$out/tl_${lib}_$s.txt" | head -4; grep graph "$out/tl_${lib}_$s.txt"
done; done
for r in 1 2; do for lib in NEW OLD; do
  TILE_LA_LIB=${!lib} timeout 100 python3 bench/la_bench.py --no-fla --configs "$LB" \
    --seqs 1x8192,1024+7168,1x32768 --results-dir "$out/ab_${lib}_$r" > "$out/ab_${lib}_$r.log" 2>&1
  echo "$lib round $r (1x32768 | 1x8192 | 1024+7168): $(grep -E '^\| (config|KDA)' "$out/ab_${lib}_$r.log" | head -2 | tr '\n' ' ')"
done; done
for cp in 12 13 14 15 16; do
  TILE_LA_KDA_CP=$cp timeout 60 python3 bench/la_bench.py --no-fla --configs "$LB" \
    --seqs 1x8192,1024+7168 --results-dir "$out/cp$cp" > "$out/cp$cp.log" 2>&1
  echo "NEW seg $cp (1x8192 | 1024+7168): $(grep -E '^\| (config|KDA)' "$out/cp$cp.log" | head -2 | tr '\n' ' ')"
done
tar czf /tmp/r1.tgz -C "$out" . && find "$out" -type f -delete && mv /tmp/r1.tgz "$out/"
