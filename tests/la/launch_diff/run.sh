#!/bin/sh
# run.sh [OLD_COMMIT] [BUILD]: every launch of libtilela at OLD_COMMIT against this tree's, on
# the fake driver (tests/runtime/fake_cuda.c: 132 SMs, the real cubins loaded, nothing run).
# drive.c makes about 23,000 GDN and KDA calls (a table of shapes, head counts, D, l2norm, gate
# forms, chunk states, and the scheduling overrides on a subset of them); lalog.c, preloaded,
# prints each launch: kernel, early start and every argument's value (pointers of the fake
# address space exactly, the handle's own buffer as "heap"). The two logs must be identical.
# Not a ctest: it builds OLD_COMMIT's kernels (about a minute). OLD_COMMIT defaults to HEAD:
# the working tree's changes must not change a launch unless they mean to. Commits before the
# chained path (GDN, and KDA without chunk states, for every gate) plan differently by design.
# fdf69e3, the last commit before the launch plan, takes its options from environment
# variables and its workspace query without a handle: drive.c speaks that API without -DNEW;
# any later OLD_COMMIT gets -DNEW on both sides. (CMAKE_BUILD_PARALLEL_LEVEL limits the old
# build's jobs.)
set -eu
old=${1:-HEAD}
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../../.." && pwd)
new_build=${2:-$repo/build}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
old_flag=
case $old in fdf69e3*) ;; *) old_flag=-DNEW ;; esac

git -C "$repo" archive "$old" | tar -x -C "$work" --one-top-level=old
cmake -S "$work/old" -B "$work/old/build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  >"$work/configure.log" 2>&1 || { cat "$work/configure.log"; exit 1; }
cmake --build "$work/old/build" --target tilela >"$work/build.log" 2>&1 ||
  { tail -30 "$work/build.log"; exit 1; }
cmake --build "$new_build" --target tilela fakecuda >/dev/null

side() { # name src build flag
  gcc -O1 -std=gnu17 $4 -I"$2/runtime/include" -I"$2/kernels/include" "$here/drive.c" \
    -o "$work/drive_$1" -L"$3/kernels" -L"$3/runtime" -ltilela -ltilert \
    -Wl,-rpath,"$3/kernels:$3/runtime"
  gcc -O1 -std=gnu17 $4 -shared -fPIC -I"$2/runtime/include" "$here/lalog.c" \
    -o "$work/lalog_$1.so" -ldl
  norand=$(command -v setarch >/dev/null && echo "setarch -R" || echo "")
  FAKE_CUDA_ANY_IMAGE=1 LD_PRELOAD="$work/lalog_$1.so" $norand "$work/drive_$1" \
    "$new_build/tests/runtime/libfakecuda.so" >"$work/$1.log"
}
side old "$work/old" "$work/old/build" "$old_flag"
side new "$repo" "$new_build" -DNEW
calls=$(grep -c '^case' "$work/new.log")
launches=$(grep -c '^launch' "$work/new.log")
if cmp -s "$work/old.log" "$work/new.log"; then
  echo "ok: $calls calls, $launches launches, identical at $old and in this tree"
else
  diff "$work/old.log" "$work/new.log" | head -40
  echo "FAIL: the launches differ"
  exit 1
fi
