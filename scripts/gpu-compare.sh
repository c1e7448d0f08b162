#!/usr/bin/env bash
# gpu-compare.sh OUT_DIR: a change's GPU check against a base build, on the GPU machine from
# builds made elsewhere: gpu-test.sh (every gpu-labelled test and example: parity, the tile
# tests, the plain KDA forward), memcheck and racecheck on context-parallel GDN and KDA
# calls, then la_bench --quick --no-fla for the base and this build, alternating (base, new,
# base, new). Expects this build in .device/build and the base's libtilela, libtilert,
# python/ and bench/ under .device/base/ (the folders keep their checkout's layout). Logs
# and result files go into OUT_DIR/all.tgz (at most 8 files come back).
set -u
cd "$(dirname "$0")/.."
B=$PWD/.device/build; OUT=${1:-gpu-out}; L=$OUT/l; mkdir -p $L
export TILE_TEST_SEED=$RANDOM; echo "seed $TILE_TEST_SEED"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u
TILE_GPU_LOG_DIR=$L/gpu timeout 240 scripts/gpu-test.sh $B > $L/gpu_test.txt 2>&1
echo "gpu-test rc=$?"; sed -n '/^test /,$p' $L/gpu_test.txt | head -24
grep -h "PASS\|FAIL" $L/gpu/test_kda_plain.log | tail -13
grep -h "Summary\|passed\|failed" $L/gpu/gpu.la_parity.log | tail -4
export LD_LIBRARY_PATH=$B/lib:$B/runtime PYTHONPATH=$PWD/python TILE_LA_LIBRARY=$B/kernels/libtilela.so
for op in gdn kda; do
  OP=$(echo $op | tr a-z A-Z)
  env TILE_LA_${OP}_CP=2 timeout 100 compute-sanitizer --tool memcheck --error-exitcode 9 \
    python3 tests/gpu/la_one.py $op 1000 2 4 l2 > $L/memcheck_$op.log 2>&1
  echo "memcheck $op cp rc=$? $(grep -h 'ERROR SUMMARY' $L/memcheck_$op.log)"
  env TILE_LA_${OP}_CP=2 timeout 150 compute-sanitizer --tool racecheck --error-exitcode 9 \
    python3 tests/gpu/la_one.py $op 512 2 4 l2 > $L/racecheck_$op.log 2>&1
  echo "racecheck $op cp rc=$? $(grep -h 'RACECHECK SUMMARY' $L/racecheck_$op.log)"
done
bench() { # label lib pythonpath runtime script
  TILE_LA_LIBRARY=$2 PYTHONPATH=$3 LD_LIBRARY_PATH=$B/lib:$4 timeout 150 python3 $5 \
    --quick --no-fla --gates both --results-dir $L/bench_$1 --commit $1 > $L/bench_$1.log 2>&1
  echo "bench $1 rc=$?"; tail -2 $L/bench_$1.log
}
for i in 1 2; do
  bench base$i $PWD/.device/base/build/kernels/libtilela.so $PWD/.device/base/python $PWD/.device/base/build/runtime $PWD/.device/base/bench/la_bench.py
  bench new$i $B/kernels/libtilela.so $PWD/python $B/runtime bench/la_bench.py
done
tar czf $OUT/all.tgz -C $L .
