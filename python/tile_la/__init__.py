"""tile_la: FLA-compatible entry points over the prebuilt GDN/KDA forward kernels.

A thin ctypes binding of libtilela (kernels/include/tile_la.h). The two public
functions take FLA's arguments and return what FLA returns:

    from tile_la import chunk_gated_delta_rule, chunk_kda
    o, ht = chunk_kda(q, k, v, g, beta, initial_state=h0, output_final_state=True,
                      use_qk_l2norm_in_kernel=True, cu_seqlens=cu)

Chunk size 64, K = V in {64, 128}, q/k/v in bf16 or fp16; g and beta each in fp32 or q's
dtype, passed to the kernels as they are (any other float dtype is converted to fp32 first).
Both are differentiable: when an input requires grad, chunk_kda runs as the torch.library
custom op torch.ops.tile_la.kda_fwd (backward: tile_la::kda_bwd) and chunk_gated_delta_rule as
tile_la::gdn_fwd (backward: tile_la::gdn_bwd), with fake implementations for torch.compile; the
ops are registered when the binding is first used. disable_recompute=True (chunk_kda as in
FLA; chunk_gated_delta_rule as an extension, FLA's GDN has no such keyword) keeps the forward's
chunk-parallel products for the backward instead of recomputing them: more memory held between
the two, a faster backward (GDN's forward also pays for storing them).
Work is enqueued on torch's current stream of the inputs' device and nothing
synchronises, so the calls can be captured in a CUDA graph; the exceptions are
return_intermediate_states with cu_seqlens only on the device (its lengths are read to size
the output) and cu_seqlens given as a list or CPU tensor (copied to the device).

Arguments are checked on the host before any device work: exact shapes for g, beta and
initial_state, unknown keyword arguments (TypeError), cu_seqlens' offsets (integers, int32,
0 first, non-decreasing, T last; a CUDA tensor without cu_seqlens_cpu only by dtype and
shape, since reading it would synchronise) and every integer that goes into the C struct.

Installation: `pip install --no-build-isolation ./python` (setuptools; torch is not declared,
use the one you have), or PYTHONPATH=python in a checkout. `_abi.py` says where the shared
libraries are looked for (tile_la/lib/, an install prefix, $TILE_LA_LIBRARY, the loader) and
holds the ctypes declarations the tests and benchmarks share. torch is imported on first use
of the functions, so `tile_la._abi` and load_library() work without it. One tile_la handle
per device, created on first use under a lock; it retains the device's primary context, the
one torch uses, so torch's pointers and streams are valid for it.

Scheduling options (tile_la.h's tile_la_options: force or turn off context parallelism, the
split in time, chunk_recur_w, ...): set_options(**fields) applies them to every handle. The
library reads no environment variable; for scripts, this package maps the TILE_LA_* variables
listed in _abi.OPTION_ENV (TILE_LA_KDA_CP=0, ...) onto the options once, at import.
record_plans(True) keeps each call's launch plan as text (plans() returns them).
"""
from ._abi import LibraryNotFoundError

__all__ = ["chunk_gated_delta_rule", "chunk_gdn", "chunk_kda", "release", "load_library",
           "set_options", "record_plans", "plans", "LibraryNotFoundError", "CHUNK_SIZE"]

CHUNK_SIZE = 64                 # the only chunk size the kernels implement

_LAZY = {"chunk_gated_delta_rule", "chunk_gdn", "chunk_kda", "release", "set_options",
         "record_plans", "plans"}


def load_library():
    """Locates and loads libtilela (and libtilert) now, instead of on the first call;
    returns the _abi.Libraries. Raises LibraryNotFoundError listing what was tried."""
    from . import _abi
    return _abi.load()


def __getattr__(name):
    # The torch-dependent functions load torch only when asked for (PEP 562).
    if name in _LAZY:
        from . import _binding
        return getattr(_binding, name)
    raise AttributeError(f"module 'tile_la' has no attribute '{name}'")


def __dir__():
    return sorted(set(globals()) | _LAZY)
