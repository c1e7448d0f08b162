#!/usr/bin/env bash
# Session 21 run 5 (kept out of git): chunk_prep (480 CTAs) beside 64 SMs of foreign code,
# launched plain or in clusters of 2 and 4 (TPC-sharing test).
set -u
cd "$(dirname "$0")/.."
ln -sfn .device/build build
out=${OUT:-/tmp/out}; mkdir -p "$out"
export LD_LIBRARY_PATH=$PWD/build/lib:$PWD/build/runtime PYTHONPATH=$PWD/python
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$out/device.txt"
timeout 200 python3 .device/s21/corun5.py 3840 2>&1 | grep -v -i warn | tee "$out/corun5.txt"
