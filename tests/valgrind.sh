#!/usr/bin/env bash
# valgrind.sh BUILD_DIR: runs the compiler's unit tests and the file-driven
# tests (every diagnostic file, every golden file through PTX) under
# valgrind's memcheck: any invalid access, use of uninitialised memory or
# leak of ours fails. LLVM keeps global registries alive for the process
# ("still reachable"), which is not a leak and is not counted.
set -uo pipefail
build=${1:-build}
src=$(cd "$(dirname "$0")/.." && pwd)
vg=(valgrind -q --leak-check=full --errors-for-leak-kinds=definite,indirect
    --error-exitcode=99)
fails=0 runs=0
run() {
  runs=$((runs + 1))
  "${vg[@]}" "$@" >/dev/null 2>"$build/valgrind.last.log"
  if [ $? -eq 99 ]; then
    fails=$((fails + 1))
    echo "valgrind: errors in: $*"
    cat "$build/valgrind.last.log"
  fi
}
for t in lexer parser sema tir passes codegen; do
  run "$build/tests/unit/test_$t"
done
for f in "$src"/tests/diag/*.tile; do
  run "$build/tests/golden/tilec_check" diag "$f"
done
for f in "$src"/tests/golden/*.tile; do
  run "$build/tests/golden/tilec_check" golden "$f"
done
echo "valgrind: $((runs - fails)) passed, $fails failed"
[ "$fails" -eq 0 ]
