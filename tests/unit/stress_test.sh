#!/usr/bin/env bash
# stress_test.sh TILEC SHAPE EMIT: generates a ~10 MB .tile file and compiles it;
# CTest's TIMEOUT turns anything slower than linear into a failure.
#   many: 1500 kernels of 100 'let's each (every phase, through EMIT)
#   one:  one kernel of 160k statements (one long list: the parser's appends)
set -eu
tilec=$1 shape=$2 emit=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
if [ "$shape" = many ]; then
  kernels=1500 lets=100
else
  kernels=1 lets=160000
fi
awk -v K="$kernels" -v N="$lets" 'BEGIN {
  for (k = 0; k < K; k++) {
    printf "kernel k%d(o: global f32[1024], n: i32) grid(1) threads(32) {\n  var acc = 0;\n", k
    for (i = 0; i < N; i++)
      printf "  let v%d = (n + %d) * 3 - (n >> 1) + (n & %d);\n  acc += v%d;\n", i, i, i, i
    printf "  o[0] = cast<f32>(acc);\n}\n"
  } }' > "$tmp/big.tile"
echo "$(wc -c < "$tmp/big.tile") bytes"
start=$(date +%s)
"$tilec" "$tmp/big.tile" --emit="$emit" -o /dev/null
echo "tilec --emit=$emit: $(( $(date +%s) - start )) s"
