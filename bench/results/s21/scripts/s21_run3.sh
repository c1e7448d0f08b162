#!/usr/bin/env bash
# Session 21 run 3 (kept out of git): the split's second chunk_prep grid (480 CTAs) beside
# 64 SMs of: idle, big code, mma, DRAM streaming, and the real chunk_recur_t.
set -u
cd "$(dirname "$0")/.."
ln -sfn .device/build build
out=${OUT:-/tmp/out}; mkdir -p "$out"
export LD_LIBRARY_PATH=$PWD/build/lib:$PWD/build/runtime PYTHONPATH=$PWD/python
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$out/device.txt"
timeout 200 python3 .device/s21/corun3.py 3840 2>&1 | grep -v -i warn | tee "$out/corun3.txt"
