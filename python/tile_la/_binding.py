"""_binding.py: FLA's chunk_kda / chunk_gated_delta_rule over libtilela, on torch tensors.

Every argument is checked here, on the host, before anything touches a device: the checks
run on CPU tensors too (then the last one fails: the tensors must be CUDA tensors), which
is how tests/python/ exercises them without a GPU. Only then are the libraries loaded, the
outputs allocated and the call enqueued.
"""
import ctypes
import math
import operator
import threading
import warnings
from typing import List, Optional, Tuple

import torch

from . import _abi

CHUNK_SIZE = 64                 # the only chunk size the kernels implement
HEAD_DIMS = (64, 128)           # K = V
WORKSPACE_ALIGN = 256           # tile_la.h: workspace must be 256-byte aligned
PTR_ALIGN = 16                  # tile_la.h: q, k, v, o must be 16-byte aligned

# KDA's forward keeps A and AQK for the backward where their chunk slots (512 bytes a token and
# value head) cost at most 1.5x that: a slot per sequence start makes many short sequences cost
# more, and their backward recomputes instead. (At D = 128 FLA's forward keeps 776 bytes a token
# and value head: its Akk, Aqk and g's cumsum.)
SAVED_SETUP_MAX_BYTES = 768

_DTYPES = {torch.bfloat16: _abi.TILE_LA_BF16, torch.float16: _abi.TILE_LA_F16}

# Keyword arguments beyond the named parameters, as FLA takes them through **kwargs. Anything
# else is a TypeError, as for any Python function (a misspelt option must not be dropped).
#   A_log, dt_bias: the in-kernel gate's parameters; chunk_size: must be 64;
#   transpose_state_layout: FLA's deprecated name of state_v_first; cp_context: must be None;
#   use_graph: FLA's graph-friendly scheduling (ours is always graph-capturable: no effect);
#   max_num_seqs: with use_graph, must equal the number of sequences (FLA asserts the same);
#   disable_recompute (GDN; an extension: FLA's chunk_kda has it, its GDN always recomputes).
_COMMON_KWARGS = frozenset({"A_log", "dt_bias", "chunk_size", "transpose_state_layout",
                            "cp_context", "use_graph", "max_num_seqs"})
_GDN_KWARGS = _COMMON_KWARGS | {"use_gate_in_kernel", "head_first", "disable_recompute"}
_KDA_KWARGS = _COMMON_KWARGS

_handles = {}                   # device index -> tile_la * (ctypes.c_void_p)
_handles_lock = threading.Lock()  # two threads' first calls must not both create a handle
_plans = None                   # record_plans(True): each call's plan text, until plans()


# ---- libraries and handles -----------------------------------------------------------------

def _handle(libs, device_index):
    """The tile_la of this device, created once (under the lock) on first use."""
    handle = _handles.get(device_index)
    if handle is not None:
        return handle
    with _handles_lock:
        handle = _handles.get(device_index)
        if handle is None:
            torch.cuda.init()  # torch's context exists before the library retains it
            handle = ctypes.c_void_p()
            status = libs.la.tile_la_create(device_index, ctypes.byref(handle))
            if status != _abi.TILE_OK:
                raise RuntimeError(f"tile_la_create({device_index}) failed: "
                                   f"{libs.status_name(status)}")
            _set_options(libs, handle, _options)
            _handles[device_index] = handle
    return handle


# The options every handle gets: the scripts' TILE_LA_* variables (_abi.OPTION_ENV) read once,
# at import, until set_options() replaces them.
_options = _abi.options_from_environ()


def _set_options(libs, handle, opt):
    status = libs.la.tile_la_set_options(handle, ctypes.byref(opt))
    if status != _abi.TILE_OK:
        raise ValueError(f"tile_la_set_options: {libs.status_name(status)}: "
                         f"{libs.la.tile_la_error(handle).decode(errors='replace')}")


def set_options(**fields):
    """Sets the scheduling options (tile_la.h's tile_la_options, e.g. kda_segments=8,
    kda_wide=_abi.TILE_LA_ON; fields not given are TILE_LA_AUTO, the library's rules) of
    every handle, now and of those created later. Returns the previous options as a dict."""
    global _options
    opt = _abi.TileLaOptions(**fields)
    with _handles_lock:
        libs = _abi.load() if _handles else None
        for handle in _handles.values():
            _set_options(libs, handle, opt)
        old, _options = _options, opt
    return {name: getattr(old, name) for name, _ in old._fields_}


def record_plans(enabled):
    """While enabled, each call keeps the text of its launch plan (tile_la_describe_plan:
    segments, kernels, grids); plans() returns and clears them. Costs a second plan per call."""
    global _plans
    _plans = [] if enabled else None


def plans():
    """The plan texts recorded since the last call (see record_plans)."""
    global _plans
    got = list(_plans or [])
    if _plans is not None:
        _plans = []
    return got


def release():
    """Destroys the handles (optional; the process exit does the same). The next call
    creates a fresh one. Only call it when no captured graph still uses the kernels."""
    with _handles_lock:
        if _handles:
            la = _abi.load().la
            for handle in _handles.values():
                la.tile_la_destroy(handle)
            _handles.clear()


# ---- argument checks (host only) ------------------------------------------------------------

def _shape(x):
    return tuple(x.shape)


def _tensor(name, x):
    if not isinstance(x, torch.Tensor):
        raise TypeError(f"{name} must be a torch.Tensor, got {type(x).__name__}")
    return x


def _check_qkv(q, k, v):
    """Shapes and dtypes of q, k, v (any device, checked later); returns (B, T, H, HV, D)."""
    for name, x in (("q", q), ("k", k), ("v", v)):
        _tensor(name, x)
        if x.dtype not in _DTYPES:
            raise ValueError(f"{name} must be bfloat16 or float16, got {x.dtype}")
        if x.dim() != 4:
            raise ValueError(f"{name} must be [B, T, heads, D], got shape {_shape(x)}")
        if x.device != q.device:
            raise ValueError(f"{name} is on {x.device}, q on {q.device}")
    if k.dtype != q.dtype or v.dtype != q.dtype:
        raise ValueError(f"q, k, v must share a dtype, got {q.dtype}, {k.dtype}, {v.dtype}")
    if k.shape != q.shape:
        raise ValueError(f"k must have the shape of q {_shape(q)}, got {_shape(k)}")
    B, T, H, D = q.shape
    HV = v.shape[2]
    if D not in HEAD_DIMS:
        raise ValueError(f"q: head dim must be 64 or 128, got {D}")
    if v.shape[3] != D:
        raise ValueError(f"v: value head dim must equal the key head dim {D}, got {v.shape[3]}")
    if _shape(v)[:2] != (B, T):
        raise ValueError(f"v must be [B, T, HV, D] with B, T = {B}, {T}, got {_shape(v)}")
    if H == 0 or HV % H != 0:
        raise ValueError(f"v: num_v_heads (HV={HV}) must be a multiple of num_heads (H={H})")
    return B, T, H, HV, D


def _float_on(name, x, device):
    if not x.is_floating_point():
        raise ValueError(f"{name} must be a floating-point tensor, got {x.dtype}")
    if x.device != device:
        raise ValueError(f"{name} must be on {device} (as q), got {x.device}")
    return x


def _exact(name, x, shape, layout, device):
    """A float tensor of exactly `shape` on `device`: no reshaping, since a tensor with the
    right element count in another layout (head-first [B, HV, T]) would be misread."""
    _tensor(name, x)
    if tuple(x.shape) != tuple(shape):
        raise ValueError(f"{name} must have shape {layout} = {tuple(shape)}, "
                         f"got {_shape(x)}")
    return _float_on(name, x, device)


def _param(name, x, shape, device):
    """A_log / dt_bias: any view with the right element count ([HV*D] as FLA passes
    dt_bias, [1, 1, HV, 1] ...), since these are per-head parameters, not token data."""
    _tensor(name, x)
    n = math.prod(shape)
    if x.numel() != n:
        raise ValueError(f"{name} must have {n} elements (shape {tuple(shape)}), "
                         f"got shape {_shape(x)}")
    return _float_on(name, x, device)


def _int(name, value):
    """An exact integer (bool and float refused: a float offset or count is a bug)."""
    if isinstance(value, (bool, float)) or (isinstance(value, torch.Tensor)
                                             and not _is_int_dtype(value.dtype)):
        raise TypeError(f"{name} must be an integer, got {value!r}")
    try:
        return operator.index(value)
    except TypeError:
        raise TypeError(f"{name} must be an integer, got {type(value).__name__}") from None


def _is_int_dtype(dtype):
    return not dtype.is_floating_point and not dtype.is_complex and dtype != torch.bool


def _offsets_list(name, x):
    """Host offsets from a list/tuple of ints or a 1-D integer tensor (read on the host:
    a CUDA tensor is copied, a synchronisation)."""
    if isinstance(x, torch.Tensor):
        if not _is_int_dtype(x.dtype):
            raise TypeError(f"{name} must hold integers, got a {x.dtype} tensor")
        if x.dim() != 1:
            raise ValueError(f"{name} must be 1-D [N + 1], got shape {_shape(x)}")
        return x.tolist()
    if isinstance(x, (list, tuple)):
        return [_int(f"{name}[{i}]", v) for i, v in enumerate(x)]
    raise TypeError(f"{name} must be a 1-D integer tensor, a list or a tuple of ints, "
                    f"got {type(x).__name__}")


def _check_offsets(name, offsets, T):
    """FLA's cu_seqlens contract: N + 1 >= 1 int32 values, 0 first, non-decreasing, T last."""
    if not offsets:
        raise ValueError(f"{name} must hold N + 1 >= 1 offsets, got none")
    for i, v in enumerate(offsets):
        if not _abi.INT32_MIN <= v <= _abi.INT32_MAX:
            raise ValueError(f"{name}[{i}] = {v} is outside the int32 range of the C API")
    if offsets[0] != 0:
        raise ValueError(f"{name} must start at 0, got {name}[0] = {offsets[0]}")
    for i in range(1, len(offsets)):
        if offsets[i] < offsets[i - 1]:
            raise ValueError(f"{name} must be non-decreasing, got {name}[{i - 1}] = "
                             f"{offsets[i - 1]} > {name}[{i}] = {offsets[i]}")
    if offsets[-1] != T:
        raise ValueError(f"{name} must end at the number of tokens T = {T}, got "
                         f"{name}[{len(offsets) - 1}] = {offsets[-1]}")


class _Varlen:
    """cu_seqlens as checked: N, the device tensor given (or None), the host offsets when
    known without a synchronisation (None otherwise)."""

    def __init__(self, n, device_tensor, host):
        self.n, self.device_tensor, self.host = n, device_tensor, host


def _varlen(cu_seqlens, cu_seqlens_cpu, B, T, device):
    """Checks cu_seqlens (and FLA's host copy cu_seqlens_cpu); None without cu_seqlens.
    Host offsets (a list, a tuple, a CPU tensor, or cu_seqlens_cpu) are checked value by
    value; a CUDA tensor without a host copy is only checked for dtype and shape, since
    reading it would synchronise (the library clamps offsets outside [0, T])."""
    if cu_seqlens is None:
        if cu_seqlens_cpu is not None:
            raise ValueError("cu_seqlens_cpu is given without cu_seqlens")
        return None
    if B != 1:
        raise ValueError(f"The batch size is expected to be 1 rather than {B} when using "
                         "`cu_seqlens`. Please flatten variable-length inputs before processing.")
    host = None
    if isinstance(cu_seqlens, torch.Tensor) and cu_seqlens.device.type != "cpu":
        if not _is_int_dtype(cu_seqlens.dtype):
            raise TypeError(f"cu_seqlens must hold integers, got a {cu_seqlens.dtype} tensor")
        if cu_seqlens.dim() != 1 or cu_seqlens.numel() < 1:
            raise ValueError(f"cu_seqlens must be 1-D [N + 1], got shape {_shape(cu_seqlens)}")
        if cu_seqlens.device != device:
            raise ValueError(f"cu_seqlens must be on {device} (as q), got {cu_seqlens.device}")
        n = cu_seqlens.numel() - 1
        device_tensor = cu_seqlens
    else:
        host = _offsets_list("cu_seqlens", cu_seqlens)
        _check_offsets("cu_seqlens", host, T)
        n = len(host) - 1
        device_tensor = None
    if cu_seqlens_cpu is not None:
        cpu = _offsets_list("cu_seqlens_cpu", cu_seqlens_cpu)
        if len(cpu) != n + 1:
            raise ValueError(f"cu_seqlens_cpu must hold the N + 1 = {n + 1} offsets of "
                             f"cu_seqlens, got {len(cpu)}")
        _check_offsets("cu_seqlens_cpu", cpu, T)
        if host is None:
            host = cpu
        elif cpu != host:
            raise ValueError("cu_seqlens_cpu differs from cu_seqlens")
    if n > _abi.INT32_MAX:
        raise ValueError(f"cu_seqlens: {n} sequences exceed the int32 range of the C API")
    return _Varlen(n, device_tensor, host)


def _number(name, x):
    if isinstance(x, bool) or not isinstance(x, (int, float)) and not (
            isinstance(x, torch.Tensor) and x.numel() == 1 and x.device.type == "cpu"):
        raise TypeError(f"{name} must be a number, got {type(x).__name__}")
    return float(x)


def _take_kwargs(fname, kwargs, allowed):
    for name in kwargs:
        if name not in allowed:
            raise TypeError(f"{fname}() got an unexpected keyword argument '{name}'")


class _Call:
    """A checked call: normalised options, shapes in a TileLaFwdArgs (integers range-checked
    by the struct itself), and what the launch still needs."""


def _prepare(kda, q, k, v, g, beta, scale, initial_state, output_final_state,
             use_qk_l2norm_in_kernel, use_beta_sigmoid_in_kernel, allow_neg_eigval,
             use_gate_in_kernel, A_log, dt_bias, lower_bound, state_v_first,
             cu_seqlens, cu_seqlens_cpu, return_intermediate_states, max_num_seqs=None):
    """Every check that needs no device, in argument order; a _Call. Tensors may be on any
    device here (they must agree with q's); _forward then requires CUDA."""
    B, T, H, HV, D = _check_qkv(q, k, v)
    device = q.device
    if kda:
        _exact("g", g, (B, T, HV, D), "[B, T, HV, K]", device)
    else:
        _exact("g", g, (B, T, HV), "[B, T, HV]", device)
    _exact("beta", beta, (B, T, HV), "[B, T, HV]", device)
    if scale is not None:
        scale = _number("scale", scale)
    var = _varlen(cu_seqlens, cu_seqlens_cpu, B, T, device)
    N = var.n if var is not None else B
    if max_num_seqs is not None and var is not None and _int("max_num_seqs", max_num_seqs) != N:
        raise ValueError(f"cu_seqlens must hold max_num_seqs + 1 = {max_num_seqs + 1} "
                         f"offsets, got {N + 1}")
    if initial_state is not None:
        _tensor("initial_state", initial_state)
        if kda and initial_state.dtype != torch.float32:
            raise ValueError("initial_state must be in float32.")  # as FLA's chunk_kda
        _exact("initial_state", initial_state, (N, HV, D, D), "[N, HV, K, V]", device)
    if allow_neg_eigval and not use_beta_sigmoid_in_kernel:
        raise ValueError("`allow_neg_eigval=True` requires `use_beta_sigmoid_in_kernel=True`.")

    # Gate parameters are read only with the gate in kernel (FLA drops them otherwise).
    use_lb = False
    if use_gate_in_kernel:
        use_lb = kda and lower_bound is not None
        if A_log is None and not use_lb:
            raise ValueError("`A_log` must be provided when `use_gate_in_kernel=True`"
                             + (" and `lower_bound` is not set." if kda else "."))
        if A_log is not None:
            _param("A_log", A_log, (HV,), device)
        if dt_bias is not None:
            _param("dt_bias", dt_bias, (HV, D) if kda else (HV,), device)
    else:
        A_log = dt_bias = None
    lb = _number("lower_bound", lower_bound) if use_lb else 0.0

    c = _Call()
    c.kda, c.B, c.T, c.H, c.HV, c.D, c.N, c.device = kda, B, T, H, HV, D, N, device
    c.q, c.k, c.v, c.g, c.beta, c.h0, c.A_log, c.dt_bias = (q, k, v, g, beta, initial_state,
                                                            A_log, dt_bias)
    c.var, c.output_final_state = var, bool(output_final_state)
    c.return_h, c.state_v_first = bool(return_intermediate_states), bool(state_v_first)
    a = _abi.TileLaFwdArgs()
    a.batch, a.seq_len, a.num_heads, a.num_v_heads, a.head_dim = B, T, H, HV, D
    a.dtype = _DTYPES[q.dtype]
    a.gate_dtype, a.beta_dtype = _scalar_dtype(g, q.dtype), _scalar_dtype(beta, q.dtype)
    a.scale = 0.0 if scale is None else scale       # 0: the library uses D^-1/2
    a.num_seqs = N if var is not None else 0
    a.use_qk_l2norm_in_kernel = int(bool(use_qk_l2norm_in_kernel))
    a.use_beta_sigmoid_in_kernel = int(bool(use_beta_sigmoid_in_kernel))
    a.allow_neg_eigval = int(bool(allow_neg_eigval))
    a.use_gate_in_kernel = int(bool(use_gate_in_kernel))
    a.use_lower_bound = int(use_lb)
    a.lower_bound = lb
    a.state_v_first = c.state_v_first
    c.args = a
    c.num_chunks = None
    if c.return_h and var is not None and var.host is not None:
        c.num_chunks = _chunk_rows(var.host)
        a.num_chunk_states = c.num_chunks
    elif c.return_h:
        rows = B * -(-T // CHUNK_SIZE) if var is None else 0  # varlen: counted at launch
        a.num_chunk_states = rows
    return c


def _chunk_rows(offsets):
    """Chunk states of a varlen batch: sum over sequences of ceil(len / 64)."""
    return sum(-(-(b - a) // CHUNK_SIZE) for a, b in zip(offsets[:-1], offsets[1:]))


def _require_cuda(c):
    for name in ("q", "k", "v", "g", "beta", "h0", "A_log", "dt_bias"):
        x = getattr(c, name)
        if x is not None and not x.is_cuda:
            shown = "initial_state" if name == "h0" else name
            raise ValueError(f"{shown} must be a CUDA tensor, got one on {x.device}")


def _common_kwargs(fname, kwargs, allowed, state_v_first):
    """FLA's shared keyword handling: unknown names, chunk_size, the deprecated state layout
    alias, and the context-parallel options we do not implement."""
    _take_kwargs(fname, kwargs, allowed)
    chunk_size = kwargs.pop("chunk_size", CHUNK_SIZE)
    if _int("chunk_size", chunk_size) != CHUNK_SIZE:
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


# ---- the launch ------------------------------------------------------------------------------

def _ptr(x):
    """Device address of a tensor, or None (NULL) when absent or empty."""
    return None if x is None or x.numel() == 0 else x.data_ptr()


def _aligned(x):
    """A copy when the address is not 16-byte aligned (a view with an offset)."""
    x = x.detach().contiguous()
    if x.numel() and x.data_ptr() % PTR_ALIGN:
        x = x.clone()
    return x


def _f32(x, shape):
    return x.detach().float().contiguous().reshape(shape)


def _scalar_dtype(x, dtype):
    """The tile_la_dtype g or beta goes to the library in: q's dtype when it has it (the kernels
    read it as it is: no conversion pass), else TILE_LA_F32 (f32 as given; f64, or a 16-bit
    dtype other than q's, converted to f32 by _scalar)."""
    return _DTYPES[dtype] if x.dtype == dtype else _abi.TILE_LA_F32


def _scalar(x, shape, tile_dtype):
    """g or beta in the dtype _scalar_dtype chose, contiguous."""
    x = x.detach()
    if tile_dtype == _abi.TILE_LA_F32:
        x = x.float()
    return x.contiguous().reshape(shape)


def _device_cu(var, device, T):
    """cu_seqlens as int32 on the device, with no host synchronisation. A wider integer
    tensor is clamped to [-1, T + 1] first, so a value beyond int32 cannot wrap into a
    valid-looking offset (the library clamps what is outside [0, T])."""
    if var.device_tensor is None:
        return torch.tensor(var.host, dtype=torch.int32, device=device)
    cu = var.device_tensor
    if cu.dtype != torch.int32:
        cu = cu.clamp(-1, T + 1).to(torch.int32)
    return cu.contiguous()


def _forward(c, keep_workspace=False, keep_setup=False):
    """The forward call c: (o, ht), or (o, ht, h) with return_intermediate_states; with
    keep_workspace (disable_recompute) its workspace goes to c.fwd_workspace, for the
    backward to read the chunk-parallel products from (None without tokens), made with
    save_for_backward: KDA's holds them in any case and then, with an initial state, also QG's
    lo term for dh0; GDN's holds them only so. keep_setup (KDA): the forward also leaves
    its chunks' A and AQK in c.saved_setup (tile_la_fwd_args.saved_setup), from which the
    backward forms the rest of its setup."""
    _require_cuda(c)
    kda, B, T, HV, D, N, device, a = c.kda, c.B, c.T, c.HV, c.D, c.N, c.device, c.args
    c.saved_setup = None
    libs = _abi.load()   # before any allocation: a missing library costs no device work
    q, k, v = _aligned(c.q), _aligned(c.k), _aligned(c.v)
    g = _aligned(_scalar(c.g, (B, T, HV, D) if kda else (B, T, HV), a.gate_dtype))  # KDA: TMA
    beta = _scalar(c.beta, (B, T, HV), a.beta_dtype)
    h0 = None if c.h0 is None else _f32(c.h0, (N, HV, D, D))
    A_log = None if c.A_log is None else _f32(c.A_log, (HV,))
    dt_bias = None if c.dt_bias is None else _f32(c.dt_bias, (HV, D) if kda else (HV,))
    cu = cu_host = None
    if c.var is not None:
        cu = _device_cu(c.var, device, T)
        if c.return_h and c.var.host is None:
            # sizing h needs the lengths: read them (a sync), and hold them to the contract
            host = cu.tolist()
            _check_offsets("cu_seqlens", host, T)
            c.var.host = host
            c.num_chunks = _chunk_rows(host)
            a.num_chunk_states = c.num_chunks
        if c.var.host is not None:  # scheduling only (whether long sequences are cut)
            cu_host = torch.tensor(c.var.host, dtype=torch.int32)

    o = torch.empty_like(v, dtype=q.dtype)
    ht = None
    if c.output_final_state:
        ht = torch.empty(N, HV, D, D, dtype=torch.float32, device=device)
    h = None
    if c.return_h:
        rows, nt = (1, c.num_chunks) if c.var is not None else (B, -(-T // CHUNK_SIZE))
        h = torch.empty(rows, nt, HV, D, D, dtype=q.dtype, device=device)

    if B * T == 0:  # no tokens: nothing to run, the final state is the initial one
        return _no_tokens(o, ht, h, h0, c.return_h)

    a.q, a.k, a.v, a.g, a.beta, a.o = _ptr(q), _ptr(k), _ptr(v), _ptr(g), _ptr(beta), _ptr(o)
    a.initial_state, a.final_state = _ptr(h0), _ptr(ht)
    a.cu_seqlens = _ptr(cu)
    if cu_host is not None:
        a.cu_seqlens_host = cu_host.data_ptr()
    a.A_log, a.dt_bias = _ptr(A_log), _ptr(dt_bias)
    if h is not None:
        a.chunk_states = _ptr(h)
    a.save_for_backward = int(bool(keep_workspace))

    la = libs.la
    op = "kda" if kda else "gdn"
    handle = _handle(libs, device.index)
    size = ctypes.c_size_t(0)
    saved = None
    if keep_setup and kda:
        status = la.tile_la_kda_saved_setup_size(ctypes.byref(a), ctypes.byref(size))
        if status != _abi.TILE_OK:
            raise RuntimeError(f"tile_la_kda_saved_setup_size: {libs.status_name(status)}")
        if size.value <= SAVED_SETUP_MAX_BYTES * B * T * HV:
            saved = torch.empty(size.value, dtype=torch.uint8, device=device)
            if saved.data_ptr() % WORKSPACE_ALIGN:
                raise RuntimeError("torch returned a saved_setup that is not 256-byte aligned")
            a.saved_setup, a.saved_setup_size = saved.data_ptr(), saved.numel()
    status = getattr(la, f"tile_la_{op}_fwd_workspace")(handle, ctypes.byref(a),
                                                         ctypes.byref(size))
    if status != _abi.TILE_OK:
        raise RuntimeError(f"tile_la_{op}_fwd_workspace: {libs.status_name(status)}: "
                           f"{la.tile_la_error(handle).decode(errors='replace')}")
    if _plans is not None:
        text = ctypes.create_string_buffer(4096)
        if la.tile_la_describe_plan(handle, ctypes.byref(a), int(kda), text, len(text)) == 0:
            _plans.append(text.value.decode(errors="replace"))
    ws = None   # the fused GDN kernel needs no workspace (size 0, pointer NULL)
    if size.value > 0:
        ws = torch.empty(size.value, dtype=torch.uint8, device=device)
        if ws.data_ptr() % WORKSPACE_ALIGN:
            raise RuntimeError("torch returned a workspace that is not 256-byte aligned")
        a.workspace, a.workspace_size = ws.data_ptr(), ws.numel()
    a.stream = torch.cuda.current_stream(device).cuda_stream

    # q, k, v, g, beta, h0, cu, cu_host, A_log, dt_bias and ws stay referenced until this returns;
    # the caching allocator keeps their memory for the stream's later work.
    status = getattr(la, f"tile_la_{op}_fwd")(handle, ctypes.byref(a))
    if status != _abi.TILE_OK:
        raise RuntimeError(f"tile_la_{op}_fwd: {libs.status_name(status)}: "
                           f"{la.tile_la_error(handle).decode(errors='replace')}")
    if keep_workspace:
        c.fwd_workspace = ws
    c.saved_setup = saved
    if c.return_h:
        if c.state_v_first:  # the library writes keys first; FLA's layout is [.., V, K] here
            h = h.transpose(-1, -2).contiguous()
        return o, ht, h
    return o, ht


def _launch_backward(libs, device, b, op):
    """tile_la_<op>_bwd on torch's current stream, with a workspace of the size it asks."""
    la = libs.la
    handle = _handle(libs, device.index)
    size = ctypes.c_size_t(0)
    status = getattr(la, f"tile_la_{op}_bwd_workspace")(handle, ctypes.byref(b),
                                                         ctypes.byref(size))
    if status != _abi.TILE_OK:
        raise RuntimeError(f"tile_la_{op}_bwd_workspace: {libs.status_name(status)}: "
                           f"{la.tile_la_error(handle).decode(errors='replace')}")
    ws = torch.empty(size.value, dtype=torch.uint8, device=device)
    if ws.data_ptr() % WORKSPACE_ALIGN:
        raise RuntimeError("torch returned a workspace that is not 256-byte aligned")
    b.workspace, b.workspace_size = ws.data_ptr(), ws.numel()
    b.stream = torch.cuda.current_stream(device).cuda_stream
    status = getattr(la, f"tile_la_{op}_bwd")(handle, ctypes.byref(b))
    if status != _abi.TILE_OK:
        raise RuntimeError(f"tile_la_{op}_bwd: {libs.status_name(status)}: "
                           f"{la.tile_la_error(handle).decode(errors='replace')}")


def _backward(c, do, dht, fwd_workspace=None, saved_setup=None):
    """The backward (KDA or GDN, as c.kda says) of the call c (a _Call, as its forward took it)
    from do and dht (None: 0): (dq, dk, dv, dg, dbeta, dh0, dA_log, ddt_bias), each in its
    input's dtype and shape, None where the input is None. fwd_workspace: the forward's
    workspace, kept by _forward (disable_recompute); saved_setup: the KDA forward's kept A and
    AQK (keep_setup); neither: recomputed."""
    _require_cuda(c)
    B, T, HV, D, N, device = c.B, c.T, c.HV, c.D, c.N, c.device
    gate_shape = (B, T, HV, D) if c.kda else (B, T, HV)
    bias_shape = (HV, D) if c.kda else (HV,)
    libs = _abi.load()
    q, k, v = _aligned(c.q), _aligned(c.k), _aligned(c.v)
    a = c.args
    g = _aligned(_scalar(c.g, gate_shape, a.gate_dtype))
    beta = _scalar(c.beta, (B, T, HV), a.beta_dtype)
    h0 = None if c.h0 is None else _f32(c.h0, (N, HV, D, D))
    A_log = None if c.A_log is None else _f32(c.A_log, (HV,))
    dt_bias = None if c.dt_bias is None else _f32(c.dt_bias, bias_shape)
    do = _aligned(do.to(q.dtype).contiguous()) if do is not None else torch.zeros_like(v, dtype=q.dtype)
    dht = None if dht is None else _f32(dht, (N, HV, D, D))
    dq, dk, dv = torch.empty_like(q), torch.empty_like(k), torch.empty_like(v)
    dg, dbeta = torch.empty_like(g), torch.empty_like(beta)
    dh0 = None if c.h0 is None else torch.empty(N, HV, D, D, dtype=torch.float32, device=device)
    dA_log = None if A_log is None else torch.empty(HV, dtype=torch.float32, device=device)
    ddt = None if dt_bias is None else torch.empty(bias_shape, dtype=torch.float32, device=device)
    cu = None if c.var is None else _device_cu(c.var, device, T)

    b = _abi.TileLaBwdArgs()
    f = b.fwd
    for name, _ctype in _abi.TileLaFwdArgs._fields_:
        setattr(f, name, getattr(a, name))
    f.o = f.final_state = f.chunk_states = f.workspace = None
    f.num_chunk_states, f.workspace_size = 0, 0
    f.q, f.k, f.v, f.g, f.beta = _ptr(q), _ptr(k), _ptr(v), _ptr(g), _ptr(beta)
    f.initial_state, f.cu_seqlens, f.A_log, f.dt_bias = _ptr(h0), _ptr(cu), _ptr(A_log), _ptr(dt_bias)
    f.cu_seqlens_host = None
    # the arguments of the forward that kept the workspace (KDA's layout follows them)
    f.save_for_backward = int(fwd_workspace is not None)
    b.dout, b.dht = _ptr(do), _ptr(dht)
    b.dq, b.dk, b.dv, b.dg, b.dbeta = _ptr(dq), _ptr(dk), _ptr(dv), _ptr(dg), _ptr(dbeta)
    b.dh0, b.dA_log, b.ddt_bias = _ptr(dh0), _ptr(dA_log), _ptr(ddt)
    if fwd_workspace is not None and fwd_workspace.numel() > 0:
        b.fwd_workspace, b.fwd_workspace_size = fwd_workspace.data_ptr(), fwd_workspace.numel()
    f.saved_setup, f.saved_setup_size = None, 0
    if saved_setup is not None and saved_setup.numel() > 0:
        f.saved_setup, f.saved_setup_size = saved_setup.data_ptr(), saved_setup.numel()
    if B * T == 0:   # the library needs q, k, ...: no tokens, so dh0 = dht and the rest is 0
        if dh0 is not None:
            dh0.copy_(dht) if dht is not None else dh0.zero_()
        for x in (dA_log, ddt):
            if x is not None:
                x.zero_()
    else:
        _launch_backward(libs, device, b, "kda" if c.kda else "gdn")

    def like(x, ref):
        return None if x is None or ref is None else x.view(ref.shape).to(ref.dtype)
    return (like(dq, c.q), like(dk, c.k), like(dv, c.v), like(dg, c.g), like(dbeta, c.beta),
            like(dh0, c.h0), like(dA_log, c.A_log), like(ddt, c.dt_bias))


# ---- chunk_kda and chunk_gated_delta_rule as torch.library custom ops, with their backward ---
# tile_la::<op>_fwd and tile_la::<op>_bwd (op kda or gdn) wrap _forward and _backward with fake
# implementations (shapes only), so torch.compile traces a model that calls them; the autograd
# formula registered on <op>_fwd calls <op>_bwd. Optional outputs are returned as empty
# tensors (a custom op returns tensors only) and mapped back to None. The forward saves its
# inputs and, with save_workspace (disable_recompute), its workspace, whose chunk-parallel
# products the backward then reads instead of recomputing them; KDA's otherwise its chunks' A
# and AQK (saved_setup, 512 bytes a token and value head), from which the backward forms the
# rest of its setup. Either is a byte tensor whose size only the library knows (an unbacked
# size in the fake). Both ops take the same arguments (GDN's lower_bound is always None).

# KDA's forward keeps A and AQK for the backward (else the backward recomputes them, as a C
# caller without saved_setup has it; the GPU tests run both)
_KEEP_SETUP = True

_GRAD_TYPES = Tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor,
                    torch.Tensor, torch.Tensor, torch.Tensor]
# torch.library.custom_op arrived in torch 2.4: with it the ops are ones torch.compile traces;
# older torch gets the same forward and backward through an autograd.Function.
_HAS_CUSTOM_OP = hasattr(torch.library, "custom_op")


def _op_call(kda, q, k, v, g, beta, h0, A_log, dt_bias, cu_seqlens, cu_seqlens_cpu, scale,
             use_qk_l2norm_in_kernel, use_gate_in_kernel, use_beta_sigmoid_in_kernel,
             allow_neg_eigval, lower_bound, state_v_first, output_final_state):
    return _prepare(kda, q, k, v, g, beta, scale, h0, output_final_state,
                    use_qk_l2norm_in_kernel, use_beta_sigmoid_in_kernel, allow_neg_eigval,
                    use_gate_in_kernel, A_log, dt_bias, lower_bound, state_v_first,
                    cu_seqlens, cu_seqlens_cpu, False)


def _empty_like_q(q):
    return q.new_empty((0,), dtype=torch.float32)


def _empty_bytes(q):
    return q.new_empty((0,), dtype=torch.uint8)


class _Op:
    """One op's differentiable forward: fwd(...) runs it (the custom op, or the
    autograd.Function on older torch), impl_fwd and impl_bwd are the real implementations."""

    def __init__(self, kda):
        name = "kda" if kda else "gdn"

        def fwd_impl(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, g: torch.Tensor,
                     beta: torch.Tensor, h0: Optional[torch.Tensor],
                     A_log: Optional[torch.Tensor], dt_bias: Optional[torch.Tensor],
                     cu_seqlens: Optional[torch.Tensor], cu_seqlens_cpu: Optional[List[int]],
                     scale: Optional[float], use_qk_l2norm_in_kernel: bool,
                     use_gate_in_kernel: bool, use_beta_sigmoid_in_kernel: bool,
                     allow_neg_eigval: bool, lower_bound: Optional[float], state_v_first: bool,
                     output_final_state: bool, save_workspace: bool, save_setup: bool
                     ) -> Tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
            c = _op_call(kda, q, k, v, g, beta, h0, A_log, dt_bias, cu_seqlens, cu_seqlens_cpu,
                         scale, use_qk_l2norm_in_kernel, use_gate_in_kernel,
                         use_beta_sigmoid_in_kernel, allow_neg_eigval, lower_bound,
                         state_v_first, output_final_state)
            c.fwd_workspace = None
            o, ht = _forward(c, keep_workspace=save_workspace, keep_setup=save_setup)
            kept = c.fwd_workspace if save_workspace else c.saved_setup
            kept = kept if kept is not None else _empty_bytes(q)
            return o, ht if ht is not None else _empty_like_q(q), kept

        def fwd_fake(q, k, v, g, beta, h0, A_log, dt_bias, cu_seqlens, cu_seqlens_cpu, scale,
                     use_qk_l2norm_in_kernel, use_gate_in_kernel, use_beta_sigmoid_in_kernel,
                     allow_neg_eigval, lower_bound, state_v_first, output_final_state,
                     save_workspace, save_setup):
            B, _, _, D = q.shape
            HV = v.shape[2]
            N = cu_seqlens.shape[0] - 1 if cu_seqlens is not None else B
            o = v.new_empty(v.shape, dtype=q.dtype)
            shape = (N, HV, D, D) if output_final_state else (0,)
            ws = _empty_bytes(q)
            if save_workspace or save_setup:
                ws = q.new_empty((torch.library.get_ctx().new_dynamic_size(),),
                                 dtype=torch.uint8)
            return o, q.new_empty(shape, dtype=torch.float32), ws

        def bwd_impl(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, g: torch.Tensor,
                     beta: torch.Tensor, h0: Optional[torch.Tensor],
                     A_log: Optional[torch.Tensor], dt_bias: Optional[torch.Tensor],
                     cu_seqlens: Optional[torch.Tensor], cu_seqlens_cpu: Optional[List[int]],
                     scale: Optional[float], use_qk_l2norm_in_kernel: bool,
                     use_gate_in_kernel: bool, use_beta_sigmoid_in_kernel: bool,
                     allow_neg_eigval: bool, lower_bound: Optional[float], state_v_first: bool,
                     do: torch.Tensor, dht: Optional[torch.Tensor],
                     kept: Optional[torch.Tensor], kept_workspace: bool) -> _GRAD_TYPES:
            c = _op_call(kda, q, k, v, g, beta, h0, A_log, dt_bias, cu_seqlens, cu_seqlens_cpu,
                         scale, use_qk_l2norm_in_kernel, use_gate_in_kernel,
                         use_beta_sigmoid_in_kernel, allow_neg_eigval, lower_bound,
                         state_v_first, False)
            grads = _backward(c, do, dht, kept if kept_workspace else None,
                              None if kept_workspace else kept)
            return tuple(x if x is not None else _empty_like_q(q) for x in grads)

        def bwd_fake(q, k, v, g, beta, h0, A_log, dt_bias, cu_seqlens, cu_seqlens_cpu, scale,
                     use_qk_l2norm_in_kernel, use_gate_in_kernel, use_beta_sigmoid_in_kernel,
                     allow_neg_eigval, lower_bound, state_v_first, do, dht, kept,
                     kept_workspace):
            def like(x):
                return torch.empty_like(x) if x is not None else _empty_like_q(q)
            return (like(q), like(k), like(v), like(g), like(beta), like(h0),
                    like(A_log if use_gate_in_kernel else None),
                    like(dt_bias if use_gate_in_kernel else None))

        def setup_context(ctx, inputs, output):
            (q, k, v, g, beta, h0, A_log, dt_bias, cu_seqlens, *options) = inputs
            # the kept workspace (save_workspace) or KDA's kept A and AQK (save_setup)
            save_workspace, save_setup = options[-2:]
            ws = output[2] if save_workspace or save_setup else None
            ctx.save_for_backward(q, k, v, g, beta, h0, A_log, dt_bias, cu_seqlens, ws)
            ctx.options = options[:-3]   # all but output_final_state, save_workspace, save_setup
            ctx.kept_workspace = bool(save_workspace)
            # an unused output's gradient arrives as None, not as zeros (the kept workspace's
            # were a memset of its size)
            ctx.set_materialize_grads(False)

        def backward_formula(ctx, do, dht, _dws):
            """The gradients of the 20 inputs of <op>_fwd (None for cu_seqlens, options)."""
            q, k, v, g, beta, h0, A_log, dt_bias, cu_seqlens, ws = ctx.saved_tensors
            if dht is not None and dht.numel() == 0:
                dht = None   # the final state was not returned
            if do is None:   # o did not reach the loss
                do = v.new_zeros(v.shape, dtype=q.dtype)
            bwd = getattr(torch.ops.tile_la, f"{name}_bwd") if _HAS_CUSTOM_OP else bwd_impl
            grads = bwd(q, k, v, g, beta, h0, A_log, dt_bias, cu_seqlens, *ctx.options, do, dht,
                        ws, ctx.kept_workspace)
            inputs = (q, k, v, g, beta, h0, A_log, dt_bias)
            grads = tuple(x if ref is not None and x.numel() == ref.numel() else None
                          for x, ref in zip(grads, inputs))
            return grads + (None,) * 12   # cu_seqlens and the options

        self.impl_fwd, self.impl_bwd = fwd_impl, bwd_impl
        self.fake_fwd, self.fake_bwd = fwd_fake, bwd_fake
        if _HAS_CUSTOM_OP:
            fwd_op = torch.library.custom_op(f"tile_la::{name}_fwd", fwd_impl, mutates_args=())
            fwd_op.register_fake(fwd_fake)
            bwd_op = torch.library.custom_op(f"tile_la::{name}_bwd", bwd_impl, mutates_args=())
            bwd_op.register_fake(bwd_fake)
            fwd_op.register_autograd(backward_formula, setup_context=setup_context)
            self.fwd = getattr(torch.ops.tile_la, f"{name}_fwd")
        else:
            class Function(torch.autograd.Function):
                """The op's autograd without torch.library.custom_op (torch < 2.4)."""

                @staticmethod
                def forward(ctx, *inputs):
                    o, ht, ws = fwd_impl(*inputs)
                    ctx.mark_non_differentiable(ws)
                    setup_context(ctx, inputs, (o, ht, ws))
                    return o, ht, ws

                @staticmethod
                def backward(ctx, do, dht, dws):
                    return backward_formula(ctx, do, dht, dws)
            self.fwd = Function.apply


_OPS = {True: _Op(True), False: _Op(False)}


def _differentiable(kda, q, k, v, g, beta, scale, initial_state, output_final_state,
                    use_qk_l2norm_in_kernel, use_gate_in_kernel, use_beta_sigmoid_in_kernel,
                    allow_neg_eigval, lower_bound, state_v_first, cu_seqlens, cu_seqlens_cpu,
                    A_log, dt_bias, disable_recompute=False):
    """chunk_kda or chunk_gated_delta_rule through its custom op (autograd, torch.compile).
    Host offsets become a device tensor here and stay the op's cu_seqlens_cpu (scheduling
    only). disable_recompute: the forward's workspace is kept for the backward; else KDA's
    forward keeps its chunks' A and AQK when a gradient is needed."""
    host = None
    if cu_seqlens_cpu is not None:
        host = _offsets_list("cu_seqlens_cpu", cu_seqlens_cpu)
    if cu_seqlens is not None and not (isinstance(cu_seqlens, torch.Tensor)
                                       and cu_seqlens.device.type != "cpu"):
        listed = _offsets_list("cu_seqlens", cu_seqlens)
        host = listed if host is None else host
        cu_seqlens = torch.tensor(listed, dtype=torch.int32, device=q.device)
    if not use_gate_in_kernel:
        A_log = dt_bias = None
    # KDA keeps A and AQK for the backward only where one will run (under torch.compile
    # this path also runs for inference)
    save_setup = (kda and _KEEP_SETUP and not disable_recompute and
                  _needs_grad(q, k, v, g, beta, initial_state, A_log, dt_bias))
    o, ht, _ = _OPS[kda].fwd(q, k, v, g, beta, initial_state, A_log, dt_bias, cu_seqlens, host,
                             None if scale is None else float(scale),
                             bool(use_qk_l2norm_in_kernel), bool(use_gate_in_kernel),
                             bool(use_beta_sigmoid_in_kernel), bool(allow_neg_eigval),
                             None if lower_bound is None else float(lower_bound),
                             bool(state_v_first), bool(output_final_state),
                             bool(disable_recompute), bool(save_setup))
    return o, (ht if output_final_state else None)


def _no_tokens(o, ht, h, h0, return_h):
    """T = 0 (or B = 0): the library needs non-NULL q/k/v/o, which empty tensors lack, so
    the (trivial) answer is formed here, on the stream: final_state = initial_state or 0."""
    if ht is not None:
        if h0 is None:
            ht.zero_()
        else:
            ht.copy_(h0)
    return (o, ht, h) if return_h else (o, ht)


# ---- public API (FLA's signatures) ---------------------------------------------------------

def chunk_gated_delta_rule(q, k, v, g, beta, scale=None, initial_state=None,
                           output_final_state=False, use_qk_l2norm_in_kernel=False,
                           use_beta_sigmoid_in_kernel=False, allow_neg_eigval=False,
                           state_v_first=False, cu_seqlens=None, cu_seqlens_cpu=None,
                           return_intermediate_states=False, **kwargs):
    """Gated DeltaNet chunked forward, as fla.ops.gated_delta_rule.chunk_gated_delta_rule.

    q, k [B,T,H,D], v [B,T,HV,D] (bf16/fp16, D 64 or 128), g [B,T,HV] (log decay, or the
    raw gate with use_gate_in_kernel=True and kwargs A_log [HV], dt_bias [HV]), beta
    [B,T,HV], exactly these shapes; g and beta each in fp32 or in q's dtype are read by the
    kernels as they are, another float dtype (fp64, the other 16-bit one) is converted to
    fp32 first. cu_seqlens: [N + 1] offsets (0 first, non-decreasing, T last) as an integer
    CUDA tensor, or a list, tuple or CPU tensor of ints. Returns (o
    [B,T,HV,D] in q.dtype, final_state [N,HV,D,D] fp32 or None), and the chunk-start states
    h [1 or B, NT, HV, D, D] (q.dtype, keys first) as a third element with
    return_intermediate_states=True (an extension: FLA's GDN has no such option).

    Differentiable as chunk_kda is (the custom ops tile_la::gdn_fwd and tile_la::gdn_bwd): the
    backward runs KDA's kernels, built for one gate per token. With the keyword
    disable_recompute=True (an extension: FLA's GDN always recomputes) the forward also keeps
    what the backward would recompute first (gdn_kkt's A and AQK in two terms and W: about
    4 x T x HV x 64 + T x HV x D 16-bit values more), the forward costing those stores and
    the backward skipping that kernel.
    """
    if "head_first" in kwargs:
        raise DeprecationWarning("head_first has been removed. Inputs must be in "
                                 "`[B, T, H, ...]` format.")
    state_v_first = _common_kwargs("chunk_gated_delta_rule", kwargs, _GDN_KWARGS,
                                   state_v_first)
    use_gate_in_kernel = kwargs.get("use_gate_in_kernel", False)
    if not (_compiling() and not return_intermediate_states):
        c = _prepare(False, q, k, v, g, beta, scale, initial_state, output_final_state,
                     use_qk_l2norm_in_kernel, use_beta_sigmoid_in_kernel, allow_neg_eigval,
                     use_gate_in_kernel, kwargs.get("A_log"), kwargs.get("dt_bias"), None,
                     state_v_first, cu_seqlens, cu_seqlens_cpu, return_intermediate_states,
                     kwargs.get("max_num_seqs"))
        if not _needs_grad(q, k, v, g, beta, c.h0, c.A_log, c.dt_bias):
            return _forward(c)
        if c.return_h:
            raise ValueError("return_intermediate_states=True is only for inference (no grad)")
    return _differentiable(False, q, k, v, g, beta, scale, initial_state, output_final_state,
                           use_qk_l2norm_in_kernel, use_gate_in_kernel,
                           use_beta_sigmoid_in_kernel, allow_neg_eigval, None, state_v_first,
                           cu_seqlens, cu_seqlens_cpu, kwargs.get("A_log"),
                           kwargs.get("dt_bias"), bool(kwargs.get("disable_recompute", False)))


def _compiling():
    """Whether torch.compile is tracing this call (torch.compiler is torch >= 2.1's)."""
    compiler = getattr(torch, "compiler", None)
    return compiler is not None and compiler.is_compiling()


def _needs_grad(*xs):
    return torch.is_grad_enabled() and any(x is not None and x.requires_grad for x in xs)


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
    when lower_bound is given (A_log then optional); g and beta in fp32 or q's dtype as
    there. initial_state must be fp32, as in FLA. safe_gate's argument checks are kept (the
    kernels are exact for any gate, so it changes nothing else).

    Differentiable: when q, k, v, g, beta, initial_state, A_log or dt_bias requires grad, the
    call runs as the custom op tile_la::kda_fwd and the backward (tile_la::kda_bwd) returns
    the gradient of every one of them, each in its own dtype and shape. The forward saves its
    inputs and each chunk's A = (I + L)^-1 and AQK in two 16-bit terms (512 bytes per token
    and value head, not kept for sequences so short that their chunk slots would cost more
    than 768; FLA's forward keeps its Akk, Aqk and g's cumsum, 776 at K = 128), from which the
    backward forms W, U, QG and KG again without the chunks' gated products and inverses; with
    disable_recompute=True instead its whole workspace (W, U, QG, KG, AQK and the chunk
    decays: about 5 x T x HV x K 16-bit values more), so that the backward reads them instead
    of recomputing them. The chunk states are recomputed either way (their walk runs beside the
    state gradient's, so loading them would save no time). return_intermediate_states is
    refused under grad, as FLA allows it only in inference.
    """
    state_v_first = _common_kwargs("chunk_kda", kwargs, _KDA_KWARGS, state_v_first)
    if use_gate_in_kernel and safe_gate:
        if lower_bound is None:
            raise ValueError("`lower_bound` must be specified when `safe_gate=True` and "
                             "`use_gate_in_kernel=True`.")
        if not -5 <= _number("lower_bound", lower_bound) < 0:
            raise ValueError(f"`lower_bound` must be in the safe range [-5, 0), got {lower_bound}.")
    if not (_compiling() and not return_intermediate_states):
        c = _prepare(True, q, k, v, g, beta, scale, initial_state, output_final_state,
                     use_qk_l2norm_in_kernel, use_beta_sigmoid_in_kernel, allow_neg_eigval,
                     use_gate_in_kernel, kwargs.get("A_log"), kwargs.get("dt_bias"),
                     lower_bound, state_v_first, cu_seqlens, cu_seqlens_cpu,
                     return_intermediate_states, kwargs.get("max_num_seqs"))
        if not _needs_grad(q, k, v, g, beta, c.h0, c.A_log, c.dt_bias):
            return _forward(c)
        if c.return_h:
            raise ValueError("return_intermediate_states=True is only for inference (no grad)")
    # differentiable, or traced by torch.compile (fake tensors: the op's fake implementation
    # gives the shapes, its real one checks the arguments when the compiled code runs)
    return _differentiable(True, q, k, v, g, beta, scale, initial_state, output_final_state,
                           use_qk_l2norm_in_kernel, use_gate_in_kernel,
                           use_beta_sigmoid_in_kernel, allow_neg_eigval, lower_bound,
                           state_v_first, cu_seqlens, cu_seqlens_cpu,
                           kwargs.get("A_log"), kwargs.get("dt_bias"), disable_recompute)
