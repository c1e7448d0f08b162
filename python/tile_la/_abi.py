"""_abi.py: the one ctypes layer over libtilela (kernels/include/tile_la.h) and libtilert
(runtime/include/tile.h), shared by the binding, the tests and the benchmarks.

No torch here, so the layouts, the integer checks and the library lookup work on any machine
(tests/gpu/check_ctypes_layout.py, tests/python/). Field order and types mirror the C structs
exactly; ctypes applies the C compiler's alignment rules, so the offsets agree as long as the
types do (check_ctypes_layout.py compiles the comparison against the headers).

Where libtilela is found, in this order (the first that exists wins):
  1. a file:    $TILE_LA_LIBRARY, the path of the .so (TILE_LA_LIB: its older name); for a
                checkout, TILE_LA_LIBRARY=$PWD/build/kernels/libtilela.so. Named explicitly,
                so it overrides everything else, and a missing file is an error.
  2. bundled:   tile_la/lib/libtilela.so, next to this file (copied in before `pip install`)
  3. a prefix:  $TILE_LA_PREFIX/lib/libtilela.so (or lib64/, lib/<multiarch>/) when
                TILE_LA_PREFIX is set, else <prefix>/lib/libtilela.so (the same) when this
                package sits under <prefix>/lib/pythonX.Y/{site,dist}-packages (a `cmake
                --install` beside `pip install --prefix`; Debian's pip adds local/, so P/local
                and P are tried)
  4. the dynamic loader's own search (LD_LIBRARY_PATH, ldconfig) for "libtilela.so"
Nothing else: no walking up to a checkout's build/. LibraryNotFoundError lists what was tried.
libtilert (libtilela's dependency) is loaded first, RTLD_GLOBAL, from $TILE_RT_LIBRARY
(TILE_RT_LIB), else beside the chosen libtilela (same folder, or ../runtime in a build tree),
else left to the loader (libtilela's RUNPATH, LD_LIBRARY_PATH).
"""
import ctypes
import math
import operator
import os
import sys
import threading
from pathlib import Path

# ---- constants -------------------------------------------------------------------------------

# tile_la_dtype (a C enum, so an int). TILE_LA_F32 is for g and beta only, and 0, so zeroed
# arguments keep them f32; dtype (q, k, v) must be set to one of the other two.
TILE_LA_F32 = 0
TILE_LA_BF16 = 1
TILE_LA_F16 = 2
# tile_arg_kind
TILE_ARG_I32, TILE_ARG_I64, TILE_ARG_F32, TILE_ARG_PTR = 1, 2, 3, 4
# tile_la_options' values: the rule (the default), forced on, off; counts also take n > 0
TILE_LA_AUTO, TILE_LA_ON, TILE_LA_OFF = 0, 1, -1
TILE_OK = 0

INT32_MIN, INT32_MAX = -2 ** 31, 2 ** 31 - 1
_UINTPTR_MAX = 2 ** (8 * ctypes.sizeof(ctypes.c_void_p)) - 1
_SIZE_MAX = 2 ** (8 * ctypes.sizeof(ctypes.c_size_t)) - 1
_FLT_MAX = 3.4028234663852886e38

LIBRARY_ENV = ("TILE_LA_LIBRARY", "TILE_LA_LIB")     # the name, then the older name
RUNTIME_ENV = ("TILE_RT_LIBRARY", "TILE_RT_LIB")
PREFIX_ENV = "TILE_LA_PREFIX"
LA_NAME = "libtilela.so"
RT_NAMES = ("libtilert.so.0", "libtilert.so")          # libtilela's NEEDED entry first

PACKAGE_DIR = Path(__file__).resolve().parent


# ---- integer-checked structures --------------------------------------------------------------

def _int_range(ctype):
    """(lo, hi) of an integer ctypes type, or None for others."""
    if ctype is ctypes.c_void_p:
        return 0, _UINTPTR_MAX
    if ctype is ctypes.c_bool:
        return 0, 1
    if issubclass(ctype, ctypes._SimpleCData) and ctype._type_ in "bBhHiIlLqQnN":
        bits = 8 * ctypes.sizeof(ctype)
        signed = ctype._type_.islower()
        return (-2 ** (bits - 1), 2 ** (bits - 1) - 1) if signed else (0, 2 ** bits - 1)
    return None


def checked_value(owner, name, ctype, value):
    """value as it may go into a field of C type `ctype`: integers must be exact integers
    inside the type's range (ctypes itself would wrap 2**32 + 5 to 5 without a word), floats
    finite values must fit a C float (ctypes would store inf). Raises TypeError / ValueError
    naming owner.name."""
    where = f"{owner}.{name}"
    rng = _int_range(ctype)
    if rng is not None:
        if value is None and ctype is ctypes.c_void_p:
            return None                      # NULL
        if isinstance(value, float):
            raise TypeError(f"{where} takes an integer, got the float {value!r}")
        try:
            ivalue = operator.index(value)   # ints, numpy ints, 0-d integer tensors
        except TypeError:
            raise TypeError(f"{where} takes an integer, got {type(value).__name__}") from None
        lo, hi = rng
        if not lo <= ivalue <= hi:
            raise ValueError(f"{where} = {ivalue} does not fit the C field "
                             f"({ctype.__name__}: {lo} .. {hi})")
        return ivalue
    if ctype in (ctypes.c_float, ctypes.c_double):
        fvalue = float(value)
        if ctype is ctypes.c_float and math.isfinite(fvalue) and abs(fvalue) > _FLT_MAX:
            raise ValueError(f"{where} = {fvalue!r} does not fit a C float")
        return fvalue
    return value                             # pointers to ctypes objects, arrays, nested structs


class _CheckedFields:
    """Mixin: every assignment to a declared field (attribute, constructor keyword or
    position) goes through checked_value first."""
    __slots__ = ()

    def __setattr__(self, name, value):
        ctype = type(self)._field_types().get(name)
        if ctype is not None:
            value = checked_value(type(self).__name__, name, ctype, value)
        super().__setattr__(name, value)

    @classmethod
    def _field_types(cls):
        types = cls.__dict__.get("_checked_types")
        if types is None:
            types = {}
            for klass in reversed(cls.__mro__):
                for fname, ftype, *_ in klass.__dict__.get("_fields_", ()):
                    types[fname] = ftype
            cls._checked_types = types
        return types


class CheckedStructure(_CheckedFields, ctypes.Structure):
    """A ctypes.Structure whose integer and float fields refuse values C would mangle."""


class CheckedUnion(_CheckedFields, ctypes.Union):
    """The same for unions."""


_float_p = ctypes.c_void_p  # const float * and friends: device pointers, passed as integers


class TileLaFwdArgs(CheckedStructure):
    """tile_la_fwd_args: zero-initialised by ctypes, like `= {0}` in C."""
    _fields_ = [
        # shapes
        ("batch", ctypes.c_int),
        ("seq_len", ctypes.c_int),
        ("num_heads", ctypes.c_int),
        ("num_v_heads", ctypes.c_int),
        ("head_dim", ctypes.c_int),
        ("dtype", ctypes.c_int),            # tile_la_dtype
        ("gate_dtype", ctypes.c_int),       # g's: TILE_LA_F32 or dtype
        ("beta_dtype", ctypes.c_int),       # beta's
        # tensors (device pointers)
        ("q", ctypes.c_void_p),
        ("k", ctypes.c_void_p),
        ("v", ctypes.c_void_p),
        ("g", ctypes.c_void_p),             # gate_dtype
        ("beta", ctypes.c_void_p),          # beta_dtype
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
        ("save_for_backward", ctypes.c_int),   # keep more for the backward (disable_recompute)
        ("saved_setup", ctypes.c_void_p),      # KDA: A and AQK kept for the backward
        ("saved_setup_size", ctypes.c_size_t),
        ("chunk_states", ctypes.c_void_p),
        ("num_chunk_states", ctypes.c_int),
        ("workspace", ctypes.c_void_p),
        ("workspace_size", ctypes.c_size_t),
        ("stream", ctypes.c_void_p),        # CUstream
    ]


class TileLaBwdArgs(CheckedStructure):
    """tile_la_bwd_args: the forward's arguments, dL/do and dL/dfinal_state, the gradients."""
    _fields_ = [
        ("fwd", TileLaFwdArgs),
        ("dout", ctypes.c_void_p),
        ("dht", _float_p),
        ("dq", ctypes.c_void_p),
        ("dk", ctypes.c_void_p),
        ("dv", ctypes.c_void_p),
        ("dg", ctypes.c_void_p),            # gate_dtype
        ("dbeta", ctypes.c_void_p),         # beta_dtype
        ("dh0", _float_p),
        ("dA_log", _float_p),
        ("ddt_bias", _float_p),
        ("workspace", ctypes.c_void_p),
        ("workspace_size", ctypes.c_size_t),
        ("stream", ctypes.c_void_p),        # CUstream
        ("fwd_workspace", ctypes.c_void_p),  # the forward's workspace (disable_recompute)
        ("fwd_workspace_size", ctypes.c_size_t),
    ]


class TileLaOptions(CheckedStructure):
    """tile_la_options: all TILE_LA_AUTO (the library's rules) when zero-initialised."""
    _fields_ = [
        ("gdn_segments", ctypes.c_int),
        ("kda_segments", ctypes.c_int),
        ("kda_split", ctypes.c_int),
        ("kda_transposed", ctypes.c_int),
        ("kda_wide", ctypes.c_int),
        ("kda_map_kernel", ctypes.c_int),
        ("kda_prep_nocb", ctypes.c_int),
        ("bwd_wide", ctypes.c_int),
        ("exact_state", ctypes.c_int),
        ("first_segment", ctypes.c_int),
        ("gdn_kkt_two_ctas", ctypes.c_int),
    ]


# The environment variables scripts used to steer the schedule, and the option each sets:
# (variable, field, kind). "count": "0" turns the rule off, n > 0 forces n, anything else is
# off too (the old reading); "switch": "0" off, "1" on, anything else the rule; "off": "0" off,
# anything else the rule. The library reads none of them: options_from_environ() maps them for
# scripts, and the binding applies it when it creates a handle.
OPTION_ENV = (
    ("TILE_LA_GDN_CP", "gdn_segments", "count"),
    ("TILE_LA_KDA_CP", "kda_segments", "count"),
    ("TILE_LA_KDA_SPLIT", "kda_split", "count"),
    ("TILE_LA_KDA_T", "kda_transposed", "off"),
    ("TILE_LA_KDA_W", "kda_wide", "switch"),
    ("TILE_LA_KDA_MAPT", "kda_map_kernel", "switch"),
    ("TILE_LA_KDA_NOCB", "kda_prep_nocb", "off"),
    ("TILE_LA_BWD_W", "bwd_wide", "switch"),
    ("TILE_LA_EXACT_STATE", "exact_state", "switch"),
    ("TILE_LA_FIRST_SEG", "first_segment", "count"),
    ("TILE_LA_KKT2", "gdn_kkt_two_ctas", "switch"),
)


def _option_value(text, kind):
    if kind == "count":
        try:
            n = int(text, 10)
        except ValueError:
            return TILE_LA_OFF
        return min(n, INT32_MAX) if n > 0 else TILE_LA_OFF
    if text == "0":
        return TILE_LA_OFF
    if kind == "switch" and text == "1":
        return TILE_LA_ON
    return TILE_LA_AUTO


def options_from_environ(environ=None):
    """A TileLaOptions from the TILE_LA_* variables of OPTION_ENV that are set and not empty
    (unset ones stay TILE_LA_AUTO)."""
    environ = os.environ if environ is None else environ
    opt = TileLaOptions()
    for name, field, kind in OPTION_ENV:
        text = environ.get(name)
        if text:
            setattr(opt, field, _option_value(text, kind))
    return opt


def apply_environ_options(la, handle, environ=None):
    """Sets options_from_environ(environ) on a handle: for scripts with a handle of their own
    that change the TILE_LA_* variables between calls (call it before each call, the workspace
    query included). Raises ValueError when the library refuses them."""
    opt = options_from_environ(environ)
    if la.tile_la_set_options(handle, ctypes.byref(opt)) != TILE_OK:
        raise ValueError(f"tile_la_set_options: {la.tile_la_error(handle).decode()}")


class _TileArgValue(CheckedUnion):
    _fields_ = [("i32", ctypes.c_int32), ("i64", ctypes.c_int64),
                ("f32", ctypes.c_float), ("ptr", ctypes.c_uint64)]


class TileArg(CheckedStructure):
    """tile_arg (tile.h): one kernel parameter for tile_kernel_launch."""
    _fields_ = [("kind", ctypes.c_int), ("nstrides", ctypes.c_int),
                ("strides", ctypes.POINTER(ctypes.c_uint64)), ("u", _TileArgValue)]


def arg_i32(value):
    a = TileArg(kind=TILE_ARG_I32)
    a.u.i32 = value
    return a


def arg_i64(value):
    a = TileArg(kind=TILE_ARG_I64)
    a.u.i64 = value
    return a


def arg_f32(value):
    a = TileArg(kind=TILE_ARG_F32)
    a.u.f32 = value
    return a


def arg_ptr(address):
    """A device pointer (an integer, e.g. a torch tensor's data_ptr())."""
    a = TileArg(kind=TILE_ARG_PTR)
    a.u.ptr = address
    return a


# ---- prototypes ------------------------------------------------------------------------------

# The prototypes declare() gives, as C types, for the layout check's compile-time comparison
# with the headers (tests/gpu/check_ctypes_layout.py).
C_PROTOTYPES = {
    "tile_la_create": "tile_status (*)(int, tile_la **)",
    "tile_la_destroy": "void (*)(tile_la *)",
    "tile_la_error": "const char *(*)(const tile_la *)",
    "tile_la_create_with": "tile_status (*)(tile_rt *, tile_la **)",
    "tile_la_gdn_fwd_workspace": "tile_status (*)(tile_la *, const tile_la_fwd_args *, size_t *)",
    "tile_la_kda_fwd_workspace": "tile_status (*)(tile_la *, const tile_la_fwd_args *, size_t *)",
    "tile_la_kda_saved_setup_size": "tile_status (*)(const tile_la_fwd_args *, size_t *)",
    "tile_la_set_options": "tile_status (*)(tile_la *, const tile_la_options *)",
    "tile_la_get_options": "tile_status (*)(const tile_la *, tile_la_options *)",
    "tile_la_describe_plan":
        "tile_status (*)(tile_la *, const tile_la_fwd_args *, int, char *, size_t)",
    "tile_la_gdn_fwd": "tile_status (*)(tile_la *, const tile_la_fwd_args *)",
    "tile_la_kda_fwd": "tile_status (*)(tile_la *, const tile_la_fwd_args *)",
    "tile_la_fwd_check": "tile_status (*)(const tile_la_fwd_args *, int, char *, size_t)",
    "tile_la_kda_bwd_workspace":
        "tile_status (*)(tile_la *, const tile_la_bwd_args *, size_t *)",
    "tile_la_kda_bwd": "tile_status (*)(tile_la *, const tile_la_bwd_args *)",
    "tile_la_kda_bwd_check": "tile_status (*)(const tile_la_bwd_args *, char *, size_t)",
    "tile_la_gdn_bwd_workspace":
        "tile_status (*)(tile_la *, const tile_la_bwd_args *, size_t *)",
    "tile_la_gdn_bwd": "tile_status (*)(tile_la *, const tile_la_bwd_args *)",
    "tile_la_gdn_bwd_check": "tile_status (*)(const tile_la_bwd_args *, char *, size_t)",
    "tile_status_str": "const char *(*)(tile_status)",
}
RT_PROTOTYPES = {
    "tile_rt_create": "tile_status (*)(int, tile_rt **)",
    "tile_rt_destroy": "void (*)(tile_rt *)",
    "tile_rt_error": "const char *(*)(const tile_rt *)",
    "tile_status_str": "const char *(*)(tile_status)",
    "tile_module_create":
        "tile_status (*)(tile_rt *, const tile_embedded_module *, tile_module **)",
    "tile_module_destroy": "void (*)(tile_module *)",
    "tile_kernel_get": "tile_status (*)(tile_module *, const char *, tile_kernel **)",
    "tile_kernel_launch": "tile_status (*)(tile_kernel *, const tile_arg *, int, void *)",
}


def declare_runtime(rt):
    """argtypes/restype of the libtilert entry points used from Python."""
    P, vp, i = ctypes.POINTER, ctypes.c_void_p, ctypes.c_int
    rt.tile_status_str.argtypes, rt.tile_status_str.restype = [i], ctypes.c_char_p
    rt.tile_rt_create.argtypes, rt.tile_rt_create.restype = [i, P(vp)], i
    rt.tile_rt_destroy.argtypes, rt.tile_rt_destroy.restype = [vp], None
    rt.tile_rt_error.argtypes, rt.tile_rt_error.restype = [vp], ctypes.c_char_p
    rt.tile_module_create.argtypes, rt.tile_module_create.restype = [vp, vp, P(vp)], i
    rt.tile_module_destroy.argtypes, rt.tile_module_destroy.restype = [vp], None
    rt.tile_kernel_get.argtypes, rt.tile_kernel_get.restype = [vp, ctypes.c_char_p, P(vp)], i
    rt.tile_kernel_launch.argtypes = [vp, P(TileArg), i, vp]
    rt.tile_kernel_launch.restype = i


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
    la.tile_la_create_with.argtypes = [ctypes.c_void_p, P(ctypes.c_void_p)]
    la.tile_la_create_with.restype = ctypes.c_int
    for name in ("tile_la_gdn_fwd_workspace", "tile_la_kda_fwd_workspace"):
        fn = getattr(la, name)
        fn.argtypes = [ctypes.c_void_p, args_p, P(ctypes.c_size_t)]
        fn.restype = ctypes.c_int
    la.tile_la_kda_saved_setup_size.argtypes = [args_p, P(ctypes.c_size_t)]
    la.tile_la_kda_saved_setup_size.restype = ctypes.c_int
    la.tile_la_set_options.argtypes = [ctypes.c_void_p, P(TileLaOptions)]
    la.tile_la_set_options.restype = ctypes.c_int
    la.tile_la_get_options.argtypes = [ctypes.c_void_p, P(TileLaOptions)]
    la.tile_la_get_options.restype = ctypes.c_int
    la.tile_la_describe_plan.argtypes = [ctypes.c_void_p, args_p, ctypes.c_int,
                                         ctypes.c_char_p, ctypes.c_size_t]
    la.tile_la_describe_plan.restype = ctypes.c_int
    for name in ("tile_la_gdn_fwd", "tile_la_kda_fwd"):
        fn = getattr(la, name)
        fn.argtypes = [ctypes.c_void_p, args_p]
        fn.restype = ctypes.c_int
    # tile_la_fwd_check(args, kda, error, error_size): no handle or device needed
    la.tile_la_fwd_check.argtypes = [args_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_size_t]
    la.tile_la_fwd_check.restype = ctypes.c_int
    bwd_p = P(TileLaBwdArgs)
    for op in ("kda", "gdn"):
        fn = getattr(la, f"tile_la_{op}_bwd_workspace")
        fn.argtypes, fn.restype = [ctypes.c_void_p, bwd_p, P(ctypes.c_size_t)], ctypes.c_int
        fn = getattr(la, f"tile_la_{op}_bwd")
        fn.argtypes, fn.restype = [ctypes.c_void_p, bwd_p], ctypes.c_int
        fn = getattr(la, f"tile_la_{op}_bwd_check")
        fn.argtypes, fn.restype = [bwd_p, ctypes.c_char_p, ctypes.c_size_t], ctypes.c_int
    # libtilela depends on libtilert, so dlsym through its handle finds tile_status_str too
    la.tile_status_str.argtypes = [ctypes.c_int]
    la.tile_status_str.restype = ctypes.c_char_p
    if rt is not None:
        declare_runtime(rt)


# ---- finding and loading the libraries -------------------------------------------------------

class LibraryNotFoundError(RuntimeError):
    """No libtilela could be loaded; the message lists every place tried, in order."""


def _env(names, environ):
    """(name, value) of the first of `names` set to a non-empty value, or (None, None)."""
    for name in names:
        if environ.get(name):
            return name, environ[name]
    return None, None


def installed_prefix(package_dir=PACKAGE_DIR):
    """<prefix> when the package sits in <prefix>/lib*/pythonX.Y/{site,dist}-packages/tile_la,
    the layout of `pip install --prefix` and of a distribution's python; else None."""
    site = package_dir.parent
    pyver = site.parent
    libdir = pyver.parent
    if (site.name in ("site-packages", "dist-packages") and pyver.name.startswith("python")
            and libdir.name in ("lib", "lib64")):
        return libdir.parent
    return None


# GNUInstallDirs' choices: lib, lib64, and Debian's multiarch folder for the /usr prefix
_LIBDIRS = ("lib", "lib64") + ((f"lib/{sys.implementation._multiarch}",)
                               if getattr(sys.implementation, "_multiarch", None) else ())


def library_candidates(environ=None, package_dir=PACKAGE_DIR):
    """[(what, path)] in lookup order (steps 1-3 of the module docstring; step 4, the
    loader's search, has no path). An env var that names a file is the only candidate, listed
    even when the file is missing, so the error can say so."""
    environ = os.environ if environ is None else environ
    name, value = _env(LIBRARY_ENV, environ)
    if name:
        return [(f"${name}", Path(value))]
    out = [("bundled with the package", package_dir / "lib" / LA_NAME)]
    prefix = environ.get(PREFIX_ENV)
    if prefix:
        for lib in _LIBDIRS:
            out.append((f"${PREFIX_ENV}/{lib}", Path(prefix) / lib / LA_NAME))
    else:
        derived = installed_prefix(package_dir)
        prefixes = [] if derived is None else [derived]
        if derived is not None and derived.name == "local":
            prefixes.append(derived.parent)  # Debian's pip puts --prefix P under P/local
        for p in prefixes:
            for lib in _LIBDIRS:
                out.append((f"the installed prefix {p}", p / lib / LA_NAME))
    return out


def runtime_candidates(la_path, environ=None):
    """[(what, path)] of libtilert to preload for the libtilela at la_path."""
    environ = os.environ if environ is None else environ
    name, value = _env(RUNTIME_ENV, environ)
    if name:
        return [(f"${name}", Path(value))]
    here = Path(la_path).resolve().parent
    return ([("beside libtilela", here / n) for n in RT_NAMES]
            + [("the build tree's runtime/", here.parent / "runtime" / n) for n in RT_NAMES])


class Libraries:
    """The loaded libtilela (`la`, declared) and the libtilert it uses (`rt`, declared; the
    same handle as `la` when the loader resolved libtilert by itself), with their paths."""

    def __init__(self, la, rt, la_path, rt_path):
        self.la, self.rt, self.la_path, self.rt_path = la, rt, la_path, rt_path

    def status_name(self, status):
        return self.la.tile_status_str(status).decode(errors="replace")

    def __repr__(self):
        return f"Libraries(la={self.la_path!s}, rt={self.rt_path!s})"


def open_library(la_path, environ=None):
    """Loads this libtilela file (and its libtilert first), declared; OSError if it cannot be
    loaded. For tools that compare two builds in one process; the binding uses load()."""
    rt = rt_path = None
    for what, path in runtime_candidates(la_path, environ):
        if path.is_file():
            rt, rt_path = ctypes.CDLL(str(path), mode=ctypes.RTLD_GLOBAL), path
            break
        if what.startswith("$"):
            raise OSError(f"{what} names {path}, which does not exist")
    la = ctypes.CDLL(str(la_path))
    declare(la, rt)
    return Libraries(la, rt if rt is not None else la, Path(la_path), rt_path)


def find_and_open(environ=None, package_dir=PACKAGE_DIR):
    """The first loadable libtilela in the documented order, as Libraries."""
    environ = os.environ if environ is None else environ
    tried = []
    for what, path in library_candidates(environ, package_dir):
        if not path.is_file():
            tried.append(f"  {what}: {path} (no such file)")
            if what.startswith(tuple(f"${n}" for n in LIBRARY_ENV)):
                break                 # a file named explicitly: a typo must not fall through
            continue
        try:
            return open_library(path, environ)
        except OSError as e:
            tried.append(f"  {what}: {path} ({e})")
            break                     # a library that exists but fails is the answer
    else:
        try:                          # 4: the dynamic loader's search path
            la = ctypes.CDLL(LA_NAME)
            declare(la)
            return Libraries(la, la, Path(LA_NAME), None)
        except OSError as e:
            tried.append(f"  the dynamic loader (LD_LIBRARY_PATH, ldconfig): {LA_NAME} ({e})")
    raise LibraryNotFoundError(
        "tile_la: cannot load libtilela; tried, in order:\n" + "\n".join(tried) + "\n"
        f"Build it (cmake --build build) and set {LIBRARY_ENV[0]}=<build>/kernels/{LA_NAME}, "
        f"set {PREFIX_ENV} to an install prefix, or copy the libraries into "
        f"{package_dir / 'lib'} before installing the package.")


_lock = threading.Lock()
_loaded = None


def load():
    """The process-wide Libraries, located and loaded on first use (thread-safe)."""
    global _loaded
    if _loaded is None:
        with _lock:
            if _loaded is None:
                _loaded = find_and_open()
    return _loaded


def open_runtime(path=None):
    """libtilert alone (for the examples' benchmarks): the given file, else $TILE_RT_LIBRARY,
    else the one beside the located libtilela. Declared."""
    if path is None:
        name, value = _env(RUNTIME_ENV, os.environ)
        path = value if name else None
    if path is None:
        libs = load()
        rt = libs.rt
    else:
        rt = ctypes.CDLL(str(path), mode=ctypes.RTLD_GLOBAL)
    declare_runtime(rt)
    return rt


class Runtime:
    """A libtilert runtime on one device: loads kernel modules embedded in a shared library
    built by tile_add_kernel_library(... SHARED) and launches them on a given stream. The
    runtime retains the device's primary context, as torch does, so pointers and streams
    are shared with torch."""

    def __init__(self, kernel_library, device=0, runtime_library=None):
        self.rt_lib = open_runtime(runtime_library)
        self.kernels = ctypes.CDLL(str(kernel_library))
        self.rt = ctypes.c_void_p()
        self._check(self.rt_lib.tile_rt_create(device, ctypes.byref(self.rt)), "tile_rt_create")

    def _check(self, status, what):
        if status != TILE_OK:
            detail = ""
            if self.rt.value:
                detail = self.rt_lib.tile_rt_error(self.rt).decode(errors="replace")
            name = self.rt_lib.tile_status_str(status).decode(errors="replace")
            raise RuntimeError(f"{what} failed: {name}: {detail}")

    def kernel(self, module, name):
        """The kernel `name` of the embedded module tile_module_<module>."""
        embedded = ctypes.c_char.in_dll(self.kernels, "tile_module_" + module)
        mod = ctypes.c_void_p()
        self._check(self.rt_lib.tile_module_create(self.rt, ctypes.byref(embedded),
                                                   ctypes.byref(mod)), "tile_module_create")
        k = ctypes.c_void_p()
        self._check(self.rt_lib.tile_kernel_get(mod, name.encode(), ctypes.byref(k)),
                    "tile_kernel_get")
        return k

    def launch(self, kernel, args, stream=None):
        """args: TileArg values (arg_i32, arg_ptr, ...); stream: a CUstream as an integer."""
        arr = (TileArg * len(args))(*args)
        self._check(self.rt_lib.tile_kernel_launch(kernel, arr, len(args), stream),
                    "tile_kernel_launch")

