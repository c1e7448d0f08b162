"""_abi.py: the C ABI of libtilela (kernels/include/tile_la.h) as ctypes declarations.

Kept free of torch so the struct layout can be checked on a machine without it
(tests/gpu/check_ctypes_layout.py loads this file directly). Field order and types
mirror tile_la_fwd_args exactly; ctypes applies the same alignment rules as the C
compiler, so the offsets agree as long as the types do.
"""
import ctypes

# tile_la_dtype (a C enum, so an int); 0 is deliberately invalid on the C side.
TILE_LA_BF16 = 1
TILE_LA_F16 = 2

_float_p = ctypes.c_void_p  # const float * and friends: device pointers, passed as integers


class TileLaFwdArgs(ctypes.Structure):
    """tile_la_fwd_args: zero-initialised by ctypes, like `= {0}` in C."""
    _fields_ = [
        # shapes
        ("batch", ctypes.c_int),
        ("seq_len", ctypes.c_int),
        ("num_heads", ctypes.c_int),
        ("num_v_heads", ctypes.c_int),
        ("head_dim", ctypes.c_int),
        ("dtype", ctypes.c_int),            # tile_la_dtype
        # tensors (device pointers)
        ("q", ctypes.c_void_p),
        ("k", ctypes.c_void_p),
        ("v", ctypes.c_void_p),
        ("g", _float_p),
        ("beta", _float_p),
        ("o", ctypes.c_void_p),
        ("scale", ctypes.c_float),
        ("initial_state", _float_p),
        ("final_state", _float_p),
        # variable length
        ("cu_seqlens", ctypes.c_void_p),    # const int32_t *
        ("num_seqs", ctypes.c_int),
        ("cu_seqlens_host", ctypes.c_void_p),  # const int32_t *, host memory
        # options
        ("use_qk_l2norm_in_kernel", ctypes.c_int),
        ("use_beta_sigmoid_in_kernel", ctypes.c_int),
        ("allow_neg_eigval", ctypes.c_int),
        ("use_gate_in_kernel", ctypes.c_int),
        ("A_log", _float_p),
        ("dt_bias", _float_p),
        ("use_lower_bound", ctypes.c_int),
        ("lower_bound", ctypes.c_float),
        ("state_v_first", ctypes.c_int),
        ("chunk_states", ctypes.c_void_p),
        ("num_chunk_states", ctypes.c_int),
        ("workspace", ctypes.c_void_p),
        ("workspace_size", ctypes.c_size_t),
        ("stream", ctypes.c_void_p),        # CUstream
    ]


# The prototypes declare() gives, as C types, for the layout check's compile-time
# comparison with the header (tests/gpu/check_ctypes_layout.py).
C_PROTOTYPES = {
    "tile_la_create": "tile_status (*)(int, tile_la **)",
    "tile_la_destroy": "void (*)(tile_la *)",
    "tile_la_error": "const char *(*)(const tile_la *)",
    "tile_la_gdn_fwd_workspace": "tile_status (*)(const tile_la_fwd_args *, size_t *)",
    "tile_la_kda_fwd_workspace": "tile_status (*)(const tile_la_fwd_args *, size_t *)",
    "tile_la_gdn_fwd": "tile_status (*)(tile_la *, const tile_la_fwd_args *)",
    "tile_la_kda_fwd": "tile_status (*)(tile_la *, const tile_la_fwd_args *)",
    "tile_la_fwd_check": "tile_status (*)(const tile_la_fwd_args *, int, char *, size_t)",
    "tile_status_str": "const char *(*)(tile_status)",
}


def declare(la, rt=None):
    """Sets argtypes/restype on the entry points of libtilela (and libtilert if given)."""
    P = ctypes.POINTER
    args_p = P(TileLaFwdArgs)
    la.tile_la_create.argtypes = [ctypes.c_int, P(ctypes.c_void_p)]
    la.tile_la_create.restype = ctypes.c_int
    la.tile_la_destroy.argtypes = [ctypes.c_void_p]
    la.tile_la_destroy.restype = None
    la.tile_la_error.argtypes = [ctypes.c_void_p]
    la.tile_la_error.restype = ctypes.c_char_p
    for name in ("tile_la_gdn_fwd_workspace", "tile_la_kda_fwd_workspace"):
        fn = getattr(la, name)
        fn.argtypes = [args_p, P(ctypes.c_size_t)]
        fn.restype = ctypes.c_int
    for name in ("tile_la_gdn_fwd", "tile_la_kda_fwd"):
        fn = getattr(la, name)
        fn.argtypes = [ctypes.c_void_p, args_p]
        fn.restype = ctypes.c_int
    # tile_la_fwd_check(args, kda, error, error_size): no handle or device needed
    la.tile_la_fwd_check.argtypes = [args_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_size_t]
    la.tile_la_fwd_check.restype = ctypes.c_int
    if rt is not None:
        rt.tile_status_str.argtypes = [ctypes.c_int]
        rt.tile_status_str.restype = ctypes.c_char_p
