"""tile_la: FLA-compatible entry points over the prebuilt GDN/KDA forward kernels.

A thin ctypes binding of libtilela (kernels/include/tile_la.h). The two public
functions take FLA's arguments and return what FLA returns:

    from tile_la import chunk_gated_delta_rule, chunk_kda
    o, ht = chunk_kda(q, k, v, g, beta, initial_state=h0, output_final_state=True,
                      use_qk_l2norm_in_kernel=True, cu_seqlens=cu)

Forward only (no autograd), chunk size 64, K = V in {64, 128}, q/k/v in bf16 or fp16.
Work is enqueued on torch's current stream of the inputs' device and nothing
synchronises, so the calls can be captured in a CUDA graph; the one exception is
return_intermediate_states without cu_seqlens_cpu, which reads cu_seqlens on the host.

Libraries: env TILE_LA_LIB, else <repo>/build/kernels/libtilela.so; libtilert.so is
loaded first (RTLD_GLOBAL) from env TILE_RT_LIB, else <build>/runtime next to the
kernel library, else <repo>/build/runtime. One tile_la handle per device, created on
first use; it retains the device's primary context, the one torch uses, so torch's
pointers and streams are valid for it.
"""
import ctypes
import os
import warnings
from pathlib import Path

import torch

from ._abi import TILE_LA_BF16, TILE_LA_F16, TileLaFwdArgs, declare

__all__ = ["chunk_gated_delta_rule", "chunk_gdn", "chunk_kda", "release", "CHUNK_SIZE"]

CHUNK_SIZE = 64                 # the only chunk size the kernels implement
HEAD_DIMS = (64, 128)           # K = V
WORKSPACE_ALIGN = 256           # tile_la.h: workspace must be 256-byte aligned
PTR_ALIGN = 16                  # tile_la.h: q, k, v, o must be 16-byte aligned

_REPO = Path(__file__).resolve().parents[2]
_DTYPES = {torch.bfloat16: TILE_LA_BF16, torch.float16: TILE_LA_F16}

_libs = None    # (libtilela, libtilert or None), loaded on first use
_handles = {}   # device index -> tile_la * (ctypes.c_void_p)


# ---- libraries and handles ------------------------------------------------------------

def _library_paths():
    la_path = os.environ.get("TILE_LA_LIB") or str(_REPO / "build" / "kernels" / "libtilela.so")
    rt_path = os.environ.get("TILE_RT_LIB")
    if not rt_path:
        sibling = Path(la_path).resolve().parent.parent / "runtime" / "libtilert.so"
        rt_path = str(sibling if sibling.exists() else _REPO / "build" / "runtime" / "libtilert.so")
    return la_path, rt_path


def _load():
    """libtilert first with RTLD_GLOBAL (libtilela's dependency), then libtilela."""
    global _libs
    if _libs is None:
        la_path, rt_path = _library_paths()
        rt = None
        if os.path.exists(rt_path):
            rt = ctypes.CDLL(rt_path, mode=ctypes.RTLD_GLOBAL)
        try:
            la = ctypes.CDLL(la_path)
        except OSError as e:
            raise RuntimeError(f"tile_la: cannot load {la_path}: {e} "
                               "(build the kernels or set TILE_LA_LIB)") from e
        declare(la, rt)
        _libs = (la, rt)
    return _libs


def _status_name(status):
    rt = _load()[1]
    if rt is None:
        return f"status {status}"
    return rt.tile_status_str(status).decode()


def _handle(device_index):
    """The tile_la of this device, created on first use."""
    handle = _handles.get(device_index)
    if handle is None:
        la = _load()[0]
        torch.cuda.init()  # torch's context exists before the library retains it
        handle = ctypes.c_void_p()
        status = la.tile_la_create(device_index, ctypes.byref(handle))
        if status != 0:
            raise RuntimeError(f"tile_la_create({device_index}) failed: {_status_name(status)}")
        _handles[device_index] = handle
    return handle


def release():
    """Destroys the handles (optional; the process exit does the same). The next call
    creates a fresh one. Only call it when no captured graph still uses the kernels."""
    if _libs is None:
        return
    for handle in _handles.values():
        _libs[0].tile_la_destroy(handle)
    _handles.clear()


# ---- argument preparation --------------------------------------------------------------

def _ptr(x):
    """Device address of a tensor, or None (NULL) when absent or empty."""
    return None if x is None or x.numel() == 0 else x.data_ptr()


def _check_qkv(q, k, v):
    """Shapes and dtypes of q, k, v; returns (B, T, H, HV, D)."""
    for name, x in (("q", q), ("k", k), ("v", v)):
        if not isinstance(x, torch.Tensor) or not x.is_cuda:
            raise ValueError(f"{name} must be a CUDA tensor")
        if x.dtype not in _DTYPES:
            raise ValueError(f"{name} must be bfloat16 or float16, got {x.dtype}")
        if x.dim() != 4:
            raise ValueError(f"{name} must be [B, T, heads, D], got shape {tuple(x.shape)}")
        if x.device != q.device:
            raise ValueError(f"{name} is on {x.device}, q on {q.device}")
    if k.dtype != q.dtype or v.dtype != q.dtype:
        raise ValueError(f"q, k, v must share a dtype, got {q.dtype}, {k.dtype}, {v.dtype}")
    if k.shape != q.shape:
        raise ValueError(f"k must have the shape of q {tuple(q.shape)}, got {tuple(k.shape)}")
    B, T, H, D = q.shape
    HV = v.shape[2]
    if D not in HEAD_DIMS:
        raise ValueError(f"q: head dim must be 64 or 128, got {D}")
    if v.shape[3] != D:
        raise ValueError(f"v: value head dim must equal the key head dim {D}, got {v.shape[3]}")
    if tuple(v.shape[:2]) != (B, T):
        raise ValueError(f"v must be [B, T, HV, D] with B, T = {B}, {T}, got {tuple(v.shape)}")
    if H == 0 or HV % H != 0:
        raise ValueError(f"v: num_v_heads (HV={HV}) must be a multiple of num_heads (H={H})")
    return B, T, H, HV, D


def _f32(name, x, shape, device):
    """x as contiguous float32 of `shape` (a flat or [1,1,H,1]-style view is accepted
    when the element count matches, as FLA views A_log and dt_bias)."""
    if not isinstance(x, torch.Tensor):
        raise ValueError(f"{name} must be a tensor")
    if x.device != device:
        raise ValueError(f"{name} must be on {device}, got {x.device}")
    x = x.detach().float().contiguous()
    if tuple(x.shape) != tuple(shape):
        n = 1
        for s in shape:
            n *= s
        if x.numel() != n:
            raise ValueError(f"{name} must have shape {tuple(shape)}, got {tuple(x.shape)}")
        x = x.reshape(shape)
    return x


def _aligned(x):
    """A copy when the address is not 16-byte aligned (a view with an offset)."""
    x = x.detach().contiguous()
    if x.numel() and x.data_ptr() % PTR_ALIGN:
        x = x.clone()
    return x


def _cu_seqlens(cu_seqlens, B, device):
    """(int32 cu_seqlens on the device, number of sequences); no host sync."""
    if cu_seqlens is None:
        return None, B
    if B != 1:
        raise ValueError(f"The batch size is expected to be 1 rather than {B} when using "
                         "`cu_seqlens`. Please flatten variable-length inputs before processing.")
    if cu_seqlens.dim() != 1 or cu_seqlens.numel() < 1:
        raise ValueError(f"cu_seqlens must be 1-D [N + 1], got shape {tuple(cu_seqlens.shape)}")
    cu = cu_seqlens.to(device=device, dtype=torch.int32).contiguous()
    return cu, cu.numel() - 1


def _num_chunks(B, T, cu_seqlens, cu_seqlens_cpu):
    """(rows of h, chunks per row): sum over sequences of ceil(len / 64). Reads
    cu_seqlens on the host when no host copy is given (a sync)."""
    if cu_seqlens is None:
        return B, -(-T // CHUNK_SIZE)
    host = cu_seqlens_cpu if cu_seqlens_cpu is not None else cu_seqlens.cpu()
    cu = [int(x) for x in (host.tolist() if hasattr(host, "tolist") else host)]
    return 1, sum(-(-(b - a) // CHUNK_SIZE) for a, b in zip(cu[:-1], cu[1:]))


def _cu_host(cu_seqlens_cpu, N):
    """FLA's cu_seqlens_cpu as int32 in host memory for the library's scheduling, or None
    (not given, or not N + 1 offsets: the library then assumes nothing about the lengths)."""
    if cu_seqlens_cpu is None:
        return None
    host = torch.as_tensor(cu_seqlens_cpu).to(device="cpu", dtype=torch.int32).contiguous()
    return host if host.dim() == 1 and host.numel() == N + 1 else None


def _state_in(initial_state, N, HV, D, device, kda):
    if initial_state is None:
        return None
    if kda and initial_state.dtype != torch.float32:
        raise ValueError("initial_state must be in float32.")  # as FLA's chunk_kda
    if tuple(initial_state.shape) != (N, HV, D, D):
        raise ValueError(f"initial_state must be [N, HV, D, D] = {(N, HV, D, D)}, "
                         f"got {tuple(initial_state.shape)}")
    return _f32("initial_state", initial_state, (N, HV, D, D), device)


# ---- the call --------------------------------------------------------------------------

def _forward(kda, q, k, v, g, beta, scale, initial_state, output_final_state,
             use_qk_l2norm_in_kernel, use_beta_sigmoid_in_kernel, allow_neg_eigval,
             use_gate_in_kernel, A_log, dt_bias, lower_bound, state_v_first,
             cu_seqlens, cu_seqlens_cpu, return_intermediate_states):
    B, T, H, HV, D = _check_qkv(q, k, v)
    device = q.device
    q, k, v = _aligned(q), _aligned(k), _aligned(v)
    cu, N = _cu_seqlens(cu_seqlens, B, device)
    h0 = _state_in(initial_state, N, HV, D, device, kda)
    g = _aligned(_f32("g", g, (B, T, HV, D) if kda else (B, T, HV), device))  # KDA: TMA
    beta = _f32("beta", beta, (B, T, HV), device)
    if allow_neg_eigval and not use_beta_sigmoid_in_kernel:
        raise ValueError("`allow_neg_eigval=True` requires `use_beta_sigmoid_in_kernel=True`.")

    # Gate parameters are read only with the gate in kernel (FLA drops them otherwise).
    use_lb = False
    if use_gate_in_kernel:
        use_lb = kda and lower_bound is not None
        if A_log is None and not use_lb:
            raise ValueError("`A_log` must be provided when `use_gate_in_kernel=True`"
                             + (" and `lower_bound` is not set." if kda else "."))
        A_log = None if A_log is None else _f32("A_log", A_log, (HV,), device)
        if dt_bias is not None:
            dt_bias = _f32("dt_bias", dt_bias, (HV, D) if kda else (HV,), device)
    else:
        A_log = dt_bias = None

    o = torch.empty_like(v, dtype=q.dtype)
    ht = torch.empty(N, HV, D, D, dtype=torch.float32, device=device) if output_final_state else None
    h = None
    if return_intermediate_states:
        rows, nt = _num_chunks(B, T, cu, cu_seqlens_cpu)
        h = torch.empty(rows, nt, HV, D, D, dtype=q.dtype, device=device)

    if B * T == 0:  # no tokens: nothing to run, the final state is the initial one
        return _no_tokens(o, ht, h, h0, return_intermediate_states)

    a = TileLaFwdArgs()
    a.batch, a.seq_len, a.num_heads, a.num_v_heads, a.head_dim = B, T, H, HV, D
    a.dtype = _DTYPES[q.dtype]
    a.q, a.k, a.v, a.g, a.beta, a.o = _ptr(q), _ptr(k), _ptr(v), _ptr(g), _ptr(beta), _ptr(o)
    a.scale = 0.0 if scale is None else float(scale)   # 0: the library uses D^-1/2
    a.initial_state, a.final_state = _ptr(h0), _ptr(ht)
    a.cu_seqlens, a.num_seqs = _ptr(cu), (N if cu is not None else 0)
    cu_host = _cu_host(cu_seqlens_cpu, N) if cu is not None else None
    if cu_host is not None:  # scheduling only (whether long sequences are cut)
        a.cu_seqlens_host = cu_host.data_ptr()
    a.use_qk_l2norm_in_kernel = int(bool(use_qk_l2norm_in_kernel))
    a.use_beta_sigmoid_in_kernel = int(bool(use_beta_sigmoid_in_kernel))
    a.allow_neg_eigval = int(bool(allow_neg_eigval))
    a.use_gate_in_kernel = int(bool(use_gate_in_kernel))
    a.A_log, a.dt_bias = _ptr(A_log), _ptr(dt_bias)
    a.use_lower_bound = int(use_lb)
    a.lower_bound = float(lower_bound) if use_lb else 0.0
    a.state_v_first = int(bool(state_v_first))
    if h is not None:
        a.chunk_states, a.num_chunk_states = _ptr(h), h.shape[0] * h.shape[1]

    la = _load()[0]
    op = "kda" if kda else "gdn"
    size = ctypes.c_size_t(0)
    status = getattr(la, f"tile_la_{op}_fwd_workspace")(ctypes.byref(a), ctypes.byref(size))
    if status != 0:  # the query keeps no message; the check names the bad argument
        msg = ctypes.create_string_buffer(512)
        la.tile_la_fwd_check(ctypes.byref(a), int(kda), msg, len(msg))
        raise RuntimeError(f"tile_la_{op}_fwd_workspace: {_status_name(status)}: "
                           f"{msg.value.decode(errors='replace')}")
    handle = _handle(device.index)
    ws = None   # the fused GDN kernel needs no workspace (size 0, pointer NULL)
    if size.value > 0:
        ws = torch.empty(size.value, dtype=torch.uint8, device=device)
        assert ws.data_ptr() % WORKSPACE_ALIGN == 0, "torch returned a misaligned workspace"
        a.workspace, a.workspace_size = ws.data_ptr(), ws.numel()
    a.stream = torch.cuda.current_stream(device).cuda_stream

    # q, k, v, g, beta, h0, cu, cu_host, A_log, dt_bias and ws stay referenced until this returns;
    # the caching allocator keeps their memory for the stream's later work.
    status = getattr(la, f"tile_la_{op}_fwd")(handle, ctypes.byref(a))
    if status != 0:
        raise RuntimeError(f"tile_la_{op}_fwd: {_status_name(status)}: "
                           f"{la.tile_la_error(handle).decode(errors='replace')}")
    if return_intermediate_states:
        if state_v_first:  # the library writes keys first; FLA's layout is [.., V, K] here
            h = h.transpose(-1, -2).contiguous()
        return o, ht, h
    return o, ht


def _no_tokens(o, ht, h, h0, return_h):
    """T = 0 (or B = 0): the library needs non-NULL q/k/v/o, which empty tensors lack, so
    the (trivial) answer is formed here, on the stream: final_state = initial_state or 0."""
    if ht is not None:
        if h0 is None:
            ht.zero_()
        else:
            ht.copy_(h0)
    return (o, ht, h) if return_h else (o, ht)


def _common_kwargs(kwargs, state_v_first):
    """FLA's shared keyword handling: chunk_size, the deprecated state layout alias,
    and the context-parallel options we do not implement."""
    chunk_size = kwargs.pop("chunk_size", CHUNK_SIZE)
    if chunk_size != CHUNK_SIZE:
        raise ValueError(f"`chunk_size` must be {CHUNK_SIZE} for these kernels, got {chunk_size}.")
    if "transpose_state_layout" in kwargs:
        if state_v_first:
            raise ValueError("Cannot pass both `state_v_first` and the deprecated "
                             "`transpose_state_layout`.")
        warnings.warn("`transpose_state_layout` is deprecated and renamed to `state_v_first`.",
                      DeprecationWarning, stacklevel=3)
        state_v_first = kwargs.pop("transpose_state_layout")
    if kwargs.get("cp_context") is not None:
        raise NotImplementedError("tile_la: cp_context (context parallelism) is not supported")
    return state_v_first


# ---- public API (FLA's signatures) ---------------------------------------------------------

def chunk_gated_delta_rule(q, k, v, g, beta, scale=None, initial_state=None,
                           output_final_state=False, use_qk_l2norm_in_kernel=False,
                           use_beta_sigmoid_in_kernel=False, allow_neg_eigval=False,
                           state_v_first=False, cu_seqlens=None, cu_seqlens_cpu=None,
                           return_intermediate_states=False, **kwargs):
    """Gated DeltaNet chunked forward, as fla.ops.gated_delta_rule.chunk_gated_delta_rule.

    q, k [B,T,H,D], v [B,T,HV,D] (bf16/fp16, D 64 or 128), g [B,T,HV] (log decay, or the
    raw gate with use_gate_in_kernel=True and kwargs A_log [HV], dt_bias [HV]), beta
    [B,T,HV]. Returns (o [B,T,HV,D] in q.dtype, final_state [N,HV,D,D] fp32 or None), and
    the chunk-start states h [1 or B, NT, HV, D, D] (q.dtype, keys first) as a third
    element with return_intermediate_states=True (an extension: FLA's GDN has no such
    option).
    """
    if "head_first" in kwargs:
        raise DeprecationWarning("head_first has been removed. Inputs must be in "
                                 "`[B, T, H, ...]` format.")
    state_v_first = _common_kwargs(kwargs, state_v_first)
    return _forward(False, q, k, v, g, beta, scale, initial_state, output_final_state,
                    use_qk_l2norm_in_kernel, use_beta_sigmoid_in_kernel, allow_neg_eigval,
                    kwargs.get("use_gate_in_kernel", False), kwargs.get("A_log"),
                    kwargs.get("dt_bias"), None, state_v_first, cu_seqlens, cu_seqlens_cpu,
                    return_intermediate_states)


chunk_gdn = chunk_gated_delta_rule


def chunk_kda(q, k, v, g, beta, scale=None, initial_state=None, output_final_state=False,
              use_qk_l2norm_in_kernel=False, use_gate_in_kernel=False,
              use_beta_sigmoid_in_kernel=False, allow_neg_eigval=False, safe_gate=False,
              lower_bound=None, disable_recompute=False, return_intermediate_states=False,
              state_v_first=False, cu_seqlens=None, cu_seqlens_cpu=None, **kwargs):
    """Kimi Delta Attention chunked forward, as fla.ops.kda.chunk_kda.

    As chunk_gated_delta_rule, with a per-channel gate g [B,T,HV,D]; with
    use_gate_in_kernel=True the kwargs A_log [HV] and dt_bias [HV*D] feed
    -exp(A_log) softplus(g + dt_bias), or lower_bound * sigmoid(exp(A_log) (g + dt_bias))
    when lower_bound is given (A_log then optional). initial_state must be fp32, as in
    FLA. safe_gate and disable_recompute only matter to FLA's training path: safe_gate's
    argument checks are kept, nothing else changes.
    """
    state_v_first = _common_kwargs(kwargs, state_v_first)
    if use_gate_in_kernel and safe_gate:
        if lower_bound is None:
            raise ValueError("`lower_bound` must be specified when `safe_gate=True` and "
                             "`use_gate_in_kernel=True`.")
        if not -5 <= lower_bound < 0:
            raise ValueError(f"`lower_bound` must be in the safe range [-5, 0), got {lower_bound}.")
    return _forward(True, q, k, v, g, beta, scale, initial_state, output_final_state,
                    use_qk_l2norm_in_kernel, use_beta_sigmoid_in_kernel, allow_neg_eigval,
                    use_gate_in_kernel, kwargs.get("A_log"), kwargs.get("dt_bias"),
                    lower_bound, state_v_first, cu_seqlens, cu_seqlens_cpu,
                    return_intermediate_states)
