#!/usr/bin/env bash
# triton_cache_test.sh SCRIPT: a cache past one part's size (1 MB here, 15 MB by default)
# leaves in parts no larger than that and comes back byte for byte; env names the folder and turns autotuning's cache on;
# missing folders and parts are errors, and a bad command prints the usage.
set -u
tc=$1
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

mkdir -p "$t/cache/ab/cd"
export TRITON_CACHE_PART_BYTES=1000000
head -c 2500000 /dev/urandom > "$t/cache/ab/cd/kernel.cubin"   # random: xz keeps its size
echo '{"configs": [1, 2]}' > "$t/cache/ab/autotune.json"
"$tc" pack "$t/cache" "$t/parts" > /dev/null || fail "pack"
n=$(ls "$t/parts" | wc -l)
[ "$n" -ge 3 ] || fail "$n part(s) for 2.5 MB"
for p in "$t/parts"/*; do
	[ "$(stat -c %s "$p")" -le 1000000 ] || fail "$p is larger than a part"
done
mkdir -p "$t/back"
echo stale > "$t/back/old"
"$tc" unpack "$t/parts" "$t/back" || fail "unpack"
diff -r "$t/cache" "$t/back" > /dev/null || fail "unpacked cache differs"
"$tc" env "$t/back" | grep -q "^export TRITON_CACHE_DIR=$t/back TRITON_CACHE_AUTOTUNING=1$" ||
	fail "env: $("$tc" env "$t/back")"
# packing again replaces the parts
"$tc" pack "$t/back" "$t/parts" > /dev/null || fail "pack again"
[ "$(ls "$t/parts" | wc -l)" -eq "$n" ] || fail "stale parts left"
# the autotuning results alone (Triton names them FN.autotune.json): one small part, nothing else
echo '{"configs": [3]}' > "$t/back/ab/cd/k2.autotune.json"
"$tc" pack-tuning "$t/back" "$t/tuning" > /dev/null || fail "pack-tuning"
[ "$(ls "$t/tuning" | wc -l)" -eq 1 ] || fail "pack-tuning: $(ls "$t/tuning" | wc -l) parts"
"$tc" unpack "$t/tuning" "$t/tuned" || fail "unpack of pack-tuning's part"
[ "$(cd "$t/tuned" && find . -type f | sort | tr '\n' ' ')" = "./ab/cd/k2.autotune.json " ] ||
	fail "pack-tuning kept: $(cd "$t/tuned" && find . -type f | tr '\n' ' ')"
diff "$t/back/ab/cd/k2.autotune.json" "$t/tuned/ab/cd/k2.autotune.json" > /dev/null || fail "tuning differs"
# errors
"$tc" pack "$t/nothing" "$t/p2" 2> /dev/null && fail "pack of a missing folder"
"$tc" unpack "$t/nothing" "$t/u2" 2> /dev/null && fail "unpack without parts"
"$tc" env "$t/nothing" 2> /dev/null && fail "env of a missing folder"
"$tc" nope a b 2> "$t/usage"; [ $? -eq 2 ] || fail "bad command's status"
grep -q "triton-cache.sh: carries" "$t/usage" || fail "bad command prints no usage"
echo "triton-cache.sh: $n parts, round trip ok"
