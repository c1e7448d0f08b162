"""ref_ctypes.py: ctypes view of the CPU reference (tests/ref/ref.h) for Python tests.

Loads the shared build of the reference, <repo>/build/tests/ref/libtileref_shared.so
(env TILE_REF_LIB overrides), and declares the structures and functions the GPU
parity test uses: the fp64 naive recurrence ref_recurrent_fwd and FLA's metric
ref_compare_f64. No torch here, so tests/gpu/check_ctypes_layout.py can check the
layouts on any machine.

Layout notes (from ref.h): the enums are C ints; bool is C99 _Bool (ctypes.c_bool, one
byte); ctypes pads the structures exactly as the C compiler does, so declaring the
fields in order with the right types is enough (the layout check proves it).
"""
import ctypes
import os
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
DEFAULT_LIB = REPO / "build" / "tests" / "ref" / "libtileref_shared.so"

REF_OK = 0
REF_GDN, REF_KDA = 0, 1                 # ref_op
REF_F32, REF_BF16, REF_F16 = 0, 1, 2    # ref_dtype

_dp = ctypes.POINTER(ctypes.c_double)


class RefOpts(ctypes.Structure):
    _fields_ = [
        ("scale", ctypes.c_double),
        ("use_qk_l2norm_in_kernel", ctypes.c_bool),
        ("use_beta_sigmoid_in_kernel", ctypes.c_bool),
        ("allow_neg_eigval", ctypes.c_bool),
        ("use_gate_in_kernel", ctypes.c_bool),
        ("has_lower_bound", ctypes.c_bool),
        ("lower_bound", ctypes.c_double),
        ("safe_gate", ctypes.c_bool),
        ("state_v_first", ctypes.c_bool),
        ("chunk_size", ctypes.c_int),
        ("dtype", ctypes.c_int),        # ref_dtype
        ("threads", ctypes.c_int),
    ]


class RefProblem(ctypes.Structure):
    _fields_ = [
        ("op", ctypes.c_int),           # ref_op
        ("B", ctypes.c_int), ("T", ctypes.c_int), ("H", ctypes.c_int),
        ("HV", ctypes.c_int), ("K", ctypes.c_int), ("V", ctypes.c_int),
        ("cu_seqlens", ctypes.POINTER(ctypes.c_int64)),
        ("n_seqs", ctypes.c_int),
        ("opts", RefOpts),
    ]


class RefIn64(ctypes.Structure):
    _fields_ = [(name, _dp) for name in
                ("q", "k", "v", "g", "beta", "A_log", "dt_bias", "h0")]


class RefFwd64(ctypes.Structure):
    _fields_ = [(name, _dp) for name in ("o", "ht", "h", "v_new")]


class RefGrads64(ctypes.Structure):
    _fields_ = [(name, _dp) for name in
                ("dq", "dk", "dv", "dg", "dbeta", "dA_log", "ddt_bias", "dh0")]


class RefCmp(ctypes.Structure):
    _fields_ = [
        ("abs_err", ctypes.c_double),
        ("ratio_err", ctypes.c_double),
        ("worst", ctypes.c_size_t),
        ("worst_ref", ctypes.c_double),
        ("worst_got", ctypes.c_double),
        ("has_nan", ctypes.c_bool),
        ("pass_", ctypes.c_bool),       # `pass` in C
    ]


def lib_path():
    return Path(os.environ.get("TILE_REF_LIB") or DEFAULT_LIB)


def load(path=None):
    """The reference library with its prototypes declared; OSError if missing."""
    lib = ctypes.CDLL(str(path or lib_path()))
    P = ctypes.POINTER
    lib.ref_status_str.argtypes = [ctypes.c_int]
    lib.ref_status_str.restype = ctypes.c_char_p
    lib.ref_problem_check.argtypes = [P(RefProblem)]
    lib.ref_problem_check.restype = ctypes.c_int
    lib.ref_recurrent_fwd.argtypes = [P(RefProblem), P(RefIn64), P(RefFwd64)]
    lib.ref_recurrent_fwd.restype = ctypes.c_int
    lib.ref_recurrent_bwd.argtypes = [P(RefProblem), P(RefIn64), _dp, _dp, P(RefGrads64)]
    lib.ref_recurrent_bwd.restype = ctypes.c_int
    lib.ref_compare_f64.argtypes = [_dp, _dp, ctypes.c_size_t, ctypes.c_double, P(RefCmp)]
    lib.ref_compare_f64.restype = ctypes.c_bool
    return lib


def dptr(address):
    """A double * from an integer address (None or 0: NULL)."""
    return ctypes.cast(ctypes.c_void_p(address or None), _dp)


def make_problem(op, B, T, H, HV, D, cu=None, threads=1, **opts):
    """A RefProblem; cu is a list of offsets (kept alive on the returned object),
    opts the RefOpts fields by name. chunk_size defaults to 64."""
    p = RefProblem(op=op, B=B, T=T, H=H, HV=HV, K=D, V=D)
    if cu is not None:
        p._cu = (ctypes.c_int64 * len(cu))(*cu)  # owned by p
        p.cu_seqlens = p._cu
        p.n_seqs = len(cu) - 1
    p.opts.chunk_size = 64
    p.opts.threads = threads
    for name, value in opts.items():
        if not hasattr(p.opts, name):
            raise AttributeError(f"ref_opts has no field {name}")
        setattr(p.opts, name, value)
    return p


def recurrent_fwd(lib, problem, inputs, outputs):
    """ref_recurrent_fwd; inputs/outputs map field names to host addresses of
    contiguous float64 arrays (absent or None: NULL). Raises on a bad status."""
    fin = RefIn64(**{k: dptr(v) for k, v in inputs.items() if v})
    fout = RefFwd64(**{k: dptr(v) for k, v in outputs.items() if v})
    st = lib.ref_problem_check(ctypes.byref(problem))
    if st != REF_OK:
        raise RuntimeError(f"ref_problem_check: {lib.ref_status_str(st).decode()}")
    st = lib.ref_recurrent_fwd(ctypes.byref(problem), ctypes.byref(fin), ctypes.byref(fout))
    if st != REF_OK:
        raise RuntimeError(f"ref_recurrent_fwd: {lib.ref_status_str(st).decode()}")


def recurrent_bwd(lib, problem, inputs, dout, dht, grads):
    """ref_recurrent_bwd; inputs as recurrent_fwd's, dout/dht host addresses (dht None: 0),
    grads maps RefGrads64 field names to float64 output addresses. Raises on a bad status."""
    fin = RefIn64(**{k: dptr(v) for k, v in inputs.items() if v})
    fg = RefGrads64(**{k: dptr(v) for k, v in grads.items() if v})
    st = lib.ref_recurrent_bwd(ctypes.byref(problem), ctypes.byref(fin), dptr(dout), dptr(dht),
                               ctypes.byref(fg))
    if st != REF_OK:
        raise RuntimeError(f"ref_recurrent_bwd: {lib.ref_status_str(st).decode()}")


def compare_f64(lib, ref_addr, got_addr, n, ratio):
    """FLA's metric (ref_compare_f64) on two float64 host arrays; returns a RefCmp."""
    c = RefCmp()
    lib.ref_compare_f64(dptr(ref_addr), dptr(got_addr), n, ratio, ctypes.byref(c))
    return c
