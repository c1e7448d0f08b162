#!/bin/sh
# header_test.sh TILEC CC RUNTIME_INCLUDE: the typed launch header (tilec --emit=header).
#   1. k.tile's header is exactly k.expected.h (the version aside): one field per parameter
#      with its C type, a tma tensor's strides, the launch function's names and kinds.
#   2. It compiles as C11 with every warning, alone and twice over.
#   3. Two variants of one source whose parameters agree (IN=bf16, IN=f16) share one struct;
#      variants that disagree (a scalar's type) fail to compile, naming the parameter.
#   4. --emit=embed --header writes the same header as --emit=header.
set -eu
tilec=$1 cc=$2 inc=$3
here=$(dirname "$0")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
cflags="-std=c11 -Wall -Wextra -Wpedantic -Werror -fsyntax-only -I$tmp -I$inc"

"$tilec" "$here/k.tile" --emit=header -o "$tmp/k.h"
sed 's/tilec [0-9.]* from/tilec VERSION from/' "$tmp/k.h" | diff -u "$here/k.expected.h" - ||
  fail "k.tile's header differs from k.expected.h"
printf '#include "k.h"\n#include "k.h"\nint use(tile_kernel *k);\nint use(tile_kernel *k)\n{\n\ttile_args_k a = {.m = 1, .n = 2, .s = 3.0f};\n\treturn (int)tile_launch_k(k, &a, NULL, 0);\n}\n' >"$tmp/use.c"
$cc $cflags "$tmp/use.c" || fail "k.h does not compile"

v() { "$tilec" "$here/variant.tile" -D IN=$1 -D S=$2 --module-name=v_$3 --emit=header -o "$tmp/v_$3.h"; }
v bf16 i32 bf16; v f16 i32 f16; v f16 i64 i64
printf '#include "v_bf16.h"\n#include "v_f16.h"\n' >"$tmp/agree.c"
$cc $cflags "$tmp/agree.c" || fail "two agreeing variants do not compile together"
printf '#include "v_bf16.h"\n#include "v_i64.h"\n' >"$tmp/differ.c"
if $cc $cflags "$tmp/differ.c" 2>"$tmp/differ.log"; then
  fail "two variants that disagree on parameter n compiled together"
fi
grep -q "module v_i64: kernel v.*s parameter 3 is n (i64)" "$tmp/differ.log" ||
  { cat "$tmp/differ.log"; fail "the disagreement is not named"; }

"$tilec" "$here/k.tile" --emit=embed -o "$tmp/k.c" --header "$tmp/k2.h"
cmp -s "$tmp/k.h" "$tmp/k2.h" || fail "--header differs from --emit=header"
grep -q "tile_module_k = {" "$tmp/k.c" || fail "--emit=embed --header wrote no module"
echo "ok: typed launch header"
