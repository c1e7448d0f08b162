"""Session 21 diagnostic (kept out of git): a 480-CTA chunk_prep grid (KDA 8/8, T = 3840,
lower-bound gate; the split's second grid at 8192x4) beside 64 held SMs of each kind, and
beside the real chunk_recur_t (a KDA 8/8 8192x4 call on a side stream, split off)."""
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
torch.zeros(1, device="cuda")
mod = ctypes.c_void_p()
ck(cu.cuModuleLoad(ctypes.byref(mod), os.path.join(os.path.dirname(__file__), "spin.cubin").encode()), "load")
KINDS = ("idle", "code512", "code2048", "stream")
fn = {}
for name in ["spin_" + k for k in KINDS] + ["waitflag", "wait_ns"]:
    f = ctypes.c_void_p()
    ck(cu.cuModuleGetFunction(ctypes.byref(f), mod, name.encode()), name)
    ck(cu.cuFuncSetAttribute(f, 8, 200 * 1024), "attr")
    fn[name] = f
sink = torch.zeros(4, dtype=torch.int32, device="cuda")
buf = torch.empty(1 << 30, dtype=torch.uint8, device="cuda").fill_(1)

def args_of(*vals):
    keep = list(vals)
    return keep, (ctypes.c_void_p * len(keep))(*[ctypes.cast(ctypes.byref(v), ctypes.c_void_p) for v in keep])

def hold(kind, stream, ns, nctas=64):
    t, s = ctypes.c_uint64(ns), ctypes.c_void_p(sink.data_ptr())
    if kind == "stream":
        keep, arr = args_of(t, ctypes.c_void_p(buf.data_ptr()), ctypes.c_uint64(buf.numel() // 16), s)
        threads = 1024
    else:
        keep, arr = args_of(t, s)
        threads = 256 if kind == "mma8" else 128
    ck(cu.cuLaunchKernel(fn["spin_" + kind], nctas, 1, 1, threads, 1, 1, 200 * 1024, ctypes.c_void_p(stream), arr, None), "launch")
    keep2, wa = args_of(s, ctypes.c_int(nctas))
    ck(cu.cuLaunchKernel(fn["waitflag"], 1, 1, 1, 32, 1, 1, 0,
                         ctypes.c_void_p(torch.cuda.current_stream().cuda_stream), wa, None), "wait")

lib = la_smoke._Lib()
def call_for(label):
    q, k, v, g, beta, h0, cuq, cu_host = bench_inputs(True, 8, 8, seq_lens(label))
    g, gate = la_smoke.lb_gate_inputs(q.shape[1], 8, 128, "cuda")
    return lambda: lib.fwd(True, q, k, v, g, beta, initial_state=h0, output_final_state=True,
                           use_qk_l2norm_in_kernel=True, cu_seqlens=cuq, cu_seqlens_host=cu_host, **gate)
small = call_for(sys.argv[1] if len(sys.argv) > 1 else "3840")
big = call_for("8192x4")
for _ in range(3):
    small(); big()
torch.cuda.synchronize()
side = torch.cuda.Stream()

def timed(setup):
    out = []
    for rep in range(3):
        sink.zero_(); torch.cuda.synchronize()
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            setup()
            small()
            torch.cuda.synchronize()
        ev = sorted((e for e in prof.events() if e.device_type.name == "CUDA"), key=lambda e: e.time_range.start)
        preps = [e for e in ev if "chunk_prep" in e.name]
        recs = [e for e in ev if "chunk_recur" in e.name]
        p = preps[-1].time_range            # the small call's chunk_prep is the last one launched
        extra = ""
        if len(preps) > 1 and recs:
            r = recs[0].time_range
            extra = f" [recur {r.start - p.start:+.0f}..{r.end - p.start:+.0f} us from its start]"
        out.append(f"{p.elapsed_us():7.1f}{extra}")
    return out

print("none     :", *timed(lambda: None), flush=True)
for kind in KINDS:
    print(f"{kind:9s}:", *timed(lambda: hold(kind, side.cuda_stream, 3_000_000)), flush=True)
for us in (400, 420, 440, 460, 480, 500):
    def beside_recur():
        keep, arr = args_of(ctypes.c_uint64(us * 1000))
        ck(cu.cuLaunchKernel(fn["wait_ns"], 1, 1, 1, 32, 1, 1, 0,
                             ctypes.c_void_p(torch.cuda.current_stream().cuda_stream), arr, None), "w")
        with torch.cuda.stream(side):
            big()
    print(f"recur {us}:", *timed(beside_recur), flush=True)
