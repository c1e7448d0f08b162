#!/usr/bin/env bash
# stress_test.sh TILEC SHAPE EMIT: generates ~10 MB .tile files and compiles them;
# CTest's TIMEOUT turns anything slower than linear into a failure.
#   many:    1500 kernels of 100 'let's each (every phase, through EMIT)
#   one:     one kernel of 160k statements (one long list: the parser's appends, and
#            160k names in one scope for sema's lookups)
#   consts:  250k constants, each defined from the one before (compiles), then the same
#            with each defined from the next (a chain sema would recurse along: refused
#            with located errors, not a crashed stack)
#   helpers: 160k helper functions in chains of 100 calls (compiles), then one chain
#            through all of them (helpers are inlined: refused with a located error)
set -eu
tilec=$1 shape=$2 emit=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# compile FILE WANT: compiles FILE, which must succeed (WANT=ok) or be refused with
# exit status 1 and a diagnostic matching WANT; prints its size and time.
compile() {
  local file=$1 want=$2 rc=0 start
  start=$(date +%s%N)
  "$tilec" "$file" --emit="$emit" -o /dev/null 2> "$tmp/err" || rc=$?
  echo "$(basename "$file"): $(wc -c < "$file") bytes, tilec --emit=$emit:" \
       "$(( ($(date +%s%N) - start) / 1000000 )) ms, exit status $rc"
  if [ "$want" = ok ] && [ $rc -ne 0 ]; then
    head -20 "$tmp/err"; exit 1
  fi
  if [ "$want" != ok ] && { [ $rc -ne 1 ] || ! grep -q "error: .*$want" "$tmp/err"; }; then
    echo "expected exit status 1 and an error matching '$want'"; head -20 "$tmp/err"; exit 1
  fi
  return 0
}

case $shape in
many|one)
  if [ "$shape" = many ]; then kernels=1500 lets=100; else kernels=1 lets=160000; fi
  awk -v K="$kernels" -v N="$lets" 'BEGIN {
    for (k = 0; k < K; k++) {
      printf "kernel k%d(o: global f32[1024], n: i32) grid(1) threads(32) {\n  var acc = 0;\n", k
      for (i = 0; i < N; i++)
        printf "  let v%d = (n + %d) * 3 - (n >> 1) + (n & %d);\n  acc += v%d;\n", i, i, i, i
      printf "  o[0] = cast<f32>(acc);\n}\n"
    } }' > "$tmp/big.tile"
  compile "$tmp/big.tile" ok ;;
consts)
  awk -v N=250000 'BEGIN {
    printf "const c0 = 1;\n"
    for (i = 1; i < N; i++) printf "const c%d = c%d %% 1000 + %d;\n", i, i - 1, i
    printf "kernel k(o: global i32[4]) grid(1) threads(32) { o[0] = c%d; }\n", N - 1
  }' > "$tmp/consts_up.tile"
  compile "$tmp/consts_up.tile" ok
  awk -v N=250000 'BEGIN {
    printf "kernel k(o: global i32[4]) grid(1) threads(32) { o[0] = c0; }\n"
    for (i = 0; i < N - 1; i++) printf "const c%d = c%d %% 1000 + %d;\n", i, i + 1, i
    printf "const c%d = 1;\n", N - 1
  }' > "$tmp/consts_down.tile"
  compile "$tmp/consts_down.tile" "constant 'c[0-9]*' is defined through constants nested" ;;
helpers)
  # h<i> is named so no name is a type (f16, i32...)
  awk -v N=160000 'BEGIN {
    for (i = 0; i < N; i++)
      if (i % 100 == 0) printf "fn h%d(x: i32) -> i32 { return x * 3 + %d; }\n", i, i
      else printf "fn h%d(x: i32) -> i32 { return h%d(x + 1) * 3 + %d; }\n", i, i - 1, i
    printf "kernel k(o: global i32[1024], n: i32) grid(1) threads(32) {\n"
    for (i = 99; i < N; i += 1000) printf "  o[%d] = h%d(n);\n", (i / 1000), i
    printf "}\n"
  }' > "$tmp/helpers.tile"
  compile "$tmp/helpers.tile" ok
  awk -v N=160000 'BEGIN {
    printf "kernel k(o: global i32[4], n: i32) grid(1) threads(32) { o[0] = h0(n); }\n"
    for (i = 0; i < N - 1; i++) printf "fn h%d(x: i32) -> i32 { return h%d(x + 1) * 3 + %d; }\n", i, i + 1, i
    printf "fn h%d(x: i32) -> i32 { return x; }\n", N - 1
  }' > "$tmp/helper_chain.tile"
  compile "$tmp/helper_chain.tile" "nested helper calls, more than" ;;
*)
  echo "unknown shape '$shape'"; exit 2 ;;
esac
