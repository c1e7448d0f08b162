#!/usr/bin/env bash
# Session 23 run 1 (kept out of git): chunk_prep without CB (the activation fused into the
# cumsum, no rowmax) where nothing reads CB, and chunk_recur_t's decay off the chain.
# 'new' = both, 'prep' = chunk_prep's change only, 'old' = session 21/22's library.
set -u
cd "$(dirname "$0")/.."
ln -sfn .device/build build
out=${OUT:-/tmp/out}; mkdir -p "$out"
export LD_LIBRARY_PATH=$PWD/build/lib:$PWD/build/runtime PYTHONPATH=$PWD/python
E=$PWD/.device/exp
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$out/device.txt"
date -u | tee -a "$out/device.txt"
TILE_GPU_LOG_DIR=$out/gpu-logs timeout 300 scripts/gpu-test.sh build > "$out/gpu_test.txt" 2>&1
echo "gpu-test rc=$?"; tail -1 "$out/gpu_test.txt"; grep -h "Summary" "$out/gpu-logs/gpu.la_parity.log" | head -1
tl() { timeout 60 python3 tests/gpu/la_timeline.py kda "$@" 2>&1 | grep -v -i warn; }
{ for lib in new prep s21; do echo "== $lib"; TILE_LA_LIB=$E/libtilela_$lib.so tl 8/8 8192x4 lb; done; } > "$out/timelines.txt"
grep -E "^==|graph" "$out/timelines.txt"
for r in 1 2 3; do
  line="round $r"
  for lib in new prep s21; do line="$line $lib $(TILE_LA_LIB=$E/libtilela_$lib.so tl 8/8 8192x4 lb | grep graph | awk '{print $2}')"; done
  echo "$line" | tee -a "$out/ab.txt"
done
for L in 104 110; do
  echo "L=$L new $(TILE_LA_KDA_SPLIT=$L TILE_LA_LIB=$E/libtilela_new.so tl 8/8 8192x4 lb | grep graph)" | tee -a "$out/sweep.txt"
done
# a chunk_prep grid's fixed cost: one wave cold (the split's first grid) against one warm
# (the second grid, right after the first on the same SMs, beside part 1's 16)
{ for lib in new s21; do echo "== $lib split 33 of 66"; TILE_LA_KDA_SPLIT=33 TILE_LA_LIB=$E/libtilela_$lib.so tl 8/8 1x4224 lb;
  echo "== $lib one wave"; TILE_LA_LIB=$E/libtilela_$lib.so tl 8/8 1x2112 lb; done; } > "$out/fixed.txt"
grep -E "^==|chunk_prep" "$out/fixed.txt" | head -40
for lib in new s21; do
  TILE_LA_LIB=$E/libtilela_$lib.so timeout 200 python3 bench/la_bench.py --no-fla --only kda --configs 'KDA 8/8 gate-in-kernel lb-5,KDA 8/8,KDA 16/16,KDA 64/64' \
    --seqs 1x8192,8192x4,1024+7168 --results-dir "$out/bench_$lib" > "$out/bench_$lib.log" 2>&1
  echo "bench $lib rc=$?"; grep -E '^\| KDA' "$out/bench_$lib.log" | head -12
done
tar czf /tmp/r1.tgz -C "$out" . && find "$out" -type f -delete && mv /tmp/r1.tgz "$out/"
