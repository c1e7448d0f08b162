#!/usr/bin/env bash
# Session 23 run 5 (kept out of git): the final kernels (5177f20) beside FLA, an op (kda|gdn) and configs given as
# arguments, every bench.md sequence set of >= 8192 tokens (checked cells), one process per
# config; then the lower-bound 8/8 8192x4 cell again (repeat).
set -u
cd "$(dirname "$0")/.."
ln -sfn .device/build build
out=${OUT:-/tmp/out}; mkdir -p "$out"
export LD_LIBRARY_PATH=$PWD/build/lib:$PWD/build/runtime
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$out/device.txt"
date -u | tee -a "$out/device.txt"
OP=$1; shift
for c in "$@"; do
  n=$(echo "$c" | tr ' /' '__')
  PYTHONPATH=$PWD/python:$PWD/third_party_fla FLA_DISABLE_BACKEND_DISPATCH=1 timeout 240 python3 bench/la_bench.py --only $OP --configs "$c" \
    --seqs 1x8192,8192x4,1024+7168,1x32768,28672+4096 --results-dir "$out/fla_$n" > "$out/fla_$n.log" 2>&1
  echo "rc=$? $(grep -E '^\| [GK]DA [^|]*\| [0-9.]+ /' "$out/fla_$n.log" | tail -1)"
done
PYTHONPATH=$PWD/python:$PWD/third_party_fla FLA_DISABLE_BACKEND_DISPATCH=1 timeout 120 python3 bench/la_bench.py --only kda --configs 'KDA 8/8 gate-in-kernel lb-5' \
    --seqs 8192x4 --results-dir "$out/fla_lb_again" > "$out/fla_lb_again.log" 2>&1
echo "lb again rc=$? $(grep -E '^\| KDA 8/8' "$out/fla_lb_again.log" | tail -1)"
tar czf /tmp/r4.tgz -C "$out" . && find "$out" -type f -delete && mv /tmp/r4.tgz "$out/"
