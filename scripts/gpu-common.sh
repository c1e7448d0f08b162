# gpu-common.sh: sourced by the scripts that run on the GPU machine (from a build made
# elsewhere): the output folder from the first argument (default gpu-out), the libraries of
# the carried build, and the device and date in $out/device.txt.
out=${1:-gpu-out}
mkdir -p "$out"
export LD_LIBRARY_PATH=$PWD/build/lib:$PWD/build/runtime
export PYTHONPATH=$PWD/python TILE_LA_LIBRARY=$PWD/build/kernels/libtilela.so
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$out/device.txt"
date -u | tee -a "$out/device.txt"
