#!/usr/bin/env bash
# gpu-test.sh: run every GPU test and example on a GPU machine, from a build tree made on a
# machine without a GPU (copied over whole; no compiler, LLVM, flex, bison or CMocka needed
# there: the build bundles libcmocka into <build>/lib).
#
#   scripts/gpu-test.sh [BUILD_DIR]          BUILD_DIR defaults to <repo>/build
#
#   TILE_GPU_LOG_DIR  where full logs go (default ./gpu-logs): one <test>.log per run, plus
#                     environment.log (GPU, driver) and summary.txt (the table below)
#   TILE_SANITIZE=1   also run each example under compute-sanitizer --tool memcheck, and
#                     tests/gpu/la_cp_exact.py --small (context parallelism's segments, one
#                     GDN and one KDA call) and tests/gpu/la_bwd.py --small (the backward's
#                     small cases, D = 64 and 128) under memcheck and racecheck
#   TILE_TEST_SEED    seed for the tests' and examples' random inputs (default: the time)
#
# Runs each CTest test labelled "gpu" (tests/gpu and the example programs) one at a time, then
# the sanitizer runs, and prints a summary table. Exit status: 0 when everything passed,
# 1 when anything failed, 2 when nothing failed but something was skipped (on a GPU machine a
# skip means no usable GPU or driver, which is not a pass).
# If the build was configured at another path, the CTest files and examples.list are rewritten
# to this location first (CTest records absolute paths).
set -u

root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build}
[ -f "$build/CMakeCache.txt" ] || { echo "gpu-test: no build tree at '$build'" >&2; exit 1; }
build=$(cd "$build" && pwd)
logs=${TILE_GPU_LOG_DIR:-$PWD/gpu-logs}
mkdir -p "$logs" && logs=$(cd "$logs" && pwd)
export LD_LIBRARY_PATH="$build/lib:$build/runtime${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"

results=()  # "name|result|seconds|log"
npass=0 nfail=0 nskip=0

# --- the build may have been made elsewhere ---------------------------------------------------
cache_value() { sed -n "s|^$1:[A-Z]*=||p" "$build/CMakeCache.txt"; }

relocate() {
	local old_build old_src sep
	old_build=$(cache_value CMAKE_CACHEFILE_DIR)
	old_src=$(cache_value CMAKE_HOME_DIRECTORY)
	sep=$(printf '\001')
	[ -n "$old_build" ] && [ "$old_build" != "$build" ] || return 0
	grep -rqsF --include=CTestTestfile.cmake "$old_build" "$build" || return 0
	echo "gpu-test: build was configured at $old_build; rewriting CTest paths to $build"
	find "$build" \( -name CTestTestfile.cmake -o -name examples.list \) -print0 |
	while IFS= read -r -d '' f; do
		sed -i "s${sep}${old_build}${sep}${build}${sep}g" "$f"
		if [ -n "$old_src" ] && [ "$old_src" != "$root" ] && [ -d "$root/runtime" ]; then
			sed -i "s${sep}${old_src}${sep}${root}${sep}g" "$f"
		fi
	done
}

environment() {
	{
		echo "date: $(date -u)"; echo "host: $(uname -a)"; echo "build: $build"
		echo "repo: $root"; echo "LD_LIBRARY_PATH: $LD_LIBRARY_PATH"
		echo "TILE_TEST_SEED: ${TILE_TEST_SEED:-(unset: time-based)}"
		command -v nvidia-smi >/dev/null && nvidia-smi 2>&1 || echo "nvidia-smi: not found"
		ls -l "$build/lib" 2>&1
	} >"$logs/environment.log"
}

record() { # name result seconds log
	results+=("$1|$2|$3|$4")
	case $2 in
	PASS) npass=$((npass + 1)) ;;
	SKIP) nskip=$((nskip + 1)) ;;
	*) nfail=$((nfail + 1)) ;;
	esac
}

now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }

# --- CTest tests labelled gpu (one ctest run each, so each has its own log) ------------------------
run_ctest() {
	local name=$1 log="$logs/$1.log" t0 line result
	t0=$(now)
	(cd "$build" && ctest -R "^${name//./\\.}\$" -V --timeout 900) >"$log" 2>&1
	line=$(grep -E "Test +#[0-9]+: $name " "$log" | tail -n 1)
	case $line in
	*Passed*) result=PASS ;;
	*Skipped* | *"Not Run"*) result=SKIP ;;
	*) result=FAIL ;;
	esac
	record "$name" "$result" "$(elapsed "$t0")" "$log"
}

gpu_tests() {
	(cd "$build" && ctest -N -L gpu) | sed -n 's/^ *Test *#[0-9]*: \(.*\)$/\1/p'
}

# --- examples under compute-sanitizer ---------------------------------------------------------
sanitizer() {
	command -v compute-sanitizer 2>/dev/null ||
		{ [ -x /usr/local/cuda/bin/compute-sanitizer ] && echo /usr/local/cuda/bin/compute-sanitizer; }
}

run_sanitized() { # name check tool command...
	local name=$1 check=$2 tool=$3 log="$logs/$1.$2.log" t0 rc result
	shift 3
	t0=$(now)
	"$tool" --tool "$check" --error-exitcode 99 --print-limit 50 "$@" >"$log" 2>&1
	rc=$?
	case $rc in
	0) result=PASS ;;
	77) result=SKIP ;;
	99) result="FAIL($check)" ;;
	*) result="FAIL(rc=$rc)" ;;
	esac
	record "$name ($check)" "$result" "$(elapsed "$t0")" "$log"
}

# The GDN/KDA library through the Python package: la_cp_exact.py --small runs context
# parallelism's segments (2 chunks) and their baselines, small enough for racecheck; the
# script exits 77 (skipped) without torch or a CUDA device.
sanitize_la() {
	local tool=$1 check
	local -x PYTHONPATH="$root/python" TILE_LA_LIBRARY="$build/kernels/libtilela.so"
	local -x TILE_REF_LIB="$build/tests/ref/libtileref_shared.so"
	command -v python3 >/dev/null 2>&1 || { record "la_cp_exact --small" SKIP 0 /dev/null; return; }
	for check in memcheck racecheck; do
		run_sanitized la_cp_exact_small "$check" "$tool" \
			python3 "$root/tests/gpu/la_cp_exact.py" --small
		run_sanitized la_bwd_small "$check" "$tool" \
			python3 "$root/tests/gpu/la_bwd.py" --small --no-fla
	done
}

sanitize_examples() {
	local tool list name exe
	tool=$(sanitizer)
	if [ -z "$tool" ]; then
		echo "compute-sanitizer not found (PATH, /usr/local/cuda/bin)" >"$logs/memcheck.log"
		record "compute-sanitizer" "FAIL(missing)" 0 "$logs/memcheck.log"
		return
	fi
	# the build's own list (a nested build, such as fuzz/'s, has one of its own)
	list="$build/examples/host/examples.list"
	if [ -f "$list" ]; then
		while IFS=$'\t' read -r name exe; do
			[ -n "$name" ] && run_sanitized "$name" memcheck "$tool" "$exe"
		done <"$list"
	fi
	sanitize_la "$tool"
}

summary() { # 80 columns: each test's log is <test>.log (or <test>.<check>.log) in $logs
	local r name result secs log
	printf '%-50s %-18s %8s\n' test result seconds
	for r in "${results[@]}"; do
		IFS='|' read -r name result secs log <<<"$r"
		printf '%-50.50s %-18.18s %8s\n' "$name" "$result" "$secs"
	done
	echo "$npass passed, $nfail failed, $nskip skipped (skipped is not passed)"
	echo "logs: $logs/<test>.log"
}

relocate
environment
mapfile -t tests < <(gpu_tests)
if [ ${#tests[@]} -eq 0 ]; then
	echo "gpu-test: no tests labelled gpu in $build (was it configured with the tests?)" >&2
	exit 1
fi
for t in "${tests[@]}"; do
	run_ctest "$t"
done
[ "${TILE_SANITIZE:-0}" = 1 ] && sanitize_examples
summary | tee "$logs/summary.txt"
[ $nfail -gt 0 ] && exit 1
[ $nskip -gt 0 ] && exit 2
exit 0
