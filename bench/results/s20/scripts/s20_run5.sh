#!/usr/bin/env bash
# Session 20 run 5 (kept out of git): chunk_chain_t with two accumulators (the lo terms' 16
# products beside the hi term's 8). Prediction: a chain step ~2 us -> ~1.4 us, -3 to -4 us at
# lower-bound 8/8 1x8192 (6 steps), more at 1x32768. KDA parity, timelines, ours-only A/B.
set -u
cd "$(dirname "$0")/.."
ln -sfn .device/build build
out=${OUT:-/tmp/out}; mkdir -p "$out"
export LD_LIBRARY_PATH=$PWD/build/lib:$PWD/build/runtime PYTHONPATH=$PWD/python
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$out/device.txt"
date -u | tee -a "$out/device.txt"
NEW=$PWD/build/kernels/libtilela.so OLD=$PWD/.device/old/libtilela_s19.so
LB='KDA 8/8 gate-in-kernel lb-5'
timeout 200 python3 tests/gpu/la_parity.py --no-fla -k kda --out "$out/parity_kda.md" > "$out/parity.log" 2>&1
echo "parity kda rc=$? $(grep Summary "$out/parity_kda.md")"
for lib in NEW OLD; do
  TILE_LA_LIB=${!lib} timeout 60 python3 tests/gpu/la_timeline.py kda 8/8 1x8192 lb > "$out/tl_${lib}.txt" 2>&1
  echo "timeline $lib"; grep -E 'chunk' "$out/tl_${lib}.txt" | head -5; grep graph "$out/tl_${lib}.txt"
done
for r in 1 2; do for lib in NEW OLD; do
  TILE_LA_LIB=${!lib} timeout 100 python3 bench/la_bench.py --no-fla --configs "$LB" \
    --seqs 1x32768,1x8192,28672+4096,1024+7168 --results-dir "$out/ab_${lib}_$r" > "$out/ab_${lib}_$r.log" 2>&1
  echo "$lib round $r: $(grep -E '^\| (config|KDA)' "$out/ab_${lib}_$r.log" | head -2 | tr '\n' ' ')"
done; done
tar czf /tmp/r5.tgz -C "$out" . && find "$out" -type f -delete && mv /tmp/r5.tgz "$out/"
