"""la_timeline.py: the kernels of one KDA/GDN forward call on the device's clock (CUPTI through
torch.profiler): each kernel's start and end relative to the call's first kernel, to see
which kernels overlap (chunk_map_t runs beside chunk_recur's mode 1). For kernel
development.

  la_timeline.py kda|gdn H/HV SEQS [lb] [nol2]   e.g. la_timeline.py kda 8/8 1x8192 lb
(nol2: without the in-kernel q/k l2norm, so without context parallelism)
The TILE_LA_* variables apply (TILE_LA_KDA_MAPT=0|1, ...: la_smoke maps them onto the handle's
options before each call). Also prints the call's time by CUDA events, eager (10 calls) and as
a CUDA graph of 10 calls.
From the checkout, with PYTHONPATH=python and TILE_LA_LIBRARY=$PWD/build/kernels/libtilela.so
in the environment (or the package installed: pip install --no-build-isolation ./python)."""
import sys

import torch
from torch.profiler import ProfilerActivity, profile

import la_smoke  # beside this file: the script's folder is on sys.path
from la_perf_probe import bench_inputs, seq_lens


def main():
    op, cfg, label = sys.argv[1], sys.argv[2], sys.argv[3]
    lb = "lb" in sys.argv[4:]
    l2 = "nol2" not in sys.argv[4:]
    kda = op == "kda"
    H, HV = (int(x) for x in cfg.split("/"))
    seqs = seq_lens(label)
    q, k, v, g, beta, h0, cu, cu_host = bench_inputs(kda, H, HV, seqs)
    gate = {}
    if kda and lb:
        g, gate = la_smoke.lb_gate_inputs(sum(seqs), HV, 128, "cuda")
    lib = la_smoke._Lib()
    run = lambda: lib.fwd(kda, q, k, v, g, beta, initial_state=h0, output_final_state=True,
                          use_qk_l2norm_in_kernel=l2, cu_seqlens=cu, cu_seqlens_host=cu_host,
                          **gate)
    for _ in range(3):
        run()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(3):
            run()
        torch.cuda.synchronize()
    kern = sorted((e for e in prof.events() if e.device_type.name == "CUDA"),
                  key=lambda e: e.time_range.start)
    t0 = kern[0].time_range.start
    print(f"{op} {cfg} {label}{' lb' if lb else ''}{'' if l2 else ' nol2'}: three calls' kernels (us from the first)")
    for e in kern:
        print(f"  {e.name[:40]:40s} start {e.time_range.start - t0:8.1f} "
              f"end {e.time_range.end - t0:8.1f} ({e.time_range.elapsed_us():.1f})")
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(10):
        run()
    end.record()
    torch.cuda.synchronize()
    print(f"  eager: {start.elapsed_time(end) / 10:.4f} ms per call")
    graph = torch.cuda.CUDAGraph()
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        run()
        with torch.cuda.graph(graph):
            for _ in range(10):
                run()
    torch.cuda.current_stream().wait_stream(s)
    graph.replay()
    torch.cuda.synchronize()
    start.record()
    for _ in range(10):
        graph.replay()
    end.record()
    torch.cuda.synchronize()
    print(f"  graph: {start.elapsed_time(end) / 100:.4f} ms per call")


if __name__ == "__main__":
    main()
