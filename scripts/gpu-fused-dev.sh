#!/usr/bin/env bash
# gpu-fused-dev.sh OUT_DIR: a development run of the fused GDN kernel on the GPU machine
# (build made elsewhere): the smoke test, the GDN parity cases against the fp64 C reference,
# per-kernel times of the fused and the two-kernel GDN paths, and the SASS of the fused kernel.
set -u
out=${1:-gpu-out}
mkdir -p "$out"
export LD_LIBRARY_PATH=$PWD/build/lib:$PWD/build/runtime
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$out/device.txt"
date -u | tee -a "$out/device.txt"
timeout 90 python3 tests/gpu/la_smoke.py > "$out/smoke.log" 2>&1
echo "smoke rc=$?"; tail -5 "$out/smoke.log"
timeout 150 python3 tests/gpu/la_parity.py --no-fla -k gdn --out "$out/parity_gdn.md" > "$out/parity.log" 2>&1
echo "parity rc=$? $(grep Summary "$out/parity_gdn.md")"; grep -E "FAIL|Error|error" "$out/parity.log" | head -20
timeout 90 python3 tests/gpu/la_perf_probe.py gdn 2>&1 | tee "$out/probe_fused.log"
TILE_LA_GDN_SPLIT=1 timeout 90 python3 tests/gpu/la_perf_probe.py gdn 2>&1 | tee "$out/probe_split.log"
for f in build/kernels/*gdn_fused*bf16_d128*.cubin; do
  [ -f "$f" ] && cuobjdump -sass "$f" > "$out/gdn_fused_bf16_d128.sass" 2>&1
done
ls build/kernels | head -30 > "$out/kernels_ls.txt"
