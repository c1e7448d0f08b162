#!/bin/sh
# run.sh SRC_DIR WORK_DIR GENERATOR RUNTIME_INCLUDE KERNELS_CMAKE
# Builds the project in SRC_DIR (a copy of it, so sources can be touched) with a stand-in tilec,
# then checks the rebuild rules of tile_add_kernel_library: a touched import rebuilds only the
# module that imports it, a touched -I import likewise, and an untouched tree builds nothing.
set -eu
src=$1 work=$2 gen=$3 inc=$4 kcm=$5
rm -rf "$work"; mkdir -p "$work"
cp -R "$src" "$work/src"
s=$work/src b=$work/build
gen_dir=$b/my-kernels_tile
fail() { echo "FAIL: $*"; exit 1; }
count() { cat "$gen_dir/$1.c.count"; }
build() { cmake --build "$b" >"$work/build.log" 2>&1 || { cat "$work/build.log"; fail "build"; }; }

cmake -S "$s" -B "$b" -G "$gen" -DTILE_RUNTIME_INCLUDE="$inc" -DTILE_KERNELS_CMAKE="$kcm" \
  -DFAKE_TILEC="$s/fake_tilec.sh" >"$work/configure.log" 2>&1 \
  || { cat "$work/configure.log"; fail "configure"; }
build
"$b/list_modules" || fail "registry"
[ "$(count a)" = 1 ] && [ "$(count b_2)" = 1 ] || fail "first build: counts $(count a) $(count b_2)"

sleep 1; touch "$s/tiles/common.tile"; build
[ "$(count a)" = 2 ] && [ "$(count b_2)" = 1 ] || fail "import of a: counts $(count a) $(count b_2)"

sleep 1; touch "$s/tiles/lib/helpers.tile"; build
[ "$(count a)" = 2 ] && [ "$(count b_2)" = 2 ] || fail "-I import of b_2: $(count a) $(count b_2)"

build
[ "$(count a)" = 2 ] && [ "$(count b_2)" = 2 ] || fail "no-op build recompiled"

sleep 1; touch "$s/tiles/a.tile"; build
[ "$(count a)" = 3 ] || fail "source of a: count $(count a)"
"$b/list_modules" >/dev/null || fail "registry after rebuilds"
echo "ok: tile_add_kernel_library builds, registers and rebuilds on imports ($gen)"
