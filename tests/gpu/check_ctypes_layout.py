#!/usr/bin/env python3
"""check_ctypes_layout.py: the ctypes structures of the Python bindings against the C headers.

Runs on the CPU, needs gcc and no torch:
  1. Generates a small C program from the ctypes declarations (python/tile_la/_abi.py,
     tests/gpu/ref_ctypes.py) that prints sizeof/offsetof of every field of
     tile_la_fwd_args, ref_opts, ref_problem, ref_in64, ref_fwd64, ref_cmp and the
     enum values and sizes, compiles it against the real headers and compares. A field
     name that the C struct lacks fails the compile; a missing or mistyped field shows
     as a size or offset difference.
  2. If the reference library can be had (build/tests/ref/libtileref_shared.so, env
     TILE_REF_LIB, or --build-ref to compile tests/ref/*.c into a temporary .so with
     gcc), calls ref_recurrent_fwd through the ctypes structures on tiny problems
     (GDN and KDA, GVA, varlen with an empty sequence, l2norm, beta sigmoid, both gate
     forms, state_v_first) and compares with a plain-Python recurrence, and checks
     ref_compare_f64. This proves the structures are passed the way the C side reads
     them.
  3. If libtilela can be loaded (env TILE_LA_LIBRARY or TILE_LA_LIB, else tile_la/_abi.py's
     lookup, with libtilert from the same build), drives its CPU-only entry points through the
     ctypes structs: tile_la_fwd_check (no handle) and the workspace queries must accept a
     valid argument set and reject one bad field at a time, the workspace size must react to
     the fields it depends on, and the options must round-trip. The queries take a handle:
     on the fake driver that FAKE_CUDA_LIBRARY names (tests/runtime/fake_cuda.c, loading any
     cubin with FAKE_CUDA_ANY_IMAGE=1), else on device 0. No GPU is needed with the fake.

usage: python3 tests/gpu/check_ctypes_layout.py [--build-ref] [--cc gcc]
Exit 0 when everything matches.
"""
import argparse
import ctypes
import importlib.util
import math
import os
import random
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
INCLUDES = [REPO / "kernels" / "include", REPO / "runtime" / "include", REPO / "tests" / "ref"]


def load_module(name, path):
    """Imports one file as a module: this checkout's _abi.py (the package's ctypes layer)
    and ref_ctypes.py, since they are compared with this checkout's headers, whatever
    tile_la may be installed."""
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


abi = load_module("tile_la_abi", REPO / "python" / "tile_la" / "_abi.py")
refc = load_module("ref_ctypes", REPO / "tests" / "gpu" / "ref_ctypes.py")

STRUCTS = [  # (C type name, ctypes class)
    ("tile_la_fwd_args", abi.TileLaFwdArgs),
    ("tile_la_bwd_args", abi.TileLaBwdArgs),
    ("ref_opts", refc.RefOpts),
    ("ref_problem", refc.RefProblem),
    ("ref_in64", refc.RefIn64),
    ("ref_fwd64", refc.RefFwd64),
    ("ref_cmp", refc.RefCmp),
    ("tile_arg", abi.TileArg),
    ("tile_la_options", abi.TileLaOptions),
]
CONSTANTS = {  # C expression -> the value the Python side uses
    "TILE_LA_F32": abi.TILE_LA_F32, "TILE_LA_BF16": abi.TILE_LA_BF16,
    "TILE_LA_F16": abi.TILE_LA_F16,
    "TILE_ARG_I32": abi.TILE_ARG_I32, "TILE_ARG_I64": abi.TILE_ARG_I64,
    "TILE_ARG_F32": abi.TILE_ARG_F32, "TILE_ARG_PTR": abi.TILE_ARG_PTR, "TILE_OK": abi.TILE_OK,
    "TILE_LA_AUTO": abi.TILE_LA_AUTO, "TILE_LA_ON": abi.TILE_LA_ON,
    "TILE_LA_OFF": abi.TILE_LA_OFF,
    "REF_OK": refc.REF_OK, "REF_GDN": refc.REF_GDN, "REF_KDA": refc.REF_KDA,
    "REF_F32": refc.REF_F32, "REF_BF16": refc.REF_BF16, "REF_F16": refc.REF_F16,
    "sizeof(tile_la_dtype)": ctypes.sizeof(ctypes.c_int),
    "sizeof(ref_op)": ctypes.sizeof(ctypes.c_int),
    "sizeof(ref_dtype)": ctypes.sizeof(ctypes.c_int),
    "sizeof(ref_status)": ctypes.sizeof(ctypes.c_int),
    "sizeof(tile_status)": ctypes.sizeof(ctypes.c_int),
    "sizeof(bool)": ctypes.sizeof(ctypes.c_bool),
    "sizeof(size_t)": ctypes.sizeof(ctypes.c_size_t),
}


def c_field(name):
    return "pass" if name == "pass_" else name


def c_prototypes():
    """A translation unit (compiled, never linked) that assigns every function the
    binding declares to a pointer of the type the binding assumes: a prototype that
    differs from the header is an incompatible-pointer-type error (-Werror)."""
    lines = ['#include "tile_la.h"']
    protos = list(abi.C_PROTOTYPES.items()) + list(abi.RT_PROTOTYPES.items())
    for i, (fn, ctype) in enumerate(protos):
        lines.append(ctype.replace("(*)", f"(*proto_{i})", 1) + f" = {fn};")
    return "\n".join(lines) + "\n"


def c_program():
    lines = ["#include <stdio.h>", "#include <stddef.h>", "#include <stdbool.h>",
             '#include "tile_la.h"', '#include "ref.h"', "int main(void) {"]
    for cname, cls in STRUCTS:
        lines.append(f'  printf("size {cname} %zu\\n", sizeof({cname}));')
        for fname, _ in cls._fields_:
            f = c_field(fname)
            lines.append(f'  printf("field {cname}.{fname} %zu %zu\\n", offsetof({cname}, {f}), '
                         f'sizeof((({cname} *)0)->{f}));')
    for expr in CONSTANTS:
        lines.append(f'  printf("const {expr.replace(" ", "")} %lld\\n", (long long)({expr}));')
    lines += ["  return 0;", "}"]
    return "\n".join(lines) + "\n"


def c_layout(cc, tmp):
    protos = tmp / "protos.c"
    protos.write_text(c_prototypes())
    cmd = [cc, "-std=c11", "-fsyntax-only", "-Werror=incompatible-pointer-types",
           "-Werror=discarded-qualifiers", *[f"-I{p}" for p in INCLUDES], str(protos)]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"the binding's function prototypes differ from the headers:\n"
                 f"{' '.join(cmd)}\n{r.stderr}")
    src, exe = tmp / "layout.c", tmp / "layout"
    src.write_text(c_program())
    cmd = [cc, "-std=c11", *[f"-I{p}" for p in INCLUDES], str(src), "-o", str(exe)]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"compiling the layout program failed:\n{' '.join(cmd)}\n{r.stderr}")
    out = subprocess.run([str(exe)], capture_output=True, text=True, check=True).stdout
    table = {}
    for line in out.splitlines():
        kind, key, *vals = line.split()
        table[(kind, key)] = tuple(int(v) for v in vals)
    return table


def check_layouts(table):
    errors = 0
    for cname, cls in STRUCTS:
        (csize,) = table[("size", cname)]
        ok = csize == ctypes.sizeof(cls)
        errors += not ok
        print(f"{'ok ' if ok else 'BAD'} sizeof({cname}) C {csize} ctypes {ctypes.sizeof(cls)}")
        for fname, ftype in cls._fields_:
            coff, csz = table[("field", f"{cname}.{fname}")]
            poff, psz = getattr(cls, fname).offset, ctypes.sizeof(ftype)
            if (coff, csz) != (poff, psz):
                errors += 1
                print(f"BAD {cname}.{fname}: C offset {coff} size {csz}, "
                      f"ctypes offset {poff} size {psz}")
    for expr, value in CONSTANTS.items():
        (cval,) = table[("const", expr.replace(" ", ""))]
        ok = cval == value
        errors += not ok
        print(f"{'ok ' if ok else 'BAD'} {expr} C {cval} Python {value}")
    print(f"ok  {len(abi.C_PROTOTYPES) + len(abi.RT_PROTOTYPES)} function prototypes match "
          "the headers")
    return errors


# ---- the reference through ctypes, against a plain-Python recurrence ----------------------

def softplus(x):
    return x if x > 20 else math.log1p(math.exp(x))


def sigmoid(x):
    return 1 / (1 + math.exp(-x))


def py_recurrent(p, q, k, v, g, beta, h0, A_log=None, dt_bias=None, l2=False,
                 beta_sig=False, neg=False, gate=False, lb=None, vfirst=False, scale=0.0):
    """Spec section 1/2 in plain Python (lists of floats, dense row-major)."""
    kda, B, T, H, HV, D = p["kda"], p["B"], p["T"], p["H"], p["HV"], p["D"]
    cu = p["cu"] or [b * T for b in range(B + 1)]
    s = scale or D ** -0.5
    G = HV // H
    o = [0.0] * (B * T * HV * D)
    ht = [0.0] * ((len(cu) - 1) * HV * D * D)
    for n in range(len(cu) - 1):
        bos, eos = cu[n], cu[n + 1]
        for hv in range(HV):
            h = hv // G
            S = [[0.0] * D for _ in range(D)]  # S[k][v]
            if h0 is not None:
                for a in range(D):
                    for b in range(D):
                        idx = ((n * HV + hv) * D + a) * D + b
                        if vfirst:
                            S[b][a] = h0[idx]
                        else:
                            S[a][b] = h0[idx]
            for t in range(bos, eos):
                qt = q[(t * H + h) * D:(t * H + h + 1) * D]
                kt = k[(t * H + h) * D:(t * H + h + 1) * D]
                if l2:
                    qn = math.sqrt(sum(x * x for x in qt) + 1e-6)
                    kn = math.sqrt(sum(x * x for x in kt) + 1e-6)
                    qt, kt = [x / qn for x in qt], [x / kn for x in kt]
                vt = v[(t * HV + hv) * D:(t * HV + hv + 1) * D]
                bt = beta[t * HV + hv]
                if beta_sig:
                    bt = sigmoid(bt) * (2 if neg else 1)
                if kda:
                    graw = g[(t * HV + hv) * D:(t * HV + hv + 1) * D]
                else:
                    graw = [g[t * HV + hv]] * D
                gt = []
                for c in range(D):
                    x = graw[c]
                    if not gate:
                        gt.append(x)
                        continue
                    bias = 0.0
                    if dt_bias is not None:
                        bias = dt_bias[hv * D + c] if kda else dt_bias[hv]
                    x += bias
                    if lb is not None:
                        a = math.exp(A_log[hv]) if A_log is not None else 1.0
                        gt.append(lb * sigmoid(a * x))
                    else:
                        gt.append(-math.exp(A_log[hv]) * softplus(x))
                for a in range(D):
                    e = math.exp(gt[a])
                    S[a] = [e * x for x in S[a]]
                pred = [sum(S[a][b] * kt[a] for a in range(D)) for b in range(D)]
                vn = [bt * (vt[b] - pred[b]) for b in range(D)]
                for a in range(D):
                    S[a] = [S[a][b] + kt[a] * vn[b] for b in range(D)]
                for b in range(D):
                    o[(t * HV + hv) * D + b] = s * sum(S[a][b] * qt[a] for a in range(D))
            for a in range(D):
                for b in range(D):
                    idx = ((n * HV + hv) * D + a) * D + b
                    ht[idx] = S[b][a] if vfirst else S[a][b]
    return o, ht


def darr(values):
    return (ctypes.c_double * max(1, len(values)))(*values)


def ref_case(lib, rng, kda, B, T, H, HV, D, cu=None, **flags):
    """One tiny problem through ref_recurrent_fwd and through py_recurrent."""
    N = len(cu) - 1 if cu else B
    Tt = cu[-1] if cu else T
    if cu:
        B = 1
    def randn(n):
        return [rng.gauss(0, 1) for _ in range(n)]
    q, k, v = randn(B * Tt * H * D), randn(B * Tt * H * D), randn(B * Tt * HV * D)
    g = [-abs(x) for x in randn(B * Tt * HV * (D if kda else 1))]
    beta = [rng.random() for _ in range(B * Tt * HV)]
    h0 = randn(N * HV * D * D)
    A_log = randn(HV) if flags.get("gate") and not flags.get("no_alog") else None
    dt_bias = randn(HV * (D if kda else 1)) if flags.get("gate") else None
    lb = flags.get("lb")
    vfirst = flags.get("vfirst", False)
    scale = flags.get("scale", 0.0)
    p = refc.make_problem(refc.REF_KDA if kda else refc.REF_GDN, B, Tt, H, HV, D, cu=cu,
                          threads=2, scale=scale,
                          use_qk_l2norm_in_kernel=flags.get("l2", False),
                          use_beta_sigmoid_in_kernel=flags.get("beta_sig", False),
                          allow_neg_eigval=flags.get("neg", False),
                          use_gate_in_kernel=flags.get("gate", False),
                          has_lower_bound=lb is not None, lower_bound=lb or 0.0,
                          state_v_first=vfirst)
    arrays = {"q": darr(q), "k": darr(k), "v": darr(v), "g": darr(g), "beta": darr(beta),
              "h0": darr(h0)}
    if A_log is not None:
        arrays["A_log"] = darr(A_log)
    if dt_bias is not None:
        arrays["dt_bias"] = darr(dt_bias)
    o_c, ht_c = darr([0.0] * (B * Tt * HV * D)), darr([0.0] * (N * HV * D * D))
    refc.recurrent_fwd(lib, p, {k_: ctypes.addressof(a) for k_, a in arrays.items()},
                       {"o": ctypes.addressof(o_c), "ht": ctypes.addressof(ht_c)})
    pp = {"kda": kda, "B": B, "T": Tt, "H": H, "HV": HV, "D": D, "cu": cu}
    o_py, ht_py = py_recurrent(pp, q, k, v, g, beta, h0, A_log, dt_bias, flags.get("l2", False),
                               flags.get("beta_sig", False), flags.get("neg", False),
                               flags.get("gate", False), lb, vfirst, scale)
    err_o = max((abs(a - b) for a, b in zip(o_c, o_py)), default=0.0)
    err_h = max((abs(a - b) for a, b in zip(ht_c, ht_py)), default=0.0)
    scale_o = max((abs(x) for x in o_py), default=1.0) or 1.0
    scale_h = max((abs(x) for x in ht_py), default=1.0) or 1.0
    return err_o / scale_o, err_h / scale_h


def build_ref(cc, tmp):
    srcs = [s for s in sorted((REPO / "tests" / "ref").glob("ref_*.c"))
            if s.name != "ref_testutil.c"]
    out = tmp / "libtileref_shared.so"
    cmd = [cc, "-std=c11", "-O2", "-ffp-contract=off", "-shared", "-fPIC", "-pthread",
           f"-I{REPO / 'tests' / 'ref'}", *map(str, srcs), "-o", str(out), "-lm"]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"building the reference failed:\n{' '.join(cmd)}\n{r.stderr}")
    return out


def check_reference(lib):
    rng = random.Random(7)
    cases = [  # (label, kda, B, T, H, HV, D, cu, flags)
        ("gdn fixed", False, 2, 5, 1, 1, 4, None, {}),
        ("gdn GVA varlen empty seq", False, 1, 0, 1, 2, 4, [0, 3, 3, 7], {"scale": 0.3}),
        ("gdn gate softplus l2", False, 1, 6, 2, 4, 4, None, {"gate": True, "l2": True}),
        ("gdn beta sigmoid neg", False, 2, 4, 1, 2, 4, None, {"beta_sig": True, "neg": True}),
        ("kda fixed v-first", True, 2, 5, 1, 1, 4, None, {"vfirst": True}),
        ("kda GVA varlen", True, 1, 0, 1, 3, 4, [0, 2, 2, 6], {"l2": True}),
        ("kda gate softplus", True, 1, 6, 1, 2, 4, None, {"gate": True}),
        ("kda gate lower bound", True, 1, 6, 2, 2, 4, None, {"gate": True, "lb": -5.0}),
        ("kda gate lb no A_log", True, 1, 5, 1, 1, 4, None,
         {"gate": True, "lb": -3.0, "no_alog": True}),
    ]
    errors = 0
    for label, kda, B, T, H, HV, D, cu, flags in cases:
        eo, eh = ref_case(lib, rng, kda, B, T, H, HV, D, cu, **flags)
        ok = eo < 1e-12 and eh < 1e-12
        errors += not ok
        print(f"{'ok ' if ok else 'BAD'} ref_recurrent_fwd {label}: rel max err o {eo:.1e} ht {eh:.1e}")
    # FLA's metric: identical arrays pass, a 1% perturbation has ratio about 0.01.
    a = darr([1.0, -2.0, 3.0, 0.5])
    b = darr([1.01, -2.02, 3.03, 0.505])
    c = refc.compare_f64(lib, ctypes.addressof(a), ctypes.addressof(b), 4, 0.005)
    ok = abs(c.ratio_err - 0.01) < 1e-6 and not c.pass_ and not c.has_nan and c.worst == 2
    errors += not ok
    print(f"{'ok ' if ok else 'BAD'} ref_compare_f64: ratio {c.ratio_err:.6f} abs {c.abs_err:.4f} "
          f"worst {c.worst} pass {c.pass_}")
    c = refc.compare_f64(lib, ctypes.addressof(a), ctypes.addressof(a), 4, 0.005)
    ok = c.pass_ and c.abs_err == 0
    errors += not ok
    print(f"{'ok ' if ok else 'BAD'} ref_compare_f64 identical: pass {c.pass_}")
    return errors


# ---- libtilela's CPU-only entry points through the ctypes struct --------------------------

def load_tilela():
    """(libtilela, path) through the package's layer: the file $TILE_LA_LIBRARY (or
    $TILE_LA_LIB) names, else the package's documented lookup; (None, why) if absent."""
    named = os.environ.get("TILE_LA_LIBRARY") or os.environ.get("TILE_LA_LIB")
    try:
        libs = abi.open_library(named) if named else abi.find_and_open()
    except (OSError, abi.LibraryNotFoundError) as e:
        return None, e
    return libs, libs.la_path


class RtOptions(ctypes.Structure):
    """tile_rt_options (tile.h), for a runtime on the fake driver."""
    _fields_ = [("device", ctypes.c_int), ("context", ctypes.c_void_p),
                ("allocator", ctypes.c_void_p), ("driver_path", ctypes.c_char_p),
                ("error", ctypes.c_char_p), ("error_size", ctypes.c_size_t)]


def make_handle(libs):
    """A tile_la on the fake driver FAKE_CUDA_LIBRARY names, else on device 0; (handle, why)."""
    la, rt = libs.la, libs.rt
    handle = ctypes.c_void_p()
    fake = os.environ.get("FAKE_CUDA_LIBRARY")
    if not fake:
        st = la.tile_la_create(0, ctypes.byref(handle))
        return (handle, "device 0") if st == 0 else (None, la.tile_la_error(None).decode())
    rt.tile_rt_create_ex.argtypes = [ctypes.POINTER(RtOptions), ctypes.POINTER(ctypes.c_void_p)]
    rt.tile_rt_create_ex.restype = ctypes.c_int
    opt = RtOptions(driver_path=fake.encode())
    runtime = ctypes.c_void_p()
    if rt.tile_rt_create_ex(ctypes.byref(opt), ctypes.byref(runtime)) != 0:
        return None, f"tile_rt_create_ex on {fake} failed"
    if la.tile_la_create_with(runtime, ctypes.byref(handle)) != 0:
        return None, la.tile_la_error(None).decode()
    return handle, f"the fake driver {fake}"


def valid_args(kda):
    """A plausible argument set with fake, aligned device addresses (nothing is launched)."""
    a = abi.TileLaFwdArgs()
    a.batch, a.seq_len, a.num_heads, a.num_v_heads, a.head_dim = 1, 1000, 2, 4, 128
    a.dtype = abi.TILE_LA_BF16
    # 2^32 apart: libtilela refuses outputs that overlap any other buffer
    a.q, a.k, a.v, a.o, a.g, a.beta = (i << 32 for i in range(1, 7))
    a.initial_state, a.final_state = 7 << 32, 8 << 32
    a.cu_seqlens, a.num_seqs = 9 << 32, 3
    a.use_qk_l2norm_in_kernel = 1
    a.use_gate_in_kernel, a.A_log, a.dt_bias = 1, 10 << 32, 11 << 32
    if kda:
        a.use_lower_bound, a.lower_bound = 1, -5.0
    a.state_v_first = 1
    a.chunk_states, a.num_chunk_states = 12 << 32, 19
    a.workspace, a.stream = 13 << 32, 0x1234
    return a


def ws_bytes(la, h, a, kda):
    n = ctypes.c_size_t(0)
    fn = la.tile_la_kda_fwd_workspace if kda else la.tile_la_gdn_fwd_workspace
    st = fn(h, ctypes.byref(a), ctypes.byref(n))
    return st, n.value


def fwd_check(la, a, kda):
    """(status, message) of tile_la_fwd_check."""
    msg = ctypes.create_string_buffer(512)
    st = la.tile_la_fwd_check(ctypes.byref(a), kda, msg, len(msg))
    return st, msg.value.decode(errors="replace")


def check_tilela(libs):
    errors = 0
    la = libs.la

    def expect(label, got, want):
        nonlocal errors
        ok = got == want
        errors += not ok
        print(f"{'ok ' if ok else 'BAD'} libtilela {label}: {got} (want {want})")

    h, where = make_handle(libs)
    if h is None:
        print(f"BAD no tile_la handle: {where}")
        return 1
    print(f"libtilela handle on {where}")
    # the options round-trip field by field (the struct's layout, through the C side)
    opt = abi.TileLaOptions(**{f: i + 2 for i, (f, _) in enumerate(abi.TileLaOptions._fields_)
                               if f in ("gdn_segments", "kda_segments", "kda_split")})
    opt.kda_wide, opt.kda_prep_nocb, opt.bwd_wide = abi.TILE_LA_ON, abi.TILE_LA_OFF, abi.TILE_LA_ON
    opt.exact_state = abi.TILE_LA_ON
    expect("set_options", la.tile_la_set_options(h, ctypes.byref(opt)), 0)
    got = abi.TileLaOptions()
    expect("get_options", la.tile_la_get_options(h, ctypes.byref(got)), 0)
    expect("options round-trip", [getattr(got, f) for f, _ in got._fields_],
           [getattr(opt, f) for f, _ in opt._fields_])
    # without context parallelism the query's size is the least any handle needs, the one
    # tile_la_fwd_check (no handle) holds workspace_size to
    expect("options without segments", la.tile_la_set_options(
        h, ctypes.byref(abi.TileLaOptions(gdn_segments=abi.TILE_LA_OFF,
                                          kda_segments=abi.TILE_LA_OFF))), 0)

    for kda in (0, 1):
        op = "kda" if kda else "gdn"
        a = valid_args(kda)
        st, need = ws_bytes(la, h, a, kda)
        expect(f"{op} workspace query status", st, 0)
        a.workspace_size = need
        expect(f"{op} valid arguments", fwd_check(la, a, kda), (0, ""))
        # the workspace must depend on the fields it is sized from (GDN's holds 64 values
        # per token and head, and per-token scalars: not head_dim)
        sized_by = [("seq_len", 3000), ("num_v_heads", 8), ("num_seqs", 300)]
        if kda:
            sized_by.append(("head_dim", 64))
        for field, value in sized_by:
            b = valid_args(kda)
            setattr(b, field, value)
            st, n = ws_bytes(la, h, b, kda)
            ok = st == 0 and n != need
            errors += not ok
            print(f"{'ok ' if ok else 'BAD'} libtilela {op} workspace follows {field}: "
                  f"{need} -> {n} (status {st})")
        # one bad field at a time, from the first to the last of the struct: the message
        # must name that very field, which proves the C side reads it where we write it
        bad = [("dtype", 0), ("gate_dtype", abi.TILE_LA_F16), ("beta_dtype", 7),
               ("head_dim", 96), ("batch", 0), ("seq_len", -1), ("num_v_heads", 3), ("scale", float("inf")), ("num_seqs", 0),
               ("allow_neg_eigval", 1), ("lower_bound", 1.0) if kda else ("use_lower_bound", 1),
               ("num_chunk_states", -1), ("q", 0x10008), ("o", 0), ("A_log", 0) if not kda
               else ("beta", 0), ("chunk_states", 0xC0008), ("workspace", 0x100080),
               ("workspace_size", need - 1)]
        for field, value in bad:
            b = valid_args(kda)
            b.workspace_size = need
            setattr(b, field, value)
            st, msg = fwd_check(la, b, kda)
            ok = st != 0 and msg.startswith(field + ":")
            errors += not ok
            print(f"{'ok ' if ok else 'BAD'} libtilela {op} rejects {field} = {value}: "
                  f"status {st}, \"{msg}\"")
    return errors


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cc", default="gcc")
    ap.add_argument("--build-ref", action="store_true",
                    help="compile tests/ref/*.c into a temporary shared library")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        errors = check_layouts(c_layout(args.cc, tmp))
        path = build_ref(args.cc, tmp) if args.build_ref else refc.lib_path()
        if path.exists():
            print(f"reference library: {path}")
            errors += check_reference(refc.load(path))
        else:
            print(f"reference library {path} not found: skipped the call checks "
                  "(build it, set TILE_REF_LIB or pass --build-ref)")
        libs, la_path = load_tilela()
        if libs is None:
            print(f"libtilela not loaded ({la_path}): skipped the libtilela checks "
                  "(set TILE_LA_LIBRARY)")
        else:
            print(f"libtilela: {la_path}")
            errors += check_tilela(libs)
    print("PASS" if errors == 0 else f"FAIL: {errors} mismatches")
    return 0 if errors == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
