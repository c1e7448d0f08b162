#!/bin/sh
# run.sh BUILD_DIR SOURCE_DIR GENERATOR C_COMPILER: installs the build into a temporary prefix
# and uses it as a stranger would (ctest install.prefix, label "install"; no GPU needed):
#   1. the prefix holds tilec, its prelude, both libraries shared and static, the headers
#      and the CMake package;
#   2. the installed tilec, run from a directory outside the source tree, compiles a file
#      that imports from the prelude;
#   3. consumer/, configured with only the prefix, compiles its .tile file with that tilec
#      through find_package(tilec) and links libtilela and libtilert, shared and static;
#      both programs run;
#   4. a copy of the prefix elsewhere still works (tilec finds its prelude relative to
#      itself), and one without share/tilec/prelude fails instead of reaching back into the
#      source tree.
set -eu
build=$1 src=$2 gen=$3 cc=$4
work=$(mktemp -d "${TMPDIR:-/tmp}/tilec-install.XXXXXX")
trap 'rm -rf "$work"' EXIT
prefix=$work/prefix
fail() { echo "install test: FAIL: $*" >&2; exit 1; }
quiet() { # run a command, show its output only if it fails
	log=$work/step.log
	"$@" >"$log" 2>&1 || { cat "$log"; fail "$*"; }
}

echo "== cmake --install $build --prefix $prefix"
quiet cmake --install "$build" --prefix "$prefix"
libdir=$(cd "$prefix" && ls -d lib*/cmake/tilec 2>/dev/null | head -n 1 | sed 's|/cmake/tilec$||')
[ -n "$libdir" ] || fail "no lib*/cmake/tilec in the prefix"
for f in bin/tilec share/tilec/prelude/warp.tile include/tile.h include/tile_embed.h \
	include/tile_la.h "$libdir/libtilert.so" "$libdir/libtilert.a" "$libdir/libtilela.so" \
	"$libdir/libtilela.a" "$libdir/cmake/tilec/tilecConfig.cmake" \
	"$libdir/cmake/tilec/tilecConfigVersion.cmake" "$libdir/cmake/tilec/TileKernels.cmake"; do
	[ -e "$prefix/$f" ] || fail "$f is not installed"
	echo "ok   $f"
done

echo "== the installed tilec, from a directory outside the source tree"
mkdir "$work/cwd"
cp "$src/tests/install/consumer/rowsum.tile" "$work/cwd/"
cd "$work/cwd"
quiet "$prefix/bin/tilec" rowsum.tile --emit=ptx -o rowsum.ptx
grep -q "\.entry rowsum" rowsum.ptx || fail "no .entry rowsum in the PTX"
echo "ok   tilec rowsum.tile (imports warp.tile from the prelude)"

echo "== consumer: find_package(tilec) from the prefix alone"
quiet cmake -S "$src/tests/install/consumer" -B "$work/consumer" -G "$gen" \
	-DCMAKE_C_COMPILER="$cc" -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$prefix" \
	-DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF
grep -q "tilec_DIR:PATH=$prefix/" "$work/consumer/CMakeCache.txt" \
	|| fail "the consumer found a tilec package outside the prefix"
quiet cmake --build "$work/consumer" --verbose
grep -q "$prefix/bin/tilec" "$log" || fail "rowsum.tile was not compiled by the installed tilec"
for exe in consumer consumer_static; do
	"$work/consumer/$exe" >"$work/$exe.log" 2>&1 || { cat "$work/$exe.log"; fail "$exe"; }
	grep -q "consumer: OK" "$work/$exe.log" || { cat "$work/$exe.log"; fail "$exe"; }
	echo "ok   $exe runs"
done
sed 's/^/     /' "$work/consumer.log"

echo "== a moved prefix"
cp -a "$prefix" "$work/moved"
quiet "$work/moved/bin/tilec" rowsum.tile --emit=ptx -o moved.ptx
echo "ok   a copy of the prefix finds its own prelude"
rm -r "$work/moved/share/tilec/prelude"
if "$work/moved/bin/tilec" rowsum.tile --emit=ptx -o none.ptx >"$work/noprelude.log" 2>&1; then
	fail "tilec without its prelude still found warp.tile (from the source tree?)"
fi
grep -q "warp.tile" "$work/noprelude.log" || { cat "$work/noprelude.log"; fail "no import error"; }
echo "ok   without share/tilec/prelude the import fails: $(head -n 1 "$work/noprelude.log")"
echo "install test: PASS"
