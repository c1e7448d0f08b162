#!/bin/sh
# fake_tilec.sh: a stand-in for
#   `tilec FILE.tile --emit=embed -o OUT.c --header OUT.h [-I DIR]... --depfile D`
# used to test cmake/TileKernels.cmake without the compiler. It follows `import NAME` lines
# (NAME.tile next to FILE or in a -I directory), writes a C file defining tile_module_<stem>
# whose metadata names the stem and whose "PTX" holds a build counter, and a Make-style depfile
# listing FILE and every imported file; the header declares tile_module_<stem>.
set -eu
src=$1; shift
out='' dep='' header=''
incs=
while [ $# -gt 0 ]; do
  case $1 in
    --emit=embed) ;;
    -o) out=$2; shift ;;
    --header) header=$2; shift ;;
    -I) incs="$incs $2"; shift ;;
    --depfile) dep=$2; shift ;;
    *) echo "fake_tilec: unexpected argument '$1'" >&2; exit 2 ;;
  esac
  shift
done
[ -n "$out" ] && [ -n "$dep" ] && [ -n "$header" ] ||
  { echo "fake_tilec: need -o, --header and --depfile" >&2; exit 2; }
stem=$(basename "$src" .tile)
deps=$src
for name in $(sed -n 's/^import \([A-Za-z0-9_]*\).*/\1/p' "$src"); do
  found=
  for dir in "$(dirname "$src")" $incs; do
    if [ -f "$dir/$name.tile" ]; then found=$dir/$name.tile; break; fi
  done
  [ -n "$found" ] || { echo "$src: error: cannot find import '$name'" >&2; exit 1; }
  deps="$deps $found"
done
count_file=$out.count
count=$(( $(cat "$count_file" 2>/dev/null || echo 0) + 1 ))
echo $count > "$count_file"
cat > "$out" <<EOC
/* written by fake_tilec.sh from $src (build $count) */
#include "tile_embed.h"
const tile_embedded_module tile_module_$stem = {
	"$stem", 0, 0, "// FAKE-PTX build $count",
	"tilec-meta 1\nmodule $stem\n",
};
EOC
cat > "$header" <<EOC
/* written by fake_tilec.sh from $src */
#include "tile_embed.h"
extern const tile_embedded_module tile_module_$stem;
#define FAKE_HEADER_$stem 1
EOC
echo "$out: $deps" > "$dep"
