#!/usr/bin/env bash
# run_gpu.sh OUT_DIR: the batch run on the GPU machine: every GPU test and example
# (scripts/gpu-test.sh, examples under compute-sanitizer memcheck), racecheck and
# synccheck on the programs with shared memory or barriers (and memcheck on the tile
# layout tests), the SASS of the Hopper kernels (cubins tilec wrote into build/cubins),
# and the GEMM and attention benchmarks against torch. Each step has a time limit so a
# hang shows up as a timeout, not a lost run. Logs go to OUT_DIR.
set -u
out=${1:-gpu-out}
mkdir -p "$out/logs"
build=build
export LD_LIBRARY_PATH="$PWD/$build/lib:$PWD/$build/runtime${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export PYTHONPATH="$PWD/python" TILE_LA_LIBRARY="$PWD/$build/kernels/libtilela.so"
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv | tee "$out/device.txt"
date -u | tee -a "$out/device.txt"
TILE_SANITIZE=1 TILE_GPU_LOG_DIR="$out/logs" timeout 300 scripts/gpu-test.sh "$build" \
  > "$out/gpu-test.txt" 2>&1
echo "gpu-test rc=$?"; cat "$out/gpu-test.txt" | tail -16
progs="examples/host/example_softmax_rows examples/host/example_chunk_prefix_sum
  examples/host/example_gemm_simt examples/host/example_gemm examples/host/example_attention_fwd
  tests/gpu/test_gpu_tiles"
for prog in $progs; do
  ex=$(basename "$prog")
  for tool in memcheck racecheck synccheck; do
    [ "$tool" = memcheck ] && [ "$ex" != test_gpu_tiles ] && continue
    timeout 120 compute-sanitizer --tool $tool --error-exitcode 9 \
      "$build/$prog" > "$out/logs/$ex.$tool.log" 2>&1
    echo "$ex $tool rc=$? $(grep -hE 'ERROR SUMMARY|RACECHECK SUMMARY' "$out/logs/$ex.$tool.log")"
  done
done | tee "$out/sanitizers.txt"
for k in gemm gemm_pipelined attention_fwd; do
  echo "== $k"
  cuobjdump -sass "$build/cubins/$k.cubin" 2>&1 \
    | grep -oE "HGMMA[.A-Z0-9x]*|UTMALDG[.A-Z0-9]*|UTMASTG[.A-Z0-9]*|SYNCS[.A-Z0-9]*|LDL|STL" \
    | sort | uniq -c
done | tee "$out/sass.txt"
timeout 300 python3 bench/gemm_bench.py "$build" > "$out/gemm-bench.txt" 2>&1
echo "gemm_bench rc=$?"; cat "$out/gemm-bench.txt"
timeout 300 python3 bench/attention_bench.py "$build" > "$out/attention-bench.txt" 2>&1
echo "attention_bench rc=$?"; cat "$out/attention-bench.txt"
tar czf "$out/logs.tgz" -C "$out" logs && rm -rf "$out/logs"
