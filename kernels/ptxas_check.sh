#!/bin/sh
# ptxas_check.sh TILEC SRC INCLUDE_DIR OUT_PREFIX [tilec flags...]: compile one kernel variant
# to PTX and assemble it for sm_90a with ptxas -v. Fails on an error or any spill; exits 77
# (skipped) when ptxas is not installed.
tilec=$1 src=$2 inc=$3 out=$4
shift 4
ptxas=$(command -v ptxas || echo /usr/local/cuda/bin/ptxas)
[ -x "$ptxas" ] || { echo "ptxas not found: skipped"; exit 77; }
"$tilec" "$src" -I "$inc" "$@" --emit=ptx -o "$out.ptx" || exit 1
"$ptxas" -arch=sm_90a -v "$out.ptx" -o "$out.cubin" 2> "$out.ptxas.txt" || { cat "$out.ptxas.txt"; exit 1; }
cat "$out.ptxas.txt"
if grep -Eq "[1-9][0-9]* bytes spill" "$out.ptxas.txt"; then echo "FAIL: spills"; exit 1; fi
