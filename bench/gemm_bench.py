"""gemm_bench.py: examples/gemm.tile against torch.matmul, in one process, same GPU.

Checks correctness on several shapes (also shapes that are not tile multiples) with
fresh random inputs and a NaN-poisoned output, then times C = A @ B^T (bf16 in, bf16
out, f32 accumulation) at the given sizes for both, each timed with CUDA events over
many launches after a warm-up, and prints a table with TFLOP/s and the ratio.

With the tile_la package importable (PYTHONPATH=python from the checkout, or pip install
--no-build-isolation ./python): its ctypes layer drives libtilert.

usage: python3 bench/gemm_bench.py BUILD_DIR [--sizes 8192,4096] [--iters 50]
"""
import argparse
import datetime
import os
import sys

import torch

from tile_la import _abi
from timing import timed  # beside this file: the script's folder is on sys.path


def run_ours(rt, k, a, b, c):
    m, kk = a.shape
    n = b.shape[0]
    rt.launch(k, [_abi.arg_ptr(x.data_ptr()) for x in (a, b, c)]
              + [_abi.arg_i32(m), _abi.arg_i32(n), _abi.arg_i32(kk)],
              torch.cuda.current_stream().cuda_stream)


def check(rt, k, m, n, kk, gen):
    a = torch.randn(m, kk, device="cuda", generator=gen).to(torch.bfloat16)
    b = torch.randn(n, kk, device="cuda", generator=gen).to(torch.bfloat16)
    c = torch.full((m, n), float("nan"), device="cuda", dtype=torch.bfloat16)
    run_ours(rt, k, a, b, c)
    torch.cuda.synchronize()
    ref = a.double() @ b.double().T
    err = (c.double() - ref).norm() / ref.norm()
    nan = torch.isnan(c).sum().item()
    ok = nan == 0 and err.item() < 1e-2
    print(f"check M={m} N={n} K={kk}: rel RMS error {err.item():.2e}, NaN {nan}: "
          f"{'PASS' if ok else 'FAIL'}")
    return ok


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("build")
    ap.add_argument("--sizes", default="8192,4096,2048")
    ap.add_argument("--iters", type=int, default=50)
    args = ap.parse_args()
    lib = os.path.join(args.build, "examples", "host", "libtile_examples_shared.so")
    rt = _abi.Runtime(lib, runtime_library=os.path.join(args.build, "runtime", "libtilert.so"))
    k = rt.kernel("gemm", "gemm")
    k_easy = rt.kernel("gemm_pipelined", "gemm_pipelined")
    gen = torch.Generator(device="cuda")
    gen.manual_seed(int(datetime.datetime.now().timestamp()))
    shapes = [(128, 128, 64), (1000, 520, 1000), (8192, 8192, 8192), (3000, 2056, 1032)]
    ok = all([check(rt, k, *s, gen) for s in shapes])
    print("easy path (gemm_pipelined.tile):")
    ok = all([check(rt, k_easy, *s, gen) for s in shapes]) and ok
    dev = torch.cuda.get_device_name()
    print(f"\n{dev}, torch {torch.__version__}, {datetime.date.today()}")
    print(f"{'M=N=K':>7} {'ours ms':>9} {'torch ms':>9} {'ours TF/s':>10} {'torch TF/s':>11} "
          f"{'ratio':>6} {'easy TF/s':>10} {'easy ratio':>11}")
    for s in [int(x) for x in args.sizes.split(",")]:
        a = torch.randn(s, s, device="cuda").to(torch.bfloat16)
        b = torch.randn(s, s, device="cuda").to(torch.bfloat16)
        c = torch.empty(s, s, device="cuda", dtype=torch.bfloat16)
        ours = timed(lambda: run_ours(rt, k, a, b, c), args.iters)
        ref = timed(lambda: torch.matmul(a, b.T), args.iters)
        easy = timed(lambda: run_ours(rt, k_easy, a, b, c), args.iters)
        flop = 2.0 * s * s * s
        print(f"{s:>7} {ours:>9.3f} {ref:>9.3f} {flop / ours / 1e9:>10.1f} "
              f"{flop / ref / 1e9:>11.1f} {ref / ours:>6.2f} {flop / easy / 1e9:>10.1f} "
              f"{ref / easy:>11.2f}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
