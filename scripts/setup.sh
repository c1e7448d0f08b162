#!/usr/bin/env bash
# setup.sh: installs what tilec needs to build and test on Debian/Ubuntu:
# LLVM 19 (with the NVPTX target), flex, bison, CMocka, cmake, ninja, a C compiler,
# valgrind; clang with libFuzzer (the fuzz test); Debian's python3 with torch, pip and
# setuptools (the Python package's install and its argument checks). The CUDA toolkit (ptxas, cuda.h) is not in Debian's main archive:
# without it tilec still emits PTX and the ptxas tests report "skipped".
# Installs only what is missing, so a second run is quick and needs no root.
set -euo pipefail

packages=(cmake make ninja-build gcc llvm-19-dev flex bison libcmocka-dev valgrind
          clang-14 libclang-rt-14-dev python3 python3-pip python3-setuptools python3-wheel
          python3-torch)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" \
    || missing+=("$p")
done

if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}"
  sudo=""
  if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
fi

if command -v ptxas >/dev/null || [ -x /usr/local/cuda/bin/ptxas ] \
   || { [ -n "${CUDA_HOME:-}" ] && [ -x "$CUDA_HOME/bin/ptxas" ]; }; then
  echo "setup: ptxas found; cubins will be built and checked"
else
  echo "setup: ptxas not found; install the CUDA toolkit (12.3+) for cubin output"
fi
