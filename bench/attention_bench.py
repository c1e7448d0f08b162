"""attention_bench.py: examples/attention_fwd.tile against torch's
scaled_dot_product_attention (causal, bf16, head dim 128), in one process.

Checks the relative RMS error against SDPA on several shapes (fresh random inputs,
output poisoned with NaN), then times B=4, H=16, T=8192, D=128 (and more) for both
with CUDA events, and prints TFLOP/s (causal: 2 * 2 * B*H*T*T*D / 2) and the ratio.

With the tile_la package importable (PYTHONPATH=python from the checkout, or pip install
--no-build-isolation ./python): its ctypes layer drives libtilert.

usage: python3 bench/attention_bench.py BUILD_DIR [--iters 20]
"""
import argparse
import datetime
import math
import os
import sys

import torch
import torch.nn.functional as F

from tile_la import _abi
from timing import timed  # beside this file: the script's folder is on sys.path


def run_ours(rt, k, q, kk, v, o):
    b, h, t, d = q.shape
    scale = _abi.arg_f32(math.log2(math.e) / math.sqrt(d))
    rt.launch(k, [_abi.arg_ptr(x.data_ptr()) for x in (q, kk, v, o)]
              + [_abi.arg_i32(b * h), _abi.arg_i32(t), scale],
              torch.cuda.current_stream().cuda_stream)


def inputs(b, h, t, gen):
    return [torch.randn(b, h, t, 128, device="cuda", generator=gen, dtype=torch.bfloat16)
            for _ in range(3)]


def check(rt, k, b, h, t, gen):
    q, kk, v = inputs(b, h, t, gen)
    o = torch.full_like(q, float("nan"))
    run_ours(rt, k, q, kk, v, o)
    torch.cuda.synchronize()
    ref = F.scaled_dot_product_attention(q.double(), kk.double(), v.double(), is_causal=True)
    sdpa = F.scaled_dot_product_attention(q, kk, v, is_causal=True)
    err = ((o.double() - ref).norm() / ref.norm()).item()
    err_sdpa = ((sdpa.double() - ref).norm() / ref.norm()).item()
    nan = torch.isnan(o).sum().item()
    ok = nan == 0 and err < 1e-2
    print(f"check B={b} H={h} T={t}: rel RMS error vs fp64 {err:.2e} (torch SDPA bf16: "
          f"{err_sdpa:.2e}), NaN {nan}: {'PASS' if ok else 'FAIL'}")
    return ok


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("build")
    ap.add_argument("--iters", type=int, default=20)
    args = ap.parse_args()
    lib = os.path.join(args.build, "examples", "host", "libtile_examples_shared.so")
    rt = _abi.Runtime(lib, runtime_library=os.path.join(args.build, "runtime", "libtilert.so"))
    k = rt.kernel("attention_fwd", "attention_fwd")
    gen = torch.Generator(device="cuda")
    gen.manual_seed(int(datetime.datetime.now().timestamp()))
    ok = all([check(rt, k, *s, gen) for s in [(1, 1, 128), (2, 3, 300), (1, 4, 1000),
                                              (4, 16, 8192)]])
    print(f"\n{torch.cuda.get_device_name()}, torch {torch.__version__}, {datetime.date.today()}")
    print(f"{'B':>3} {'H':>3} {'T':>6} {'ours ms':>9} {'sdpa ms':>9} {'ours TF/s':>10} "
          f"{'sdpa TF/s':>10} {'ratio':>6}")
    for b, h, t in [(4, 16, 8192), (8, 16, 4096), (16, 16, 2048)]:
        q, kk, v = inputs(b, h, t, gen)
        o = torch.empty_like(q)
        ours = timed(lambda: run_ours(rt, k, q, kk, v, o), args.iters)
        ref = timed(lambda: F.scaled_dot_product_attention(q, kk, v, is_causal=True), args.iters)
        flop = 4.0 * b * h * t * t * 128 / 2
        print(f"{b:>3} {h:>3} {t:>6} {ours:>9.3f} {ref:>9.3f} {flop / ours / 1e9:>10.1f} "
              f"{flop / ref / 1e9:>10.1f} {ref / ours:>6.2f}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
