"""Session 21 diagnostic (kept out of git): the 480-CTA chunk_prep grid beside 64 SMs running a
32 KB code loop, launched plain or as clusters of 2 / 4 (CTAs of a cluster share a GPC; if they
also share a TPC, chunk_prep's SMs then have no foreign-code neighbour in their TPC)."""
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
fn = {}
for name in ("spin_idle", "spin_code2048", "spin_code512", "waitflag"):
    f = ctypes.c_void_p()
    ck(cu.cuModuleGetFunction(ctypes.byref(f), mod, name.encode()), name)
    ck(cu.cuFuncSetAttribute(f, 8, 200 * 1024), "attr")
    fn[name] = f

class Val(ctypes.Union):
    _fields_ = [("pad", ctypes.c_char * 64), ("dim", ctypes.c_uint * 3), ("p", ctypes.c_void_p)]
class Attr(ctypes.Structure):
    _fields_ = [("id", ctypes.c_int), ("pad", ctypes.c_char * 4), ("value", Val)]
class Cfg(ctypes.Structure):
    _fields_ = [("gx", ctypes.c_uint), ("gy", ctypes.c_uint), ("gz", ctypes.c_uint),
                ("bx", ctypes.c_uint), ("by", ctypes.c_uint), ("bz", ctypes.c_uint),
                ("smem", ctypes.c_uint), ("stream", ctypes.c_void_p),
                ("attrs", ctypes.POINTER(Attr)), ("nattrs", ctypes.c_uint)]
sink = torch.zeros(4, dtype=torch.int32, device="cuda")

def hold(kind, cluster, stream, ns=3_000_000, nctas=64):
    t, s = ctypes.c_uint64(ns), ctypes.c_void_p(sink.data_ptr())
    arr = (ctypes.c_void_p * 2)(ctypes.cast(ctypes.byref(t), ctypes.c_void_p), ctypes.cast(ctypes.byref(s), ctypes.c_void_p))
    at = Attr(); at.id = 4; at.value.dim[0] = cluster; at.value.dim[1] = 1; at.value.dim[2] = 1
    cfg = Cfg(nctas, 1, 1, 128, 1, 1, 200 * 1024, ctypes.c_void_p(stream), ctypes.pointer(at), 1 if cluster > 1 else 0)
    ck(cu.cuLaunchKernelEx(ctypes.byref(cfg), fn["spin_" + kind], arr, None), "launchEx")
    n = ctypes.c_int(nctas)
    wa = (ctypes.c_void_p * 2)(ctypes.cast(ctypes.byref(s), ctypes.c_void_p), ctypes.cast(ctypes.byref(n), ctypes.c_void_p))
    ck(cu.cuLaunchKernel(fn["waitflag"], 1, 1, 1, 32, 1, 1, 0,
                         ctypes.c_void_p(torch.cuda.current_stream().cuda_stream), wa, None), "wait")

lib = la_smoke._Lib()
q, k, v, g, beta, h0, cuq, cu_host = bench_inputs(True, 8, 8, seq_lens(sys.argv[1] if len(sys.argv) > 1 else "3840"))
g, gate = la_smoke.lb_gate_inputs(q.shape[1], 8, 128, "cuda")
small = lambda: lib.fwd(True, q, k, v, g, beta, initial_state=h0, output_final_state=True,
                        use_qk_l2norm_in_kernel=True, cu_seqlens=cuq, cu_seqlens_host=cu_host, **gate)
for _ in range(3): small()
torch.cuda.synchronize()
side = torch.cuda.Stream()
for kind in ("idle", "code512", "code2048"):
    for cluster in (1, 2, 4):
        res = []
        for rep in range(4):
            sink.zero_(); torch.cuda.synchronize()
            with profile(activities=[ProfilerActivity.CUDA]) as prof:
                hold(kind, cluster, side.cuda_stream)
                small()
                torch.cuda.synchronize()
            ev = [e for e in prof.events() if e.device_type.name == "CUDA"]
            p = [e for e in ev if "chunk_prep" in e.name][0].time_range
            sp = [e for e in ev if "spin_" in e.name]
            held = bool(sp) and sp[0].time_range.start <= p.start and sp[0].time_range.end >= p.end
            res.append(f"{p.elapsed_us():6.1f}{'' if held else '!'}")
        print(f"{kind:9s} cluster {cluster}: chunk_prep us", *res, flush=True)
