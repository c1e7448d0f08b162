#!/usr/bin/env bash
# show-kernels.sh [BUILD_DIR]: every shipped .tile file (examples/, kernels/) compiled with the
# built tilec, one line per kernel, 80 columns: threads per block and shared memory (from the
# launch metadata), ptxas's registers and spill stores, the machine code size in SASS
# instructions (the .text section / 16 bytes, read with readelf when binutils is there: code
# that runs once per CTA is paid for in instruction fetches, kernels/README.md), and the
# PTX and cubin sizes. The compiling is the build's `tile_show` target (cmake/TileShow.cmake),
# so files that have not changed are not compiled again.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
out="$build/show"
if ! cmake --build "$build" --target tile_show >"$build/show.log" 2>&1; then
  tail -n 30 "$build/show.log" >&2
  echo "show-kernels: compiling the shipped .tile files failed (full log: $build/show.log)" >&2
  exit 1
fi

kib() { awk -v b="$1" 'BEGIN { printf "%.1f", b / 1024 }'; }

# ptxas -v: "Compiling entry function 'K'", then its spill stores and registers
ptxas_field() { # file kernel what(regs|spill)
  awk -v k="$2" -v what="$3" '
    /Compiling entry function/ { cur = ($0 ~ "'"'"'" k "'"'"'") }
    cur && what == "spill" && /spill stores/ { for (i = 1; i < NF; i++) if ($(i+1) == "bytes" && $(i+2) == "spill" && $(i+3) == "stores,") { print $i; exit } }
    cur && what == "regs" && /Used [0-9]+ registers/ { for (i = 1; i < NF; i++) if ($i == "Used") { print $(i+1); exit } }
  ' "$1"
}

printf '%-22s %7s %8s %5s %7s %6s %7s %8s\n' kernel threads "smem KB" regs "spill B" sass "ptx KB" "cubin KB"
shopt -s nullglob
for dir in examples kernels; do
  echo "$dir/"
  for f in "$dir"/*.tile; do   # kernels/common/ holds imported helpers only
    name=$(basename "$f" .tile)
    meta="$out/$name.meta"
    [ -f "$meta" ] || { echo "show-kernels: $meta missing" >&2; exit 1; }
    ptx=$(kib "$(stat -c %s "$out/$name.ptx")")
    cubin="-"
    [ -f "$out/$name.cubin" ] && cubin=$(kib "$(stat -c %s "$out/$name.cubin")")
    # one line per kernel: its name and its block's threads and shared memory
    while read -r k threads smem; do
      regs="-" spill="-" sass="-"
      if [ -f "$out/$name.ptxas" ]; then
        regs=$(ptxas_field "$out/$name.ptxas" "$k" regs)
        spill=$(ptxas_field "$out/$name.ptxas" "$k" spill)
      fi
      if [ -f "$out/$name.cubin" ] && command -v readelf >/dev/null 2>&1; then
        # the section's size, the column after its address and offset
        hex=$(readelf -SW "$out/$name.cubin" 2>/dev/null | sed -n \
              "s/.* \.text\.$k  *PROGBITS  *[0-9a-f]*  *[0-9a-f]*  *\([0-9a-f]*\) .*/\1/p" || true)
        [ -n "$hex" ] && sass=$((16#$hex / 16))
      fi
      label=$k
      [ "$k" = "$name" ] || label="$name:$k"
      printf '  %-20.20s %7s %8s %5s %7s %6s %7s %8s\n' "$label" "$threads" \
        "$(kib "$smem")" "${regs:--}" "${spill:--}" "$sass" "$ptx" "$cubin"
      ptx="" cubin=""   # the file's sizes once, on its first kernel
    done < <(awk '$1 == "kernel" { k = $2 } $1 == "threads" { t = $2 * $3 * $4 }
                  $1 == "smem" { s = $2 } $1 == "end" && k != "" { print k, t, s; k = "" }' "$meta")
  done
done
[ -f "$out/vector_add.cubin" ] || echo "(no ptxas: PTX only; install the CUDA toolkit for cubins)"
echo "compiled to $out/ (.meta: launch metadata, dsl/metadata.md)"
