"""la_perf_probe.py: per-kernel times (torch.profiler, CUPTI) of the GDN/KDA forward at a few
The benchmark's shapes, ours only. For kernel development; the side-by-side benchmark with FLA is
bench/la_bench.py.

  la_perf_probe.py [gdn|kda|all]            the fixed shapes below
  la_perf_probe.py sweep gdn|kda CONFIGS SEQS SEGS
      every config (e.g. '8/32,16/64') x sequence set (docs/benchmarking.md labels: 1x32768, 28672+4096,
      8192x4) x segment length of the context parallelism (TILE_LA_{GDN,KDA}_CP values; 'auto'
      is the library's choice), for tuning the segment rule.
  la_perf_probe.py env gdn|kda NAME=V1,V2 CONFIGS SEQS [ROUNDS]
      an A/B of a TILE_LA_* variable (e.g. TILE_LA_KDA_W=0,1; mapped onto the options), the values
      interleaved over every config x sequence set, ROUNDS times (default 2).
  LA_PROBE_CU_HOST=0: varlen sets without the host copy of cu_seqlens (the library then
  assumes nothing about the lengths).
  LA_PROBE_GATE=lb: KDA with the lower-bound gate in kernel (A_log, dt_bias, -5), as
  la_bench.py's gate config; lbpre: the same gates computed beforehand, given in log space.
From the checkout, with PYTHONPATH=python and TILE_LA_LIBRARY=$PWD/build/kernels/libtilela.so
in the environment (or the package installed: pip install --no-build-isolation ./python)."""
import os
import sys

import torch
import torch.nn.functional as F
from torch.profiler import ProfilerActivity, profile

import la_smoke  # beside this file: the script's folder is on sys.path


def seq_lens(label):
    """the benchmark's labels (la_bench.py's SEQ_SETS: 1x32768 is one sequence, 8192x4 four of
    8192 tokens), or T1+T2+..."""
    if "+" in label or "x" not in label:
        return [int(t) for t in label.split("+")]
    a, b = (int(x) for x in label.split("x"))
    return [b] if a == 1 else [a] * b


def bench_inputs(kda, H, HV, seqs, D=128, cu_host=True):
    """the benchmark's inputs for the sequence lengths `seqs` (bf16 q, k, v with unit rows,
    logsigmoid gates, sigmoid beta, an initial state); cu_seqlens with more than one
    sequence, and its host copy (FLA's cu_seqlens_cpu) when `cu_host`. Returns q, k, v, g,
    beta, h0, cu, cu_host."""
    dev, dt = "cuda", torch.bfloat16
    T = sum(seqs)
    cu = cu_cpu = None
    if len(seqs) > 1:
        cu = torch.tensor([0] + seqs, device=dev, dtype=torch.int32).cumsum(0).to(torch.int32)
        if cu_host:
            cu_cpu = cu.cpu()
    q = F.normalize(torch.randn(1, T, H, D, device=dev), dim=-1).to(dt)
    k = F.normalize(torch.randn(1, T, H, D, device=dev), dim=-1).to(dt)
    v = torch.randn(1, T, HV, D, device=dev).to(dt)
    g = F.logsigmoid(torch.randn((1, T, HV, D) if kda else (1, T, HV), device=dev))
    beta = torch.rand(1, T, HV, device=dev).sigmoid()
    h0 = torch.randn(len(seqs), HV, D, D, device=dev)
    return q, k, v, g, beta, h0, cu, cu_cpu


def probe(lib, kda, T, H, HV, D=128, l2=True, seqs=None, tag=""):
    dev = "cuda"
    seqs = seqs or [T]
    T = sum(seqs)
    q, k, v, g, beta, h0, cu, cu_host = bench_inputs(   # cu_host as FLA's cu_seqlens_cpu
        kda, H, HV, seqs, D, cu_host=os.environ.get("LA_PROBE_CU_HOST", "1") == "1")
    gate = {}
    if kda and os.environ.get("LA_PROBE_GATE") in ("lb", "lbpre"):
        g, gate = la_smoke.lb_gate_inputs(T, HV, D, dev)
        tag += " lb-gate"
        if os.environ.get("LA_PROBE_GATE") == "lbpre":   # the same gates, given in log space
            a = gate["A_log"].exp().view(1, 1, HV, 1)
            g = gate["lower_bound"] * torch.sigmoid(a * (g + gate["dt_bias"].view(1, 1, HV, D)))
            gate = {}
            tag += " (given)"
    # as the benchmark runs it: q/k l2norm in kernel, initial state given, final state requested
    run = lambda: lib.fwd(kda, q, k, v, g, beta, initial_state=h0, output_final_state=True,
                          use_qk_l2norm_in_kernel=l2, cu_seqlens=cu, cu_seqlens_host=cu_host,
                          **gate)
    for _ in range(3):
        run()
    torch.cuda.synchronize()
    reps = 10
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(reps):
            run()
        torch.cuda.synchronize()
    times = {}
    for e in prof.key_averages():
        if e.key in KERNELS:
            # per call (gdn_fused launches twice per call with context parallelism)
            times[e.key] = e.device_time_total / reps / 1000.0  # us -> ms
    total = sum(times.values())
    flops = 164e3 * T * HV
    # KDA's recurrence is one of three kernels (chunk_recur, chunk_recur_t, chunk_recur_w)
    recur = sum(t for name, t in times.items() if name.startswith("chunk_recur"))
    which = "+".join(name[len("chunk_recur"):] or "r" for name in times
                     if name.startswith("chunk_recur"))
    print(f"{'kda' if kda else 'gdn'} T={T} H={H} HV={HV}{tag}: prep {times.get('chunk_prep', 0):.4f} ms "
          f"recur{which and '(' + which + ')'} {recur:.4f} ms kkt {times.get('gdn_kkt', 0):.3f} ms "
          f"fused {times.get('gdn_fused', 0):.3f} ms total {total:.4f} ms "
          f"({flops / total / 1e9:.0f} TFLOP/s)", flush=True)


KERNELS = ("chunk_prep", "chunk_recur", "chunk_recur_t", "chunk_recur_w", "gdn_fused", "gdn_kkt")


def sweep(lib, op, configs, labels, segs):
    kda = op == "kda"
    var = "TILE_LA_KDA_CP" if kda else "TILE_LA_GDN_CP"
    for cfg in configs.split(","):
        H, HV = (int(x) for x in cfg.split("/"))
        for label in labels.split(","):
            for seg in segs.split(","):
                os.environ.pop(var, None)
                if seg != "auto":
                    os.environ[var] = seg
                probe(lib, kda, 0, H, HV, seqs=seq_lens(label), tag=f" {label} seg={seg}")
    os.environ.pop(var, None)


def env_ab(lib, op, assign, configs, labels, rounds="2"):
    """A/B of a library environment variable: NAME=V1,V2 over every config x sequence set,
    the values interleaved, `rounds` times."""
    name, values = assign.split("=", 1)
    saved = os.environ.get(name)
    for r in range(int(rounds)):
        for cfg in configs.split(","):
            H, HV = (int(x) for x in cfg.split("/"))
            for label in labels.split(","):
                for value in values.split(","):
                    os.environ[name] = value
                    probe(lib, op == "kda", 0, H, HV, seqs=seq_lens(label),
                          tag=f" {label} {name}={value} round {r + 1}")
    if saved is None:
        os.environ.pop(name, None)
    else:
        os.environ[name] = saved


def main():
    lib = la_smoke._Lib()
    if len(sys.argv) > 1 and sys.argv[1] == "sweep":
        sweep(lib, *sys.argv[2:6])
        return
    if len(sys.argv) > 1 and sys.argv[1] == "env":
        env_ab(lib, *sys.argv[2:7])
        return
    which = sys.argv[1] if len(sys.argv) > 1 else "all"   # gdn, kda or all
    for kda, H, HV in ((False, 2, 8), (False, 4, 16), (False, 8, 32), (False, 16, 64),
                       (False, 16, 32), (True, 8, 8), (True, 16, 16),
                       (True, 32, 32), (True, 64, 64)):
        if which != "all" and which != ("kda" if kda else "gdn"):
            continue
        for T in (32768, 8192):
            probe(lib, kda, T, H, HV)


if __name__ == "__main__":
    main()
