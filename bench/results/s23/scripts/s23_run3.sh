#!/usr/bin/env bash
# Session 23 run 3 (kept out of git): the final kernels (5177f20): every GPU test; memcheck and
# racecheck through chunk_prep_nocb (the split, the chained path, log-space gates whole);
# bench.md's lower-bound KDA 8/8 row beside FLA (checked cells); ours against session 21/22's
# library on that row.
set -u
cd "$(dirname "$0")/.."
ln -sfn .device/build build
out=${OUT:-/tmp/out}; mkdir -p "$out"
export LD_LIBRARY_PATH=$PWD/build/lib:$PWD/build/runtime PYTHONPATH=$PWD/python
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$out/device.txt"
date -u | tee -a "$out/device.txt"
TILE_GPU_LOG_DIR=$out/gpu-logs timeout 300 scripts/gpu-test.sh build > "$out/gpu_test.txt" 2>&1
echo "gpu-test rc=$?"; tail -1 "$out/gpu_test.txt"; grep -h "Summary" "$out/gpu-logs/gpu.la_parity.log" | head -1
cs=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
for tool in memcheck racecheck; do
  TILE_LA_KDA_SPLIT=24 timeout 100 $cs --tool $tool python3 tests/gpu/la_one.py kda 3000 2 2 nol2 lb > "$out/san_${tool}_split.txt" 2>&1
  echo "$tool split rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$out/san_${tool}_split.txt" | tail -1)"
  timeout 100 $cs --tool $tool python3 tests/gpu/la_one.py kda 3000 2 2 l2 lb > "$out/san_${tool}_lb.txt" 2>&1
  echo "$tool lb rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$out/san_${tool}_lb.txt" | tail -1)"
  TILE_LA_KDA_CP=0 timeout 100 $cs --tool $tool python3 tests/gpu/la_one.py kda 3000 2 2 l2 > "$out/san_${tool}_whole.txt" 2>&1
  echo "$tool whole rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$out/san_${tool}_whole.txt" | tail -1)"
done
for s in 8192x4 1x8192 1024+7168 1x32768 28672+4096; do
  PYTHONPATH=$PWD/python:$PWD/third_party_fla FLA_DISABLE_BACKEND_DISPATCH=1 timeout 120 python3 bench/la_bench.py --only kda --configs 'KDA 8/8 gate-in-kernel lb-5' \
    --seqs $s --results-dir "$out/fla_${s/+/p}" > "$out/fla_${s/+/p}.log" 2>&1
  echo "rc=$? $(grep -E '^\| KDA 8/8' "$out/fla_${s/+/p}.log" | tail -1)"
done
tar czf /tmp/r3.tgz -C "$out" . && find "$out" -type f -delete && mv /tmp/r3.tgz "$out/"
