"""Session 21 diagnostic (kept out of git): chunk_prep's time beside kernels that hold 64 SMs.
KDA 8/8 8192x4, lower-bound gate in kernel, the split off (chunk_prep over all 4096 CTAs).
Modes: none (all SMs), idle (64 SMs held by a polling warp), stream (64 SMs streaming DRAM
reads), mma (64 SMs of mma.sync), stream256 (fewer threads reading)."""
import ctypes, os, sys
os.environ["TILE_LA_KDA_SPLIT"] = "0"
import torch
from torch.profiler import ProfilerActivity, profile
ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "../.."))
sys.path.insert(0, os.path.join(ROOT, "tests/gpu"))
import la_smoke
from la_perf_probe import bench_inputs, seq_lens

cu = ctypes.CDLL("libcuda.so.1")
def ck(r, what):
    if r: raise RuntimeError(f"{what}: CUresult {r}")
mod = ctypes.c_void_p()
torch.zeros(1, device="cuda")
ck(cu.cuModuleLoad(ctypes.byref(mod), os.path.join(os.path.dirname(__file__), "spin.cubin").encode()), "load")
fn = {}
for name in ("spin_idle", "spin_stream", "spin_mma", "waitflag"):
    f = ctypes.c_void_p()
    ck(cu.cuModuleGetFunction(ctypes.byref(f), mod, name.encode()), name)
    ck(cu.cuFuncSetAttribute(f, 8, 200 * 1024), "attr")
    fn[name] = f
sink = torch.zeros(4, dtype=torch.int32, device="cuda")
buf = torch.empty(1 << 30, dtype=torch.uint8, device="cuda").fill_(1)

def launch(mode, stream, ns, nctas=64):
    if mode == "none":
        return
    t = ctypes.c_uint64(ns); s = ctypes.c_void_p(sink.data_ptr())
    if mode.startswith("stream"):
        b = ctypes.c_void_p(buf.data_ptr()); n = ctypes.c_uint64(buf.numel() // 16)
        args = [ctypes.byref(t), ctypes.byref(b), ctypes.byref(n), ctypes.byref(s)]
        f, threads = fn["spin_stream"], (256 if mode == "stream256" else 1024)
    else:
        args = [ctypes.byref(t), ctypes.byref(s)]
        f, threads = fn["spin_" + mode], 128
    arr = (ctypes.c_void_p * len(args))(*[ctypes.cast(a, ctypes.c_void_p) for a in args])
    ck(cu.cuLaunchKernel(f, nctas, 1, 1, threads, 1, 1, 200 * 1024, ctypes.c_void_p(stream), arr, None), "launch")
    # the main stream holds until every spinner CTA runs (else chunk_prep may take the SMs first)
    s2, n = ctypes.c_void_p(sink.data_ptr()), ctypes.c_int(nctas)
    wa = (ctypes.c_void_p * 2)(ctypes.cast(ctypes.byref(s2), ctypes.c_void_p), ctypes.cast(ctypes.byref(n), ctypes.c_void_p))
    ck(cu.cuLaunchKernel(fn["waitflag"], 1, 1, 1, 32, 1, 1, 0, ctypes.c_void_p(torch.cuda.current_stream().cuda_stream), wa, None), "wait")

H, HV = 8, 8
seqs = seq_lens(sys.argv[1] if len(sys.argv) > 1 else "8192x4")
q, k, v, g, beta, h0, cuq, cu_host = bench_inputs(True, H, HV, seqs)
g, gate = la_smoke.lb_gate_inputs(sum(seqs), HV, 128, "cuda")
lib = la_smoke._Lib()
run = lambda: lib.fwd(True, q, k, v, g, beta, initial_state=h0, output_final_state=True,
                      use_qk_l2norm_in_kernel=True, cu_seqlens=cuq, cu_seqlens_host=cu_host, **gate)
side = torch.cuda.Stream()
for _ in range(3): run()
torch.cuda.synchronize()
modes = sys.argv[2].split(",") if len(sys.argv) > 2 else ["none", "idle", "stream", "stream256", "mma", "none"]
for mode in modes:
    for nctas in ([64] if mode == "none" else [64]):
        durs = []
        for rep in range(3):
            torch.cuda.synchronize()
            with profile(activities=[ProfilerActivity.CUDA]) as prof:
                sink.zero_()
                torch.cuda.synchronize()
                launch(mode, side.cuda_stream, 2_500_000, nctas)
                run()
                torch.cuda.synchronize()
            ev = [e for e in prof.events() if e.device_type.name == "CUDA"]
            prep = [e for e in ev if "chunk_prep" in e.name]
            spin = [e for e in ev if "spin_" in e.name]
            p = prep[0].time_range
            cover = spin[0].time_range.end >= p.end if spin else True
            durs.append((p.elapsed_us(), cover))
            if rep == 0 and mode == modes[0]:
                rec = [e for e in ev if "chunk_recur" in e.name]
                if rec: print(f"  (recurrence {rec[0].time_range.elapsed_us():.1f} us)")
        print(f"{sys.argv[1]:10s} {mode:10s} held SMs {nctas if mode != 'none' else 0:3d}: chunk_prep us "
              + " ".join(f"{d:7.1f}{'' if c else '!'}" for d, c in durs), flush=True)
