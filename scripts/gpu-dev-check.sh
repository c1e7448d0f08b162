#!/usr/bin/env bash
# gpu-dev-check.sh OUT_DIR: a kernel-development check on the GPU machine (from a build made
# elsewhere): smoke, every parity case against the fp64 reference (no FLA), the GDN and the KDA
# cases once more with context parallelism forced on every l2norm case (segments of 2
# chunks), memcheck and racecheck on context-parallel GDN and KDA calls, then the per-kernel
# times of la_perf_probe.py (PROBE=gdn|kda|all|none, default all), with context parallelism
# off too (NOCP_PROBE=0 skips that). Logs in one archive (at most 8 files come back).
set -u
. "$(dirname "$0")/gpu-common.sh"
timeout 60 python3 tests/gpu/la_smoke.py > "$out/smoke.log" 2>&1
echo "smoke rc=$? $(tail -1 "$out/smoke.log")"
timeout 240 python3 tests/gpu/la_parity.py --no-fla --out "$out/parity.md" > "$out/parity.log" 2>&1
echo "parity rc=$? $(grep Summary "$out/parity.md")"
grep -E "FAIL" "$out/parity.md" | head -20
for op in gdn kda; do
  OP=$(echo $op | tr a-z A-Z)
  env TILE_LA_${OP}_CP=2 timeout 150 python3 tests/gpu/la_parity.py --no-fla -k $op \
    --out "$out/parity_${op}_cp2.md" > "$out/parity_${op}_cp2.log" 2>&1
  echo "parity $op cp2 rc=$? $(grep Summary "$out/parity_${op}_cp2.md")"
  grep -E "FAIL" "$out/parity_${op}_cp2.md" | head -20
  env TILE_LA_${OP}_CP=2 timeout 120 compute-sanitizer --tool memcheck --error-exitcode 9 \
    python3 tests/gpu/la_one.py $op 1000 2 4 l2 > "$out/memcheck_${op}_cp.log" 2>&1
  echo "memcheck $op cp rc=$? $(grep -hE 'ERROR SUMMARY' "$out/memcheck_${op}_cp.log")"
  env TILE_LA_${OP}_CP=2 timeout 120 compute-sanitizer --tool racecheck --error-exitcode 9 \
    python3 tests/gpu/la_one.py $op 512 2 4 l2 > "$out/racecheck_${op}_cp.log" 2>&1
  echo "racecheck $op cp rc=$? $(grep -hE 'RACECHECK SUMMARY' "$out/racecheck_${op}_cp.log")"
done
if [ "${PROBE:-all}" != none ]; then
  timeout 200 python3 tests/gpu/la_perf_probe.py "${PROBE:-all}" 2>&1 | tee "$out/probe.log"
  if [ "${NOCP_PROBE:-1}" != 0 ]; then
    echo "-- context parallelism off --"
    TILE_LA_GDN_CP=0 TILE_LA_KDA_CP=0 timeout 200 python3 tests/gpu/la_perf_probe.py \
      "${PROBE:-all}" 2>&1 | tee "$out/probe_nocp.log"
  fi
fi
tar czf /tmp/devcheck.tgz -C "$out" . && find "$out" -type f ! -name '*.md' -delete && \
  mv /tmp/devcheck.tgz "$out/"
