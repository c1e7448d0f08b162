#!/usr/bin/env bash
# Session 19 run 4 (kept out of git): chunk_chain_t (the chain transposed, once per sequence, head and slice)
# and the failed segments in chunk_recur_t. Correctness, then A/B against c77389f (OLD).
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
timeout 240 python3 tests/gpu/la_parity.py --no-fla -k kda --out "$out/parity_kda.md" > "$out/parity.log" 2>&1
echo "parity kda rc=$? $(grep Summary "$out/parity_kda.md")"
TILE_LA_KDA_T=0 timeout 120 python3 tests/gpu/la_parity.py --no-fla -k xfer --out "$out/parity_xfer_T0.md" > "$out/parity_T0.log" 2>&1
echo "parity xfer, TILE_LA_KDA_T=0 rc=$? $(grep Summary "$out/parity_xfer_T0.md")"
for t in 1 0; do
  TILE_LA_KDA_T=$t TILE_LA_KDA_CP=4 timeout 90 compute-sanitizer --tool memcheck --error-exitcode 9 python3 tests/gpu/la_one.py kda 1500 2 2 l2 lb > "$out/memcheck_T$t.log" 2>&1
  echo "memcheck (forced 4-chunk segments, lb, T=$t) rc=$? $(grep -h 'ERROR SUMMARY' "$out/memcheck_T$t.log")"
  TILE_LA_KDA_T=$t TILE_LA_KDA_CP=4 timeout 120 compute-sanitizer --tool racecheck --error-exitcode 9 python3 tests/gpu/la_one.py kda 1500 2 2 l2 lb > "$out/racecheck_T$t.log" 2>&1
  echo "racecheck (forced 4-chunk segments, lb, T=$t) rc=$? $(grep -h 'RACECHECK SUMMARY' "$out/racecheck_T$t.log")"
done
for s in 1x8192 1024+7168; do for lib in NEW OLD; do
  TILE_LA_LIB=${!lib} timeout 60 python3 tests/gpu/la_timeline.py kda 8/8 $s lb > "$out/tl_${lib}_$s.txt" 2>&1
  echo "timeline $lib $s"; grep -E 'chunk' "$out/tl_${lib}_$s.txt" | head -5; grep graph "$out/tl_${lib}_$s.txt"
done; done
for r in 1 2; do for lib in NEW OLD; do
  TILE_LA_LIB=${!lib} timeout 100 python3 bench/la_bench.py --no-fla --configs 'KDA 16/16,KDA 64/64' \
    --seqs 1x8192 --results-dir "$out/abw_${lib}_$r" > "$out/abw_${lib}_$r.log" 2>&1
  echo "$lib round $r (whole sequences): $(grep -E '^\| (config|KDA)' "$out/abw_${lib}_$r.log" | head -3 | tr '\n' ' ')"
  TILE_LA_LIB=${!lib} timeout 100 python3 bench/la_bench.py --no-fla --configs "$LB" \
    --seqs 1x32768,1x8192,8192x4,28672+4096,1024+7168 --results-dir "$out/ab_${lib}_$r" > "$out/ab_${lib}_$r.log" 2>&1
  echo "$lib round $r: $(grep -E '^\| (config|KDA)' "$out/ab_${lib}_$r.log" | head -2 | tr '\n' ' ')"
done; done
tar czf /tmp/r4.tgz -C "$out" . && find "$out" -type f -delete && mv /tmp/r4.tgz "$out/"
