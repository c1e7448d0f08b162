#!/usr/bin/env bash
# gpu-la-final.sh OUT_DIR: the recorded GDN/KDA run on the GPU machine (from a build made
# elsewhere, FLA's fla/ in third_party_fla/): parity against the fp64 C reference, the KDA C
# example and the tile layout tests, compute-sanitizer memcheck and racecheck on the smoke
# test, the per-kernel times, then the side-by-side benchmark with FLA (quick grid). Each
# step has a time limit. Environment: BENCH=0 skips the benchmark (BENCH_S seconds, default
# 540: FLA compiles its kernels for every shape inside it), BENCH_ARGS replaces
# --quick; FLA_PARITY_S=N runs la_parity.py with FLA for N seconds over the cases matching
# FLA_PARITY_K (default gdn; the table keeps the cases finished in time); TESTS=0 skips
# everything before the benchmark.
set -u
. "$(dirname "$0")/gpu-common.sh"
if [ "${TESTS:-1}" != 0 ]; then
timeout 200 python3 tests/gpu/la_parity.py --no-fla --out "$out/parity_full.md" > "$out/parity.log" 2>&1
echo "parity rc=$? $(grep Summary "$out/parity_full.md")"
timeout 30 build/examples/host/example_kda_forward > "$out/example_kda_forward.log" 2>&1
echo "example_kda_forward rc=$? $(grep -c PASS "$out/example_kda_forward.log") PASS"
timeout 30 build/tests/gpu/test_gpu_tiles > "$out/test_gpu_tiles.log" 2>&1
echo "test_gpu_tiles rc=$? $(grep -c PASS "$out/test_gpu_tiles.log") PASS"
timeout 150 compute-sanitizer --tool memcheck --error-exitcode 9 python3 tests/gpu/la_smoke.py \
  > "$out/memcheck.log" 2>&1
echo "memcheck rc=$? $(grep -hE 'ERROR SUMMARY' "$out/memcheck.log")"
# racecheck on the whole smoke test runs past any sane limit; one multi-chunk call per
# forward path instead (GDN: gdn_kkt + gdn_fused over 4 chunks; KDA: chunk_prep + chunk_recur)
for kind in ${RACECHECK_KINDS:-gdn kda}; do
  timeout 120 compute-sanitizer --tool racecheck --error-exitcode 9 python3 tests/gpu/la_one.py \
    $kind 256 2 4 l2 > "$out/racecheck_$kind.log" 2>&1
  echo "racecheck $kind rc=$? $(grep -hE 'RACECHECK SUMMARY' "$out/racecheck_$kind.log")"
done
timeout 90 python3 tests/gpu/la_perf_probe.py all > "$out/probe.log" 2>&1
echo "probe rc=$?"; grep -E "T=" "$out/probe.log"
fi
if [ "${FLA_PARITY_S:-0}" != 0 ]; then
  PYTHONPATH=$PWD/python:$PWD/third_party_fla FLA_DISABLE_BACKEND_DISPATCH=1 timeout "$FLA_PARITY_S" \
    python3 tests/gpu/la_parity.py -k "${FLA_PARITY_K:-gdn}" --out "$out/parity_fla.md" \
    > "$out/parity_fla.log" 2>&1
  echo "parity with FLA rc=$? (124: time limit; the table keeps the finished cases)"
  grep -cE "^\| (gdn|kda)" "$out/parity_fla.md"
fi
if [ "${BENCH:-1}" != 0 ]; then
  PYTHONPATH=$PWD/python:$PWD/third_party_fla FLA_DISABLE_BACKEND_DISPATCH=1 timeout "${BENCH_S:-540}" \
    python3 bench/la_bench.py ${BENCH_ARGS:---quick} --results-dir "$out" > "$out/bench.log" 2>&1
  echo "bench rc=$?"; grep -E "geometric|^\| (GDN|KDA)" "$out/bench.log" | tail -17
fi
# at most 8 files come back from the device: everything in one archive
tar czf /tmp/final.tgz -C "$out" . && find "$out" -type f -delete && mv /tmp/final.tgz "$out/"
