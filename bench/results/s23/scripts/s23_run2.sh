#!/usr/bin/env bash
# Session 23 run 2 (kept out of git): chunk_prep_nocb as a kernel of its own (chunk_prep's
# CB_OUT = 1 build byte-identical to session 22's), chosen with in-kernel gates where CB is not
# read; 'new' also has chunk_recur_t's decay off the chain, 'nodec' not; 's21' = session 21/22.
set -u
cd "$(dirname "$0")/.."
ln -sfn .device/build build
out=${OUT:-/tmp/out}; mkdir -p "$out"
export LD_LIBRARY_PATH=$PWD/build/lib:$PWD/build/runtime PYTHONPATH=$PWD/python
E=$PWD/.device/exp
declare -A LIB=([new]=$PWD/build/kernels/libtilela.so [nodec]=$E/libtilela_nodec.so [s21]=$E/libtilela_s21.so)
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$out/device.txt"
date -u | tee -a "$out/device.txt"
TILE_GPU_LOG_DIR=$out/gpu-logs timeout 300 scripts/gpu-test.sh build > "$out/gpu_test.txt" 2>&1
echo "gpu-test rc=$?"; tail -1 "$out/gpu_test.txt"; grep -h "Summary" "$out/gpu-logs/gpu.la_parity.log" | head -1
tl() { timeout 60 python3 tests/gpu/la_timeline.py kda "$@" 2>&1 | grep -v -i warn; }
{ for lib in new nodec s21; do echo "== $lib"; TILE_LA_LIB=${LIB[$lib]} tl 8/8 8192x4 lb; done; } > "$out/timelines.txt"
grep -E "^==|graph" "$out/timelines.txt"
for r in 1 2 3; do
  line="round $r"
  for lib in new nodec s21; do line="$line $lib $(TILE_LA_LIB=${LIB[$lib]} tl 8/8 8192x4 lb | grep graph | awk '{print $2}')"; done
  echo "$line" | tee -a "$out/ab.txt"
done
for L in 105 106 108 109; do
  echo "L=$L new $(TILE_LA_KDA_SPLIT=$L TILE_LA_LIB=${LIB[new]} tl 8/8 8192x4 lb | grep graph)" | tee -a "$out/sweep.txt"
done
b() { TILE_LA_LIB=${LIB[$1]} timeout 200 python3 bench/la_bench.py --no-fla --only kda --configs "$2" \
    --seqs 1x8192,8192x4,1024+7168 --results-dir "$out/bench_$1$3" > "$out/bench_$1$3.log" 2>&1
  echo "bench $1$3 rc=$?"; grep -E '^\| KDA [^|]*\| [0-9.]+ /' "$out/bench_$1$3.log"; }
C='KDA 8/8 gate-in-kernel lb-5,KDA 8/8,KDA 16/16,KDA 64/64,KDA 16/32'
for lib in new nodec s21; do b $lib "$C" ""; done
TILE_LA_KDA_NOCB=1 b new 'KDA 16/16,KDA 64/64,KDA 16/32' _nocb1
tar czf /tmp/r2.tgz -C "$out" . && find "$out" -type f -delete && mv /tmp/r2.tgz "$out/"
