#!/usr/bin/env bash
# Session 21 run 2 (kept out of git): chunk_prep's time per wave by grid size alone (is a
# short grid's CTA slower: both CTAs of an SM in the same phase?), and beside spinners that
# hold 64 SMs (now waited for before chunk_prep launches).
set -u
cd "$(dirname "$0")/.."
ln -sfn .device/build build
out=${OUT:-/tmp/out}; mkdir -p "$out"
export LD_LIBRARY_PATH=$PWD/build/lib:$PWD/build/runtime PYTHONPATH=$PWD/python
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$out/device.txt"
date -u | tee -a "$out/device.txt"
for s in 2112 3840 4224 8448 8192x4; do
  timeout 100 python3 .device/s21/corun.py $s none,idle,stream 2>&1 | grep -v Warn | grep -v warn_once | tee -a "$out/corun2.txt"
done
