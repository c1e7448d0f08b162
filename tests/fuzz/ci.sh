#!/usr/bin/env bash
# ci.sh: fuzz the front end for a fixed time on the seed corpus, so that a change which
# reintroduces a crash, a leak, a hang or an internal error fails the test suite.
#   tests/fuzz/ci.sh SOURCE_DIR BUILD_DIR [SECONDS]
# Builds fuzz_frontend with clang (libFuzzer, ASan, UBSan) in BUILD_DIR/fuzz, fuzzes a copy
# of tests/fuzz/corpus for SECONDS (default 60) and keeps any finding in BUILD_DIR/fuzz/findings.
# Exit 77 (reported as skipped) only when no clang with libFuzzer is installed.
set -euo pipefail
src=$(cd "$1" && pwd)
out=$2/fuzz
secs=${3:-60}

cc=""
for c in clang-14 clang; do
  if command -v "$c" >/dev/null; then cc=$(command -v "$c"); break; fi
done
if [ -z "$cc" ] || ! echo 'int LLVMFuzzerTestOneInput(const char *d, long n) { return 0; }' |
     "$cc" -x c -fsanitize=fuzzer -o /dev/null - 2>/dev/null; then
  echo "skipped: no clang with libFuzzer (Debian: clang-14 libclang-rt-14-dev)"
  exit 77
fi

mkdir -p "$out"
log=$out/build.log
if ! { cmake -S "$src" -B "$out/build" -DTILEC_FUZZ=ON -DCMAKE_C_COMPILER="$cc" \
         -DCMAKE_BUILD_TYPE=RelWithDebInfo &&
       cmake --build "$out/build" --target fuzz_frontend -j "$(nproc 2>/dev/null || echo 2)"; } \
     >"$log" 2>&1; then
  tail -n 40 "$log"
  echo "fuzz: building fuzz_frontend failed (log: $log)"
  exit 1
fi

work=$out/corpus findings=$out/findings
rm -rf "$work" && mkdir -p "$work" "$findings"
cp "$src"/tests/fuzz/corpus/* "$work"/
cd "$findings"
"$out/build/tests/fuzz/fuzz_frontend" -dict="$src/tests/fuzz/tile.dict" \
  -max_total_time="$secs" -timeout=10 -max_len=4096 -rss_limit_mb=2048 \
  -print_final_stats=1 "$work" 2>&1 | tail -n 30
echo "fuzz: no finding in $secs s"
