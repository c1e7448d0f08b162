"""tile_ctypes.py: the smallest ctypes binding of libtilert for benchmarks.

Loads libtilert.so and a kernel library built by tile_add_kernel_library(... SHARED),
and launches embedded kernels on torch tensors, on torch's current stream. The
runtime retains the device's primary context, which torch uses too, so pointers and
streams are shared.
"""
import ctypes
import os

import torch

TILE_ARG_I32, TILE_ARG_I64, TILE_ARG_F32, TILE_ARG_PTR = 1, 2, 3, 4


class _U(ctypes.Union):
    _fields_ = [("i32", ctypes.c_int32), ("i64", ctypes.c_int64),
                ("f32", ctypes.c_float), ("ptr", ctypes.c_uint64)]


class TileArg(ctypes.Structure):
    _fields_ = [("kind", ctypes.c_int), ("nstrides", ctypes.c_int),
                ("strides", ctypes.POINTER(ctypes.c_uint64)), ("u", _U)]


def i32(v):
    a = TileArg(TILE_ARG_I32, 0, None)
    a.u.i32 = v
    return a


def ptr(t):
    a = TileArg(TILE_ARG_PTR, 0, None)
    a.u.ptr = t.data_ptr()
    return a


class Runtime:
    def __init__(self, build_dir, kernel_lib, device=0):
        self.rt_lib = ctypes.CDLL(os.path.join(build_dir, "runtime", "libtilert.so"))
        self.kernels = ctypes.CDLL(kernel_lib)
        self.rt = ctypes.c_void_p()
        self._check(self.rt_lib.tile_rt_create(device, ctypes.byref(self.rt)), "tile_rt_create")
        self.rt_lib.tile_rt_error.restype = ctypes.c_char_p
        self.rt_lib.tile_status_str.restype = ctypes.c_char_p

    def _check(self, status, what):
        if status != 0:
            detail = b""
            if getattr(self, "rt", None) and self.rt.value:
                detail = self.rt_lib.tile_rt_error(self.rt)
            raise RuntimeError(f"{what} failed: status {status}: {detail.decode()}")

    def kernel(self, module, name):
        mod_sym = ctypes.c_char.in_dll(self.kernels, "tile_module_" + module)
        mod = ctypes.c_void_p()
        self._check(self.rt_lib.tile_module_create(self.rt, ctypes.byref(mod_sym),
                                                   ctypes.byref(mod)), "tile_module_create")
        k = ctypes.c_void_p()
        self._check(self.rt_lib.tile_kernel_get(mod, name.encode(), ctypes.byref(k)),
                    "tile_kernel_get")
        return k

    def launch(self, k, args, stream):
        arr = (TileArg * len(args))(*args)
        self._check(self.rt_lib.tile_kernel_launch(k, arr, len(args), ctypes.c_void_p(stream)),
                    "tile_kernel_launch")


def timed(fn, iters, warmup=5):
    """Milliseconds per call of fn: CUDA events around `iters` calls after a warm-up."""
    for _ in range(warmup):
        fn()
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    torch.cuda.synchronize()
    start.record()
    for _ in range(iters):
        fn()
    stop.record()
    torch.cuda.synchronize()
    return start.elapsed_time(stop) / iters
