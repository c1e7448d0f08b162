#!/usr/bin/env python3
"""la_bwd_kernels.py: where a training step's time goes, kernel by kernel. One forward and
backward of ours (or FLA's, --fla) on la_bench.py's inputs, run eagerly under torch.profiler:
each kernel's GPU time per call (the mean over --calls calls after --warmup), largest first.

Eager and profiled, so the times add up to more than la_bwd_bench.py's graph-timed call, and
kernels launched early beside others (kda_bwd_wy beside kda_bwd_recur) count from their
start to their end. It answers "which kernel", la_bwd_bench.py "how fast".

usage: python3 bench/la_bwd_kernels.py [--config 'GDN 16/32'] [--seqs 1x8192 | NxT]
                                       [--gates fast|slow] [--fla] [--disable-recompute]
"""
import argparse
import os

import torch
from torch.profiler import ProfilerActivity, profile

import la_bench as lb       # beside this file: configs, inputs, the calls
import la_bwd_bench as bb   # FLA's ops (its GDN backward's check lifted), the gradient leaves


def step(impl, cfg, x, fla, leaves, do, dht, saved):
    o, ht = bb.call(impl, cfg, x, fla, saved)
    return torch.autograd.grad((o, ht), leaves, (do, dht))


def kernel_times(impl, cfg, x, fla, saved, warmup, calls):
    leaves = bb.leaves_of(cfg, x)
    gen = torch.Generator(device="cuda").manual_seed(1)
    do = torch.randn(x.v.shape, device="cuda", generator=gen).to(x.v.dtype)
    dht = torch.randn(x.h0.shape, device="cuda", generator=gen)
    for _ in range(warmup):
        step(impl, cfg, x, fla, leaves, do, dht, saved)
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(calls):
            step(impl, cfg, x, fla, leaves, do, dht, saved)
        torch.cuda.synchronize()
    rows = []
    for e in prof.key_averages():
        total = getattr(e, "device_time_total", None)
        if total is None:
            total = e.cuda_time_total
        if total > 0 and e.count >= calls:
            rows.append((total / calls, e.count // calls, e.key))
    return sorted(rows, reverse=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--config", default="GDN 16/32")
    ap.add_argument("--seqs", default="1x8192")
    ap.add_argument("--gates", choices=["fast", "slow"], default="slow")
    ap.add_argument("--fla", action="store_true", help="FLA's kernels instead of ours")
    ap.add_argument("--disable-recompute", action="store_true",
                    help="the backward reads the forward's chunk_prep (KDA) or gdn_kkt "
                         "(GDN) outputs")
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--calls", type=int, default=5)
    ap.add_argument("--top", type=int, default=25)
    args = ap.parse_args()
    os.environ.setdefault("FLA_DISABLE_BACKEND_DISPATCH", "1")   # (as la_bwd_bench.py)
    configs = {c.label: c for c in lb.GDN_CONFIGS + lb.KDA_CONFIGS + lb.EXTRA_CONFIGS}
    if args.config not in configs:
        ap.error(f"--config: one of {', '.join(configs)}")
    cfg = configs[args.config]
    lens = dict(lb.SEQ_SETS).get(args.seqs)
    if lens is None:
        n, _, t = args.seqs.partition("x")
        if not (n.isdigit() and t.isdigit() and int(n) > 0 and int(t) > 0):
            ap.error("--seqs: one of la_bench's sets or NxT (N sequences of T tokens)")
        lens = [int(t)] * int(n)
    if args.fla:
        impl, lifted = bb.fla_ops(cfg.op == "gdn")
        if lifted:
            print("FLA's GDN backward check lifted (timing only)")
    else:
        import tile_la as impl
    x = lb.make_inputs(cfg, lens, "cuda", args.gates)
    rows = kernel_times(impl, cfg, x, args.fla, args.disable_recompute, args.warmup, args.calls)
    print(f"{'FLA' if args.fla else 'ours'}: {args.config} {args.seqs} {args.gates} gates, "
          f"{torch.cuda.get_device_name()}; GPU us per call (launches per call)")
    for us, n, name in rows[:args.top]:
        print(f"  {us:9.1f}  x{n}  {name[:70]}")


if __name__ == "__main__":
    main()
