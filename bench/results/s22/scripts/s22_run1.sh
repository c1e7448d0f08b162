#!/usr/bin/env bash
# Session 22 run 1 (kept out of git): chunk_recur_t with the next chunk's -I U^T issued behind
# the state update (off the chain). Every GPU test; the split's cell (lower-bound gate 8/8
# 8192x4) new against session 21's library, timelines and graph times alternating; a short L
# sweep; the other chunk_recur_t cells ours only, new against old.
set -u
cd "$(dirname "$0")/.."
ln -sfn .device/build build
out=${OUT:-/tmp/out}; mkdir -p "$out"
export LD_LIBRARY_PATH=$PWD/build/lib:$PWD/build/runtime PYTHONPATH=$PWD/python
OLD=$PWD/.device/old/libtilela_s21.so
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$out/device.txt"
date -u | tee -a "$out/device.txt"
TILE_GPU_LOG_DIR=$out/gpu-logs timeout 300 scripts/gpu-test.sh build > "$out/gpu_test.txt" 2>&1
echo "gpu-test rc=$?"; tail -1 "$out/gpu_test.txt"; grep -h "Summary" "$out/gpu-logs/gpu.la_parity.log" | head -1
tl() { timeout 60 python3 tests/gpu/la_timeline.py kda 8/8 8192x4 lb 2>&1 | grep -v -i warn; }
{ echo "== new"; tl; echo "== old"; TILE_LA_LIB=$OLD tl; } > "$out/timelines.txt"
grep -E "^==|graph" "$out/timelines.txt"
for r in 1 2 3; do
  a=$(tl | grep graph); b=$(TILE_LA_LIB=$OLD tl | grep graph)
  echo "round $r new $a | old $b" | tee -a "$out/ab.txt"
done
for L in 104 110 113; do
  echo "L=$L new $(TILE_LA_KDA_SPLIT=$L tl | grep graph)" | tee -a "$out/sweep.txt"
done
for lib in new old; do
  if [ $lib = old ]; then export TILE_LA_LIB=$OLD; else unset TILE_LA_LIB; fi
  timeout 150 python3 bench/la_bench.py --no-fla --only kda --configs 'KDA 8/8 gate-in-kernel lb-5,KDA 16/16,KDA 64/64' \
    --seqs 1x8192,8192x4,1024+7168 --results-dir "$out/bench_$lib" > "$out/bench_$lib.log" 2>&1
  echo "bench $lib rc=$?"; grep -E '^\| KDA' "$out/bench_$lib.log" | head -12
done
unset TILE_LA_LIB
tar czf /tmp/r1.tgz -C "$out" . && find "$out" -type f -delete && mv /tmp/r1.tgz "$out/"
