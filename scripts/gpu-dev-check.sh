#!/usr/bin/env bash
# gpu-dev-check.sh OUT_DIR: a kernel-development check on the GPU machine (from a build made
# elsewhere): smoke, every parity case against the fp64 reference (no FLA), the GDN cases once
# more with context parallelism forced on every l2norm case (segments of 2 chunks), memcheck
# and racecheck on a context-parallel GDN call, then the per-kernel times of
# la_perf_probe.py (PROBE=gdn|kda|all|none, default gdn), with context parallelism off too
# (NOCP_PROBE=0 skips that). Logs in one archive (at most 8 files come back from the device).
set -u
. "$(dirname "$0")/gpu-common.sh"
timeout 60 python3 tests/gpu/la_smoke.py > "$out/smoke.log" 2>&1
echo "smoke rc=$? $(tail -1 "$out/smoke.log")"
timeout 240 python3 tests/gpu/la_parity.py --no-fla --out "$out/parity.md" > "$out/parity.log" 2>&1
echo "parity rc=$? $(grep Summary "$out/parity.md")"
grep -E "FAIL" "$out/parity.md" | head -20
TILE_LA_GDN_CP=2 timeout 120 python3 tests/gpu/la_parity.py --no-fla -k gdn \
  --out "$out/parity_gdn_cp2.md" > "$out/parity_cp2.log" 2>&1
echo "parity gdn cp2 rc=$? $(grep Summary "$out/parity_gdn_cp2.md")"
grep -E "FAIL" "$out/parity_gdn_cp2.md" | head -20
TILE_LA_GDN_CP=2 timeout 120 compute-sanitizer --tool memcheck --error-exitcode 9 \
  python3 tests/gpu/la_one.py gdn 1000 2 4 l2 > "$out/memcheck_cp.log" 2>&1
echo "memcheck cp rc=$? $(grep -hE 'ERROR SUMMARY' "$out/memcheck_cp.log")"
TILE_LA_GDN_CP=2 timeout 120 compute-sanitizer --tool racecheck --error-exitcode 9 \
  python3 tests/gpu/la_one.py gdn 512 2 4 l2 > "$out/racecheck_cp.log" 2>&1
echo "racecheck cp rc=$? $(grep -hE 'RACECHECK SUMMARY' "$out/racecheck_cp.log")"
if [ "${PROBE:-gdn}" != none ]; then
  timeout 150 python3 tests/gpu/la_perf_probe.py "${PROBE:-gdn}" 2>&1 | tee "$out/probe.log"
  if [ "${NOCP_PROBE:-1}" != 0 ]; then
    echo "-- context parallelism off --"
    TILE_LA_GDN_CP=0 timeout 90 python3 tests/gpu/la_perf_probe.py gdn 2>&1 | tee "$out/probe_nocp.log"
  fi
fi
tar czf /tmp/devcheck.tgz -C "$out" . && find "$out" -type f ! -name '*.md' -delete && \
  mv /tmp/devcheck.tgz "$out/"
