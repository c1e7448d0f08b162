#!/usr/bin/env bash
# Session 20 run 6 (kept out of git): 2c...: chunk_recur_t's guard for slots before the first
# sequence (cu_seqlens[0] past whole segments). la_smoke under memcheck (its malformed
# cu_seqlens cases), ours-only A/B (chunk_recur_t's code changed), every GPU test.
set -u
cd "$(dirname "$0")/.."
ln -sfn .device/build build
out=${OUT:-/tmp/out}; mkdir -p "$out"
export LD_LIBRARY_PATH=$PWD/build/lib:$PWD/build/runtime PYTHONPATH=$PWD/python
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$out/device.txt"
date -u | tee -a "$out/device.txt"
NEW=$PWD/build/kernels/libtilela.so OLD=$PWD/.device/old/libtilela_s19.so
LB='KDA 8/8 gate-in-kernel lb-5'
timeout 150 compute-sanitizer --tool memcheck --error-exitcode 9 python3 tests/gpu/la_smoke.py > "$out/memcheck_smoke.log" 2>&1
echo "memcheck la_smoke rc=$? $(grep -h 'ERROR SUMMARY' "$out/memcheck_smoke.log")"; grep -E "malformed|FAIL" "$out/memcheck_smoke.log" | head -5
timeout 150 compute-sanitizer --tool racecheck --error-exitcode 9 python3 tests/gpu/la_one.py kda 3000 2 2 nol2 lb > "$out/racecheck_split.log" 2>&1
echo "racecheck split rc=$? $(grep -h 'RACECHECK SUMMARY' "$out/racecheck_split.log")"
for r in 1 2; do for lib in NEW OLD; do
  TILE_LA_LIB=${!lib} timeout 100 python3 bench/la_bench.py --no-fla --configs "KDA 16/16,KDA 64/64,$LB" \
    --seqs 1x8192,8192x4,1024+7168 --results-dir "$out/ab_${lib}_$r" > "$out/ab_${lib}_$r.log" 2>&1
  echo "$lib round $r:"; grep -E '^\| (config|KDA)' "$out/ab_${lib}_$r.log" | head -4
done; done
TILE_GPU_LOG_DIR=$out/gpu-logs timeout 300 scripts/gpu-test.sh build > "$out/gpu_test.txt" 2>&1
echo "gpu-test rc=$?"; tail -3 "$out/gpu_test.txt"; grep -h "Summary" "$out/gpu-logs/gpu.la_parity.log" | head -1
tar czf /tmp/r6.tgz -C "$out" . && find "$out" -type f -delete && mv /tmp/r6.tgz "$out/"
