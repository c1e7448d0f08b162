#!/usr/bin/env bash
# gpu-profile.sh OUT_DIR [KERNEL...]: a kernel-development run on the GPU machine (from a
# build made elsewhere): the smoke test, the GDN parity cases (fp64 reference, no FLA), the
# per-kernel times of la_perf_probe.py, then for each KERNEL (default gdn_kkt gdn_fused) an
# ncu report of GDN 16/64 1x8192 with l2norm: speed-of-light, occupancy, warp states, and
# the SASS stall-sample hot spots (scripts/ncu_hot.py).
set -u
. "$(dirname "$0")/gpu-common.sh"
shift || true
kernels=${*:-gdn_kkt gdn_fused}
[ -n "${NO_TESTS:-}" ] || timeout 60 python3 tests/gpu/la_smoke.py > "$out/smoke.log" 2>&1
echo "smoke rc=$? $(tail -1 "$out/smoke.log")"
[ -n "${NO_TESTS:-}" ] || timeout 120 python3 tests/gpu/la_parity.py --no-fla -k gdn --out "$out/parity_gdn.md" > "$out/parity.log" 2>&1
echo "parity gdn rc=$? $(grep Summary "$out/parity_gdn.md")"
timeout 90 python3 tests/gpu/la_perf_probe.py ${PROBE:-gdn} 2>&1 | tee "$out/probe.log"
ncu_bin=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
for k in $kernels; do
  timeout 120 "$ncu_bin" -k "$k" -c 1 --section SpeedOfLight --section Occupancy \
    --section WarpStateStats --section LaunchStats --section MemoryWorkloadAnalysis \
    python3 tests/gpu/la_one.py gdn 8192 16 64 l2 > "$out/ncu_$k.txt" 2>&1
  echo "ncu $k rc=$?"
  timeout 120 "$ncu_bin" -k "$k" -c 1 --section SourceCounters --page source --print-source sass \
    --csv python3 tests/gpu/la_one.py gdn 8192 16 64 l2 > "$out/sass_$k.csv" 2>/dev/null
  python3 scripts/ncu_hot.py "$out/sass_$k.csv" 30 > "$out/hot_$k.txt" 2>&1
  head -12 "$out/hot_$k.txt"
done
# at most 8 files come back from the device: everything but the summaries in one archive
tar czf /tmp/profile.tgz -C "$out" --exclude='*.csv' . && \
  find "$out" -type f ! -name probe.log -delete && mv /tmp/profile.tgz "$out/"
