#!/usr/bin/env bash
# show-kernels.sh BUILD_DIR: compiles every shipped .tile file (examples/,
# kernels/) with the built tilec and prints, per kernel, its launch shape and
# parameters (from the metadata), PTX size, ptxas's register report and the
# kernel's machine code size in SASS instructions (its .text section / 16
# bytes, read with readelf when binutils is there): code that runs once per
# CTA is paid for in instruction fetches (kernels/README.md, sessions 12-13).
set -euo pipefail
build=${1:-build}
tilec="$build/compiler/tilec"
out="$build/show"
mkdir -p "$out"
shopt -s nullglob
files=(examples/*.tile kernels/*.tile)   # kernels/common/ holds imported helpers only
printf '%-28s %-28s %8s %8s %6s  %s\n' "file" "kernel" "ptx(B)" "cubin(B)" "sass" "ptxas"
for f in "${files[@]}"; do
  name=$(basename "$f" .tile)
  "$tilec" "$f" -I kernels --emit=meta -o "$out/$name.meta"
  "$tilec" "$f" -I kernels --emit=ptx -o "$out/$name.ptx"
  cubin_size="-"
  regs="ptxas not installed"
  if "$tilec" "$f" -I kernels --emit=cubin -o "$out/$name.cubin" 2>/dev/null; then
    cubin_size=$(stat -c %s "$out/$name.cubin")
    ptxas=${TILEC_PTXAS:-$(command -v ptxas || echo /usr/local/cuda/bin/ptxas)}
    regs=$("$ptxas" -arch=sm_90a -v "$out/$name.ptx" -o /dev/null 2>&1 \
           | grep -oE 'Used [0-9]+ registers' | paste -sd, - || true)
  fi
  for k in $(awk '$1 == "kernel" {print $2}' "$out/$name.meta"); do
    sass="-"
    if [ "$cubin_size" != "-" ] && command -v readelf >/dev/null 2>&1; then
      # the section's size, the column after its address and offset
      hex=$(readelf -SW "$out/$name.cubin" 2>/dev/null | sed -n \
            "s/.* \.text\.$k  *PROGBITS  *[0-9a-f]*  *[0-9a-f]*  *\([0-9a-f]*\) .*/\1/p" || true)
      [ -n "$hex" ] && sass=$((16#$hex / 16))
    fi
    printf '%-28s %-28s %8s %8s %6s  %s\n' "$f" "$k" "$(stat -c %s "$out/$name.ptx")" \
      "$cubin_size" "$sass" "$regs"
  done
done
echo
echo "launch metadata (what the runtime reads), e.g. $out/vector_add.meta:"
sed 's/^/  /' "$out/vector_add.meta"
