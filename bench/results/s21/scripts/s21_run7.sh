#!/usr/bin/env bash
# Session 21 run 7 (kept out of git): 6d17cab (chunk_recur_t in clusters of 2, the split's rule
# by waves): every GPU test, sanitizers on the split and the clustered recurrence, and the
# split's other shapes (no l2norm) at the new rule's L against the old rule's.
set -u
cd "$(dirname "$0")/.."
ln -sfn .device/build build
out=${OUT:-/tmp/out}; mkdir -p "$out"
export LD_LIBRARY_PATH=$PWD/build/lib:$PWD/build/runtime PYTHONPATH=$PWD/python
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$out/device.txt"
date -u | tee -a "$out/device.txt"
TILE_GPU_LOG_DIR=$out/gpu-logs timeout 420 scripts/gpu-test.sh build > "$out/gpu_test.txt" 2>&1
echo "gpu-test rc=$?"; tail -2 "$out/gpu_test.txt"; grep -h "Summary" "$out/gpu-logs/gpu.la_parity.log" | head -1
cs=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
for tool in memcheck racecheck; do
  TILE_LA_KDA_SPLIT=24 timeout 100 $cs --tool $tool python3 tests/gpu/la_one.py kda 3000 2 2 nol2 lb > "$out/san_${tool}_split.txt" 2>&1
  echo "$tool split rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$out/san_${tool}_split.txt" | tail -1)"
  timeout 100 $cs --tool $tool python3 tests/gpu/la_one.py kda 3000 2 2 l2 lb > "$out/san_${tool}_lb.txt" 2>&1
  echo "$tool lb rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$out/san_${tool}_lb.txt" | tail -1)"
done
for shape in "8/8 1x8192:67" "8/8 1x32768:266" "4/4 8192x4:92" "8/8 8192x4:113"; do
  s=${shape%%:*}; old=${shape##*:}
  for r in 1 2; do
    a=$(timeout 60 python3 tests/gpu/la_timeline.py kda $s nol2 2>/dev/null | grep graph)
    b=$(TILE_LA_KDA_SPLIT=$old timeout 60 python3 tests/gpu/la_timeline.py kda $s nol2 2>/dev/null | grep graph)
    echo "$s nol2 round $r: new rule $a | old rule's L=$old $b" | tee -a "$out/nol2.txt"
  done
done
for r in 1 2; do
  echo "lb 8/8 8192x4 default: $(timeout 60 python3 tests/gpu/la_timeline.py kda 8/8 8192x4 lb 2>/dev/null | grep graph)" | tee -a "$out/nol2.txt"
done
tar czf /tmp/r7.tgz -C "$out" . && find "$out" -type f -delete && mv /tmp/r7.tgz "$out/"
