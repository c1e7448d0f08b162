"""la_perf_probe.py: per-kernel times (torch.profiler, CUPTI) of the GDN/KDA forward at a few
bench.md shapes, ours only. For kernel development; the side-by-side benchmark with FLA is
bench/la_bench.py."""
import sys

import torch
import torch.nn.functional as F
from torch.profiler import ProfilerActivity, profile

sys.path.insert(0, __file__.rsplit("/", 1)[0])
import la_smoke  # noqa: E402


def probe(lib, kda, T, H, HV, D=128, l2=True):
    dev, dt = "cuda", torch.bfloat16
    q = F.normalize(torch.randn(1, T, H, D, device=dev), dim=-1).to(dt)
    k = F.normalize(torch.randn(1, T, H, D, device=dev), dim=-1).to(dt)
    v = torch.randn(1, T, HV, D, device=dev).to(dt)
    g = F.logsigmoid(torch.randn((1, T, HV, D) if kda else (1, T, HV), device=dev))
    beta = torch.rand(1, T, HV, device=dev).sigmoid()
    h0 = torch.randn(1, HV, D, D, device=dev)
    # as bench.md runs it: q/k l2norm in kernel, initial state given, final state requested
    run = lambda: lib.fwd(kda, q, k, v, g, beta, initial_state=h0, output_final_state=True,
                          use_qk_l2norm_in_kernel=l2)
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
        if e.key in ("chunk_prep", "chunk_recur", "gdn_fused", "gdn_kkt"):
            # per call (gdn_fused launches twice per call with context parallelism)
            times[e.key] = e.device_time_total / reps / 1000.0  # us -> ms
    total = sum(times.values())
    flops = 164e3 * T * HV
    print(f"{'kda' if kda else 'gdn'} T={T} H={H} HV={HV}: prep {times.get('chunk_prep', 0):.3f} ms "
          f"recur {times.get('chunk_recur', 0):.3f} ms kkt {times.get('gdn_kkt', 0):.3f} ms fused {times.get('gdn_fused', 0):.3f} ms "
          f"total {total:.3f} ms "
          f"({flops / total / 1e9:.0f} TFLOP/s)", flush=True)


def main():
    lib = la_smoke._Lib()
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
