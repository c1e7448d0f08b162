"""la_smoke.py: a quick GPU check of the GDN/KDA forward against a naive torch fp64 recurrence.

Usage (GPU machine, from the repository root, after a build here):
    PYTHONPATH=python TILE_LA_LIBRARY=$PWD/build/kernels/libtilela.so python3 tests/gpu/la_smoke.py
(or with the package installed: pip install --no-build-isolation ./python). It calls the C
API (libtilela) directly through the package's ctypes layer (tile_la._abi: the struct, the
declared prototypes, the library lookup; TILE_LA_LIBRARY picks another build for
comparisons), not through the binding's FLA-style wrappers.
Prints the relative RMS error (FLA's metric) of o and the final state per case and exits 1 if
any case is above 0.005. The full parity suite is tests/gpu/la_parity.py; this one is small
and fast, for kernel development.
"""
import ctypes
import os
import sys

import torch
import torch.nn.functional as F

from tile_la import _abi
from tile_la._abi import TileLaFwdArgs as Args


class _Lib:
    def __init__(self):
        self.lib = _abi.load().la
        self.la = ctypes.c_void_p()
        st = self.lib.tile_la_create(torch.cuda.current_device(), ctypes.byref(self.la))
        if st:
            raise RuntimeError(f"tile_la_create: status {st}")

    def fwd(self, kda, q, k, v, g, beta, initial_state=None, output_final_state=False,
            use_qk_l2norm_in_kernel=False, cu_seqlens=None, keep_workspace=False,
            A_log=None, dt_bias=None, lower_bound=None, cu_seqlens_host=None):
        """lower_bound (with A_log, dt_bias): KDA's gate in kernel, lower-bound form."""
        B, T, H, D = q.shape
        HV = v.shape[2]
        N = B if cu_seqlens is None else cu_seqlens.numel() - 1
        o = torch.empty_like(v)
        ht = torch.empty(N, HV, D, D, device=q.device) if output_final_state else None
        a = Args(batch=B, seq_len=T, num_heads=H, num_v_heads=HV, head_dim=D,
                 dtype=1 if q.dtype == torch.bfloat16 else 2,
                 q=q.data_ptr(), k=k.data_ptr(), v=v.data_ptr(), g=g.data_ptr(),
                 beta=beta.data_ptr(), o=o.data_ptr(), scale=0.0,
                 initial_state=initial_state.data_ptr() if initial_state is not None else None,
                 final_state=ht.data_ptr() if ht is not None else None,
                 cu_seqlens=cu_seqlens.data_ptr() if cu_seqlens is not None else None,
                 num_seqs=N, use_qk_l2norm_in_kernel=int(use_qk_l2norm_in_kernel))
        if cu_seqlens_host is not None:   # a CPU int32 tensor (kept alive by the caller)
            a.cu_seqlens_host = cu_seqlens_host.data_ptr()
        if lower_bound is not None:
            a.use_gate_in_kernel, a.use_lower_bound, a.lower_bound = 1, 1, lower_bound
            a.A_log, a.dt_bias = A_log.data_ptr(), dt_bias.data_ptr()
        _abi.apply_environ_options(self.lib, self.la)   # the TILE_LA_* variables set now
        size = ctypes.c_size_t()
        query = self.lib.tile_la_kda_fwd_workspace if kda else self.lib.tile_la_gdn_fwd_workspace
        assert query(self.la, ctypes.byref(a), ctypes.byref(size)) == 0
        ws = torch.empty(max(size.value, 1), dtype=torch.uint8, device=q.device)
        a.workspace, a.workspace_size = ws.data_ptr(), size.value
        a.stream = torch.cuda.current_stream().cuda_stream
        run = self.lib.tile_la_kda_fwd if kda else self.lib.tile_la_gdn_fwd
        st = run(self.la, ctypes.byref(a))
        if st:
            raise RuntimeError(self.lib.tile_la_error(self.la).decode())
        return (o, ht, ws) if keep_workspace else (o, ht)


def lb_gate_inputs(T, HV, D, dev):
    """KDA's lower-bound gate in kernel as la_bench.py's gate config draws it: (raw gate
    [1, T, HV, D], fwd keyword arguments A_log = log U(1, 16), dt_bias, lower_bound -5)."""
    g = torch.randn(1, T, HV, D, device=dev)
    return g, dict(A_log=torch.empty(HV, device=dev).uniform_(1, 16).log(),
                   dt_bias=torch.randn(HV * D, device=dev), lower_bound=-5.0)


LIB = None


def naive(q, k, v, g, beta, scale, h0, gva, cu=None):
    """The recurrence of spec section 1 in fp64: q, k [T, H, D], v [T, HV, D], g [T, HV, D]
    (per channel; a GDN gate is broadcast), beta [T, HV], h0 [N, HV, D, D]."""
    q, k, v, g, beta = (x.double() for x in (q, k, v, g, beta))
    q = q.repeat_interleave(gva, dim=1) * scale
    k = k.repeat_interleave(gva, dim=1)
    T = q.shape[0]
    bounds = cu.tolist() if cu is not None else [0, T]
    o = torch.zeros_like(v)
    hts = []
    for n in range(len(bounds) - 1):
        S = h0[n].double().clone()
        for t in range(bounds[n], bounds[n + 1]):
            S = S * g[t].exp()[..., None]
            vp = beta[t][:, None] * (v[t] - torch.einsum("hkv,hk->hv", S, k[t]))
            S = S + k[t][..., None] * vp[:, None, :]
            o[t] = torch.einsum("hkv,hk->hv", S, q[t])
        hts.append(S)
    return o, torch.stack(hts)


def rel_rms(ref, got):
    ref = ref.double()
    got = got.double()
    if (ref - got).abs().max() <= 1e-6:
        return 0.0
    return ((ref - got).pow(2).mean().sqrt() / (ref.pow(2).mean().sqrt() + 1e-8)).item()


def case(name, kda, T, H, HV, D, dtype, lens=None, l2=False, gate_scale=1.0, seed=0):
    torch.manual_seed(seed)
    dev = "cuda"
    q = torch.randn(1, T, H, D, device=dev).to(dtype)
    k = torch.randn(1, T, H, D, device=dev).to(dtype)
    if not l2:
        q = F.normalize(q.float(), dim=-1).to(dtype)
        k = F.normalize(k.float(), dim=-1).to(dtype)
    v = torch.randn(1, T, HV, D, device=dev).to(dtype)
    gshape = (1, T, HV, D) if kda else (1, T, HV)
    g = F.logsigmoid(torch.randn(gshape, device=dev)) * gate_scale
    beta = torch.rand(1, T, HV, device=dev).sigmoid()
    cu = None
    N = 1
    if lens is not None:
        cu = torch.tensor([0] + list(torch.tensor(lens).cumsum(0)), device=dev, dtype=torch.int32)
        N = len(lens)
    h0 = torch.randn(N, HV, D, D, device=dev)
    global LIB
    LIB = LIB or _Lib()
    o, ht = LIB.fwd(kda, q, k, v, g, beta, initial_state=h0, output_final_state=True,
                    use_qk_l2norm_in_kernel=l2, cu_seqlens=cu)
    torch.cuda.synchronize()
    qr, kr = q[0], k[0]
    if l2:
        qr = F.normalize(qr.float(), dim=-1, eps=1e-6).to(dtype)
        kr = F.normalize(kr.float(), dim=-1, eps=1e-6).to(dtype)
    gfull = g[0] if kda else g[0][..., None].expand(T, HV, D)
    o_ref, ht_ref = naive(qr, kr, v[0], gfull, beta[0], D ** -0.5, h0, HV // H, cu)
    eo, eh = rel_rms(o_ref, o[0]), rel_rms(ht_ref, ht)
    ok = eo < 0.005 and eh < 0.005 and not o.isnan().any() and not ht.isnan().any()
    print(f"{name:40s} o {eo:.2e}  ht {eh:.2e}  {'ok' if ok else 'FAIL'}", flush=True)
    return ok


def malformed_cu_seqlens():
    """Offsets outside [0, T] and decreasing ones: the kernels clamp them, so the call must
    finish without a fault (run this under compute-sanitizer memcheck to see no access
    outside the buffers); the values are unspecified."""
    global LIB
    LIB = LIB or _Lib()
    T, D, dt = 100, 64, torch.float16
    q = torch.randn(1, T, 1, D, device="cuda").to(dt)
    v = torch.randn(1, T, 1, D, device="cuda").to(dt)
    g = F.logsigmoid(torch.randn(1, T, 1, D, device="cuda"))
    beta = torch.rand(1, T, 1, device="cuda")
    cu = torch.tensor([0, 80, 500, -5, 100], device="cuda", dtype=torch.int32)
    for kda in (False, True):
        gg = g if kda else g[..., 0].contiguous()
        LIB.fwd(kda, q, q, v, gg, beta, output_final_state=True, cu_seqlens=cu)
    # a first offset past whole segments: slots before the first sequence's own (the
    # lower-bound gate's chained path with forced 4-chunk segments; the split in time)
    T, D, dt = 4096, 128, torch.bfloat16
    q = F.normalize(torch.randn(1, T, 1, D, device="cuda"), dim=-1).to(dt)
    v = torch.randn(1, T, 1, D, device="cuda").to(dt)
    g, gate = lb_gate_inputs(T, 1, D, "cuda")
    beta = torch.rand(1, T, 1, device="cuda")
    cu = torch.tensor([1500, T], device="cuda", dtype=torch.int32)
    for l2, env in ((True, ("TILE_LA_KDA_CP", "4")), (False, ("TILE_LA_KDA_SPLIT", "40"))):
        saved = os.environ.get(env[0])
        os.environ[env[0]] = env[1]
        try:
            LIB.fwd(True, q, q, v, g, beta, output_final_state=True, cu_seqlens=cu,
                    use_qk_l2norm_in_kernel=l2, **gate)
        finally:
            if saved is None:
                os.environ.pop(env[0])
            else:
                os.environ[env[0]] = saved
    torch.cuda.synchronize()
    print(f"{'malformed cu_seqlens (clamped, no fault)':40s} ok", flush=True)
    return True


def no_tokens():
    """T = 0 through the C API (NULL token tensors): the final state is the initial state."""
    global LIB
    LIB = LIB or _Lib()
    D, dt = 64, torch.bfloat16
    q = torch.empty(1, 0, 1, D, device="cuda", dtype=dt)
    v = torch.empty(1, 0, 2, D, device="cuda", dtype=dt)
    h0 = torch.randn(1, 2, D, D, device="cuda")
    ok = True
    for kda in (False, True):
        g = torch.empty((1, 0, 2, D) if kda else (1, 0, 2), device="cuda")
        _, ht = LIB.fwd(kda, q, q, v, g, torch.empty(1, 0, 2, device="cuda"),
                        initial_state=h0, output_final_state=True)
        torch.cuda.synchronize()
        ok &= torch.equal(ht, h0)
    print(f"{'no tokens: final state = initial state':40s} {'ok' if ok else 'FAIL'}", flush=True)
    return ok


def main():
    ok = True
    ok &= malformed_cu_seqlens()
    ok &= no_tokens()
    for kda in (False, True):
        op = "kda" if kda else "gdn"
        ok &= case(f"{op} T=64 H=1 D=128 bf16", kda, 64, 1, 1, 128, torch.bfloat16)
        ok &= case(f"{op} T=200 H=2 HV=4 D=128 bf16", kda, 200, 2, 4, 128, torch.bfloat16)
        ok &= case(f"{op} T=130 H=2 D=64 f16", kda, 130, 2, 2, 64, torch.float16)
        ok &= case(f"{op} varlen 3 seqs D=128 l2", kda, 300, 2, 2, 128, torch.bfloat16,
                   lens=[100, 0, 200], l2=True)
        ok &= case(f"{op} strong gates (x30)", kda, 150, 1, 1, 128, torch.bfloat16,
                   gate_scale=30.0)
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
