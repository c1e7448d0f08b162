#!/usr/bin/env bash
# triton-cache.sh: carries FLA's Triton cache (its compiled kernels and, with
# TRITON_CACHE_AUTOTUNING=1, its autotuning results) from one GPU machine call to the next, so
# that an FLA cell whose autotuning does not fit one call (KDA's, GDN's 8192x4 backward) is
# timed in a later call, beside ours in that call's run. A file a call returns holds at most
# 16 MB, so the cache leaves as parts of 15 MB.
#
#   triton-cache.sh env DIR              the exports that keep the cache, autotuning included,
#                                        in DIR (eval "$(scripts/triton-cache.sh env DIR)")
#   triton-cache.sh pack DIR OUT         DIR -> OUT/triton-cache.tar.xz.part-aa, -ab, ...
#   triton-cache.sh pack-tuning DIR OUT  the autotuning results alone (*.autotune.json: KBs,
#                                        packed in a second where the whole cache, hundreds of
#                                        MB, can outlast a call's end; the configs they pick
#                                        compile again, seconds each), as the same parts
#   triton-cache.sh unpack PARTS DIR     the parts in the folder PARTS -> DIR (replaced)
set -euo pipefail
PART_BYTES=${TRITON_CACHE_PART_BYTES:-15000000}   # (smaller in the script's test)
NAME=triton-cache.tar.xz

usage() {
	sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//' >&2
	exit 2
}

[ $# -ge 2 ] || usage
case "$1" in
env)
	[ $# -eq 2 ] || usage
	dir=$(cd "$2" 2>/dev/null && pwd) || { echo "triton-cache.sh: no folder $2" >&2; exit 1; }
	echo "export TRITON_CACHE_DIR=$dir TRITON_CACHE_AUTOTUNING=1"
	;;
pack | pack-tuning)
	[ $# -eq 3 ] || usage
	[ -d "$2" ] || { echo "triton-cache.sh: no folder $2" >&2; exit 1; }
	mkdir -p "$3"
	rm -f "$3/$NAME".part-*
	if [ "$1" = pack ]; then
		tar -C "$2" -cJf - . | split -b "$PART_BYTES" - "$3/$NAME.part-"
	else
		(cd "$2" && find . -name '*.autotune.json' -print0 | tar --null -T - -cJf -) |
			split -b "$PART_BYTES" - "$3/$NAME.part-"
	fi
	ls "$3/$NAME".part-* | wc -l | sed 's/$/ parts/'
	;;
unpack)
	[ $# -eq 3 ] || usage
	parts=$(ls "$2/$NAME".part-* 2>/dev/null) || { echo "triton-cache.sh: no parts in $2" >&2; exit 1; }
	rm -rf "$3"
	mkdir -p "$3"
	# split names the parts in order (-aa, -ab, ...): the glob's order is theirs
	cat $parts | tar -C "$3" -xJf -
	;;
*)
	usage
	;;
esac
