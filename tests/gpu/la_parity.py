#!/usr/bin/env python3
"""la_parity.py: GPU parity of the prebuilt GDN/KDA forward kernels (python/tile_la).

Every forward case of FLA's test tables (spec-gdn-kda.md 7.2 KDA test_chunk and
test_chunk_varlen, 7.3 GDN test_chunk and test_chunk_varlen), inputs made with FLA's
recipes (rand/randn, normalize, logsigmoid / normalizer, mask_p,
-1000 masked gates, gate in kernel with A_log and dt_bias, safe_gate clamps and
lower_bound -5, ...), plus our extras: T = 1, an empty sequence inside a varlen batch,
a 1M-token varlen batch, state_v_first, beta sigmoid, the other gate forms, GVA, the
chunk states of return_intermediate_states (shape and values), and CUDA-graph capture.
Cases the kernels do not support (D not 64/128, chunk size 32) are listed as such.
Inputs are drawn from a fresh seed every run; the summary line names it, and
TILE_TEST_SEED=n repeats that run.
cp_slow_cases: segments forced to 1, 2 and 7 chunks on gates that barely decay (g = 0 on
a quarter of the heads), where every segment start must be exact.

Each case is judged against the fp64 naive recurrence of the C reference
(build/tests/ref/libtileref_shared.so, ref_recurrent_fwd, on the inputs exactly as the
kernels see them) with FLA's metric (spec 7.1: abs err <= 1e-6, else RMS(ref - got) /
(RMS(ref) + 1e-8) < tolerance), for o and the final state. Ours runs three times: the
outputs must be finite and bitwise identical (before each run the caching allocator is
handed back blocks of the outputs' sizes filled with 0xFF, so an unwritten output most
likely reads NaN). When FLA's package imports (FLA_DISABLE_BACKEND_DISPATCH=1 is set
first), FLA runs on the same inputs and its error against the same reference is shown,
with a column saying whether ours is at least as close ("worse than FLA" is counted,
but only tolerance, finiteness, determinism, shapes and graph replay decide the exit
status).

usage: python3 tests/gpu/la_parity.py [--quick] [--out FILE.md] [--no-fla] [-k SUBSTR]
                                      [--part I/N]
with the tile_la package importable (PYTHONPATH=python from the checkout, or pip install
--no-build-isolation ./python) and its library found (TILE_LA_LIBRARY=build/kernels/libtilela.so;
tile_la/_abi.py lists the places looked at).
Exit 0 only when every supported case passes.
"""
import argparse
import datetime
import math
import os
import random
import sys
import time
from dataclasses import dataclass, replace
from pathlib import Path

import torch
import torch.nn.functional as F

import ref_ctypes as refc  # beside this file: the script's folder is on sys.path

# Fresh inputs on every run (TILE_TEST_SEED repeats one); each case starts from the seed.
SEED = int(os.environ.get("TILE_TEST_SEED") or time.time_ns() % (1 << 31))

FP16, BF16 = torch.float16, torch.bfloat16
TOL = 0.005            # FLA's o / ht ratio in every forward table used here
POISON_BYTE = 0xFF     # 0xFFFF (bf16/fp16) and 0xFFFFFFFF (fp32) are NaN


# ---- cases ---------------------------------------------------------------------------------

@dataclass
class Case:
    suite: str                 # FLA test function, or "extra"
    op: str                    # "gdn" or "kda"
    recipe: str                # input generator, see RECIPES
    B: int = 1
    T: int = 0                 # fixed length; varlen: taken from cu
    H: int = 1
    HV: int = 1
    D: int = 64
    scale: float = None        # None: FLA's default D^-1/2
    norm: float = 1.0          # gate_logit_normalizer
    mask_p: float = 0.0
    l2: bool = False           # use_qk_l2norm_in_kernel
    gate: bool = False         # use_gate_in_kernel
    dtype: torch.dtype = FP16
    safe_gate: bool = False
    disable_recompute: bool = False
    C: int = 64
    cu: tuple = None           # cu_seqlens offsets (varlen), B = 1
    beta_sigmoid: bool = False
    neg_eigval: bool = False
    state_v_first: bool = False
    lower_bound: float = None  # extra cases; KDA's safe_gate recipe sets -5 itself
    no_alog: bool = False      # lower-bound gate without A_log
    dt_bias: bool = True       # GDN gate: with dt_bias
    g_dtype: torch.dtype = None     # g and beta cast to these before the call (None: the
    beta_dtype: torch.dtype = None  # recipe's); see gate_dtype_cases
    return_h: bool = False     # return_intermediate_states: check h
    graph: bool = False        # also capture ours in a CUDA graph and replay
    quick: bool = False        # part of --quick
    label: str = ""            # extra description
    cp: int = None             # run ours with TILE_LA_{GDN,KDA}_CP=cp (segments of cp chunks)
    first: int = None          # and TILE_LA_FIRST_SEG=first (the chained path's first segment)
    wide: int = None           # run ours with TILE_LA_KDA_W=wide (1: chunk_recur_w, both value
                               # slices of a head in one CTA, whatever the grid)
    split: int = None          # run ours with TILE_LA_KDA_SPLIT=split (the split in time: the
                               # first `split` chunks of each sequence, then the rest)

    @property
    def name(self):
        T = f"cu{list(self.cu)}" if self.cu and len(self.cu) <= 8 else (
            f"N{len(self.cu) - 1} T{self.cu[-1]}" if self.cu else f"B{self.B} T{self.T}")
        parts = [self.op, T, f"H{self.H}/{self.HV}", f"D{self.D}"]
        if self.scale is not None:
            parts.append(f"s{self.scale:g}")
        if self.norm != 1:
            parts.append(f"n{self.norm:g}")
        if self.mask_p:
            parts.append(f"m{self.mask_p:g}")
        flags = [("l2", self.l2), ("gate", self.gate), ("sg", self.safe_gate),
                 ("dr", self.disable_recompute), ("bsig", self.beta_sigmoid),
                 ("neg", self.neg_eigval), ("vfirst", self.state_v_first),
                 ("noAlog", self.no_alog), ("h", self.return_h), ("graph", self.graph)]
        parts += [f for f, on in flags if on]
        if self.lower_bound is not None:
            parts.append(f"lb{self.lower_bound:g}")
        for what, dt in (("g", self.g_dtype), ("beta", self.beta_dtype)):
            if dt is not None:
                parts.append(f"{what}:" + {FP16: "fp16", BF16: "bf16"}.get(dt, "fp32"))
        if self.C != 64:
            parts.append(f"C{self.C}")
        if self.cp is not None:
            parts.append(f"cp{self.cp}")
        if self.wide is not None:
            parts.append(f"w{self.wide}")
        if self.split is not None:
            parts.append(f"split{self.split}")
        parts.append("bf16" if self.dtype == BF16 else "fp16")
        if self.label:
            parts.append(self.label)
        return " ".join(parts)

    def unsupported(self):
        """Why our kernels cannot run this case, or None."""
        why = []
        if self.D not in (64, 128):
            why.append(f"D={self.D}")
        if self.C != 64:
            why.append(f"C={self.C}")
        return ", ".join(why) or None


def kda_fla_cases():
    """spec 7.2, test_chunk and test_chunk_varlen."""
    rows = [  # (B, T, H, HV, D, scale, norm, mask_p, l2, gate, dtype, safe_gate, dr, C)
        (1, 63, 1, 1, 64, 1, 1, 0, 0, 0, FP16, 1, 0, 64),
        (2, 500, 3, 3, 60, 1, 1, 0, 0, 0, FP16, 1, 1, 64),
        (2, 1000, 3, 3, 64, 0.1, 1, 0.5, 0, 0, FP16, 0, 1, 64),
        (3, 1024, 4, 4, 100, 1, 0.1, 0, 0, 0, FP16, 0, 0, 64),
        (4, 1024, 4, 4, 128, 0.1, 1, 0, 0, 0, FP16, 1, 1, 64),
        (4, 1024, 4, 4, 128, 0.1, 1, 0, 1, 0, FP16, 1, 0, 64),
        (2, 1500, 4, 4, 128, 0.1, 10, 0, 0, 1, FP16, 0, 1, 64),
        (4, 2048, 8, 8, 64, 0.1, 1, 0, 0, 1, FP16, 1, 1, 64),
        (2, 1024, 2, 4, 64, 0.1, 1, 0, 0, 0, FP16, 0, 0, 64),
        (2, 1024, 2, 8, 64, 0.1, 1, 0, 0, 1, FP16, 0, 0, 64),
        (2, 1024, 4, 8, 128, 0.1, 1, 0, 1, 1, FP16, 0, 0, 64),
        (2, 160, 2, 4, 64, 0.1, 1, 0, 0, 1, FP16, 1, 1, 32),
        (2, 1024, 2, 4, 64, 0.1, 1, 0, 1, 1, BF16, 1, 0, 64),
        (2, 1024, 2, 4, 64, 0.1, 1, 0, 0, 1, BF16, 0, 0, 64),
        (2, 160, 2, 4, 64, 0.1, 1, 0, 0, 1, BF16, 1, 1, 32),
        (2, 1024, 2, 8, 128, 0.1, 1, 0, 1, 1, BF16, 0, 0, 64),
    ]
    cases = [Case("test_chunk", "kda", "kda_chunk", B=b, T=t, H=h, HV=hv, D=d, scale=s, norm=n,
                  mask_p=m, l2=bool(l2), gate=bool(gk), dtype=dt, safe_gate=bool(sg),
                  disable_recompute=bool(dr), C=c)
             for b, t, h, hv, d, s, n, m, l2, gk, dt, sg, dr, c in rows]
    varlen = [  # (H, D, mask_p, cu, gate, safe_gate, dr, C), HV = H, fp16
        (4, 60, 0.1, (0, 15), 1, 0, 0, 64),
        (4, 64, 0.9, (0, 256, 500, 1000), 1, 0, 0, 64),
        (4, 128, 0.5, (0, 256, 500, 1000), 0, 0, 0, 64),
        (4, 100, 0, (0, 15, 100, 300, 1200, 2000), 1, 0, 0, 64),
        (4, 256, 0, (0, 100, 300, 1200, 3000, 4096), 0, 1, 1, 64),
        (4, 60, 0.1, (0, 31, 96, 160), 1, 0, 1, 32),
    ]
    cases += [Case("test_chunk_varlen", "kda", "kda_varlen", H=h, HV=h, D=d, mask_p=m, cu=cu,
                   gate=bool(gk), safe_gate=bool(sg), disable_recompute=bool(dr), C=c)
              for h, d, m, cu, gk, sg, dr, c in varlen]
    return cases


def gdn_fla_cases():
    """spec 7.3, test_chunk and test_chunk_varlen (fp16)."""
    rows = [  # (B, T, H, HV, D, scale, norm, mask_p, l2)
        (4, 1024, 4, 4, 128, 0.1, 1, 1.0, 0),
        (2, 75, 4, 4, 64, 1, 0.01, 0, 0),
        (2, 500, 3, 3, 60, 1, 1, 0, 0),
        (2, 1000, 3, 3, 64, 0.1, 1, 0.5, 0),
        (3, 1024, 4, 4, 100, 1, 0.1, 0, 0),
        (4, 1024, 4, 4, 128, 0.1, 1, 0, 1),
        (2, 1500, 4, 4, 128, 0.1, 10, 0, 0),
        (4, 2048, 8, 8, 64, 0.1, 1, 0, 0),
        (2, 256, 2, 4, 64, 1, 1, 0, 0),
        (2, 512, 2, 8, 64, 1, 0.1, 0, 1),
        (2, 1024, 4, 8, 128, 0.1, 1, 0, 0),
    ]
    cases = [Case("test_chunk", "gdn", "gdn_chunk", B=b, T=t, H=h, HV=hv, D=d, scale=s, norm=n,
                  mask_p=m, l2=bool(l2))
             for b, t, h, hv, d, s, n, m, l2 in rows]
    varlen = [  # (H, HV, D, mask_p, cu)
        (4, 4, 60, 0, (0, 15)),
        (4, 4, 64, 0, (0, 256, 500, 1000)),
        (4, 4, 64, 0.5, (0, 256, 500, 1000)),
        (4, 4, 100, 0, (0, 15, 100, 300, 1200, 2000)),
        (2, 4, 64, 0, (0, 256, 500, 1000)),
        (2, 8, 64, 0, (0, 256, 500, 1000)),
    ]
    cases += [Case("test_chunk_varlen", "gdn", "gdn_varlen", H=h, HV=hv, D=d, mask_p=m, cu=cu)
              for h, hv, d, m, cu in varlen]
    return cases


def million_token_cu(total=1 << 20, n_seqs=300, seed=1234):
    """cu_seqlens of `total` tokens in `n_seqs` sequences of varied length (1 to ~20k)."""
    rng = random.Random(seed)
    cuts = sorted(rng.sample(range(1, total), n_seqs - 1))
    return tuple([0] + cuts + [total])


def extra_cases():
    """Ours beyond FLA's forward tables."""
    E = "extra"
    cases = [
        # T = 1, fixed length, both ops
        Case(E, "gdn", "bench", B=2, T=1, H=2, HV=4, D=128, dtype=BF16, l2=True, label="T=1"),
        Case(E, "kda", "bench", B=2, T=1, H=2, HV=2, D=64, dtype=FP16, l2=True, label="T=1"),
        # an empty sequence inside a varlen batch (its final state must equal h0)
        Case(E, "gdn", "bench", H=2, HV=4, D=128, dtype=BF16, l2=True, cu=(0, 100, 100, 300),
             graph=True),
        Case(E, "kda", "bench", H=2, HV=2, D=64, dtype=FP16, l2=True, cu=(0, 100, 100, 300),
             graph=True),
        # 1M tokens in 300 sequences; one head (GDN: GVA 1/2) keeps the CPU reference short
        Case(E, "gdn", "bench", H=1, HV=2, D=64, dtype=BF16, l2=True, cu=million_token_cu()),
        Case(E, "kda", "bench", H=1, HV=1, D=64, dtype=BF16, l2=True, cu=million_token_cu()),
        # return_intermediate_states: h shape, dtype and values (FLA's KDA test shapes)
        Case(E, "kda", "bench", B=2, T=1024, H=4, HV=4, D=128, dtype=BF16, l2=True,
             return_h=True, graph=True),
        Case(E, "kda", "bench", H=4, HV=4, D=128, dtype=BF16, l2=True, cu=(0, 512, 1024),
             return_h=True),
        Case(E, "kda", "bench", H=2, HV=4, D=64, dtype=FP16, l2=True, cu=(0, 100, 100, 300),
             return_h=True, graph=True),
        Case(E, "gdn", "bench", B=2, T=200, H=2, HV=4, D=64, dtype=BF16, l2=True, return_h=True),
        # GVA with the gate in kernel, varlen, bf16
        Case(E, "gdn", "bench", H=2, HV=8, D=128, dtype=BF16, l2=True, gate=True,
             cu=(0, 300, 1000, 1100)),
        Case(E, "kda", "bench", H=2, HV=8, D=128, dtype=BF16, l2=True, gate=True,
             lower_bound=-5.0, cu=(0, 300, 1000, 1100)),
        # KDA lower-bound gate without A_log (A_log optional with lower_bound)
        Case(E, "kda", "bench", B=2, T=300, H=2, HV=2, D=128, dtype=BF16, l2=True, gate=True,
             lower_bound=-5.0, no_alog=True),
        # GDN gate in kernel (FLA's test_chunk_gate_in_kernel rows)
        Case("test_chunk_gate_in_kernel", "gdn", "gdn_gate", B=2, T=75, H=4, HV=4, D=64,
             scale=1, l2=True, gate=True),
        Case("test_chunk_gate_in_kernel", "gdn", "gdn_gate", B=2, T=1000, H=3, HV=3, D=64,
             scale=0.1, gate=True),
        Case("test_chunk_gate_in_kernel", "gdn", "gdn_gate", B=4, T=1024, H=4, HV=4, D=128,
             scale=0.1, l2=True, gate=True, dt_bias=False),
        Case("test_chunk_gate_in_kernel", "gdn", "gdn_gate", B=4, T=2048, H=8, HV=8, D=64,
             scale=0.1, gate=True),
        # beta sigmoid in kernel (FLA's test_chunk_beta_sigmoid_in_kernel rows)
        Case("test_chunk_beta_sigmoid_in_kernel", "gdn", "gdn_bsig", B=2, T=500, H=4, HV=4,
             D=64, scale=1, beta_sigmoid=True),
        Case("test_chunk_beta_sigmoid_in_kernel", "gdn", "gdn_bsig", B=3, T=1024, H=4, HV=4,
             D=128, scale=0.1, l2=True, beta_sigmoid=True, neg_eigval=True),
        Case("test_chunk_beta_sigmoid_in_kernel", "gdn", "gdn_bsig", B=2, T=1024, H=4, HV=8,
             D=128, scale=0.1, beta_sigmoid=True, neg_eigval=True),
        Case("test_chunk_beta_sigmoid_in_kernel", "gdn", "gdn_bsig", B=4, T=2048, H=8, HV=8,
             D=64, scale=0.1, l2=True, beta_sigmoid=True),
        Case("test_chunk_use_beta_sigmoid_in_kernel", "kda", "kda_chunk", B=2, T=96, H=2, HV=2,
             D=64, beta_sigmoid=True, neg_eigval=True),
        Case("test_chunk_use_beta_sigmoid_in_kernel", "kda", "kda_chunk", B=1, T=8192, H=96,
             HV=96, D=128, dtype=BF16, beta_sigmoid=True),
        Case("test_chunk_use_beta_sigmoid_in_kernel", "kda", "kda_chunk", B=1, T=8192, H=96,
             HV=96, D=128, dtype=BF16, beta_sigmoid=True, neg_eigval=True),
    ]
    # GDN context parallelism (the chained path: exact for any gate): the library's own
    # choice at a bench shape, forced short segments over a varlen batch (shorter than a
    # segment, empty, several segments) with the chunk states, and gates that barely decay
    # (gate / 10, / 1000)
    cases += [
        Case(E, "gdn", "bench", B=1, T=8192, H=2, HV=8, D=128, dtype=BF16, l2=True,
             return_h=True, graph=True, label="CP"),
        Case(E, "gdn", "bench", H=2, HV=4, D=128, dtype=BF16, l2=True, return_h=True,
             cu=(0, 100, 100, 1000, 1500, 4000), cp=3),
        Case(E, "gdn", "gdn_chunk", B=2, T=2048, H=2, HV=4, D=128, dtype=BF16, l2=True,
             norm=10, return_h=True, cp=4),
        Case(E, "gdn", "gdn_chunk", B=2, T=2048, H=2, HV=4, D=64, dtype=FP16, l2=True,
             norm=1000, return_h=True, cp=4),
    ]
    # KDA context parallelism, the same way (the chained path without chunk states; with them,
    # chunk_recur's warmups, whose bound takes each token's largest gate over the channels)
    cases += [
        Case(E, "kda", "bench", B=1, T=8192, H=4, HV=4, D=128, dtype=BF16, l2=True,
             return_h=True, graph=True, label="CP"),
        Case(E, "kda", "bench", H=2, HV=4, D=128, dtype=BF16, l2=True, return_h=True,
             cu=(0, 100, 100, 1000, 1500, 4000), cp=3),
        Case(E, "kda", "kda_chunk", B=2, T=2048, H=2, HV=4, D=64, dtype=FP16, l2=True,
             norm=10, return_h=True, cp=4),
        Case(E, "kda", "bench", B=2, T=2048, H=2, HV=2, D=128, dtype=BF16, l2=True,
             gate=True, lower_bound=-5.0, return_h=True, cp=2),
        # gates that barely decay (with chunk states every warmup fails its bound: the transfer
        # maps, modes 1 and 3); the library's own choice at a bench shape
        Case(E, "kda", "kda_chunk", B=2, T=2048, H=2, HV=4, D=64, dtype=FP16, l2=True,
             norm=1000, return_h=True, cp=4, label="xfer"),
        Case(E, "kda", "bench", H=2, HV=4, D=128, dtype=BF16, l2=True, return_h=True,
             gate=True, lower_bound=-5.0, cu=(0, 100, 100, 1000, 1500, 4000, 4033), cp=3,
             label="xfer"),
        Case(E, "kda", "bench", B=1, T=8192, H=4, HV=4, D=128, dtype=BF16, l2=True,
             gate=True, lower_bound=-5.0, return_h=True, graph=True, label="CP xfer"),
        # the same without chunk states (the benchmark's path), at D = 128 and 64
        Case(E, "kda", "bench", B=2, T=2048, H=2, HV=4, D=64, dtype=FP16, l2=True,
             gate=True, lower_bound=-5.0, cp=4, label="xfer"),
        Case(E, "kda", "bench", B=1, T=8192, H=4, HV=4, D=128, dtype=BF16, l2=True,
             gate=True, lower_bound=-5.0, graph=True, label="CP xfer"),
        # the benchmark's KDA 8/8 1x8192 cell itself (a chain of one step let the
        # ring's first loads race its stores there, every time; at 4 heads only at times)
        Case(E, "kda", "bench", B=1, T=8192, H=8, HV=8, D=128, dtype=BF16, l2=True,
             gate=True, lower_bound=-5.0, label="CP xfer bench"),
    ]
    # KDA chunk_prep's one-product path takes the chunks whose cumulative gates stay within
    # 2^96 of row 32's: gates twice the benchmark's put chunks on both sides of that bound
    cases += [
        Case(E, "kda", "bench", B=2, T=2048, H=2, HV=4, D=128, dtype=BF16, l2=True, norm=0.5,
             return_h=True, label="span mix"),
        # the lower-bound gate in kernel (its chunks take the levels) at D = 64 in fp16
        Case(E, "kda", "bench", B=2, T=2048, H=2, HV=4, D=64, dtype=FP16, l2=True,
             gate=True, lower_bound=-5.0, return_h=True, label="lb D64"),
    ]
    # chunk_recur_w (both value slices of a head in one CTA, D = 128; the library takes it only
    # where the kda_wide option forces it: chunk_recur_t is as fast or faster), forced: a
    # varlen batch with an empty sequence, partial chunks and -1000 gates, h0 and ht values
    # first, the in-kernel gate in both forms, fp16 and bf16
    cases += [
        Case(E, "kda", "kda_varlen", H=2, HV=4, D=128, mask_p=0.5, wide=1,
             cu=(0, 100, 100, 1000, 1500, 4000, 4033)),
        Case(E, "kda", "kda_chunk", B=2, T=1024, H=4, HV=8, D=128, scale=0.1, l2=True,
             gate=True, dtype=BF16, state_v_first=True, graph=True, wide=1),
        Case(E, "kda", "kda_chunk", B=1, T=500, H=2, HV=2, D=128, scale=0.1, safe_gate=True,
             gate=True, wide=1),
        Case(E, "kda", "bench", B=4, T=2048, H=4, HV=16, D=128, dtype=BF16, l2=True, wide=1),
        Case(E, "kda", "bench", B=2, T=2048, H=2, HV=2, D=128, dtype=BF16, l2=True,
             gate=True, lower_bound=-5.0, wide=1),
        # ... and kda_wide forced on calls with segments, which take the chained path anyway:
        # forced short segments over varlen with an empty sequence, the in-kernel gate with
        # graph replay, and gates that barely decay
        Case(E, "kda", "bench", H=2, HV=4, D=128, dtype=BF16, l2=True,
             cu=(0, 100, 100, 1000, 1500, 4000), cp=3, wide=1),
        Case(E, "kda", "kda_chunk", B=2, T=2048, H=2, HV=8, D=128, scale=0.1, l2=True,
             gate=True, dtype=BF16, cp=4, graph=True, wide=1),
        Case(E, "kda", "kda_chunk", B=2, T=2048, H=2, HV=4, D=128, dtype=FP16, l2=True,
             norm=1000, cp=4, wide=1, label="no decay"),
        Case(E, "kda", "bench", B=1, T=8192, H=16, HV=32, D=128, dtype=BF16, l2=True,
             wide=1, label="CP"),
    ]
    # the split in time (whole sequences on chunk_recur_t that leave half of the
    # SMs idle; chunk_prep and chunk_recur_t over each sequence's first chunks, then the rest):
    # the benchmark's lower-bound 8/8 8192x4 cell itself (the library's choice), forced lengths
    # with a partial last chunk, h0 and ht values first under graph replay (segments off), and
    # the library's choice without the l2norm (no context parallelism) in fp16
    cases += [
        Case(E, "kda", "bench", B=4, T=8192, H=8, HV=8, D=128, dtype=BF16, l2=True,
             gate=True, lower_bound=-5.0, label="split bench"),
        Case(E, "kda", "bench", B=2, T=2500, H=2, HV=4, D=128, dtype=BF16, l2=True,
             gate=True, lower_bound=-5.0, split=20),
        Case(E, "kda", "kda_chunk", B=2, T=3000, H=2, HV=4, D=128, scale=0.1, l2=True,
             gate=True, dtype=BF16, state_v_first=True, graph=True, cp=0, split=30),
        Case(E, "kda", "kda_chunk", B=3, T=4096, H=2, HV=2, D=128, dtype=FP16, gate=True,
             label="split"),
    ]
    # state_v_first (FLA's test_chunk_state_v_first rows), judged against the reference
    for b, t, h, d, s in [(1, 63, 1, 64, 1), (2, 500, 3, 60, 1), (3, 1024, 4, 128, 0.1),
                          (4, 2048, 8, 64, 0.1)]:
        cases.append(Case("test_chunk_state_v_first", "kda", "kda_chunk", B=b, T=t, H=h, HV=h,
                          D=d, scale=s, state_v_first=True))
        cases.append(Case("test_chunk_state_v_first", "gdn", "gdn_vfirst", B=b, T=t, H=h, HV=h,
                          D=d, scale=s, state_v_first=True))
    return cases


def gate_dtype_cases():
    """g and beta read as the caller gives them: bf16 and fp16 (q's dtype), fp32 g beside
    bf16 beta, with and without the in-kernel gate and beta sigmoid, through each build and
    path that reads them: KDA's chunk_prep (CB: segments, chunk states; D = 64, 128),
    chunk_prep_nocb (whole sequences, the chained path, the split; every gate form), rows
    past a sequence's end (varlen, T = 1, -1000 gates); GDN's gdn_kkt with GVA (the next
    head's loads), its gate and beta sigmoid, context parallelism. The cast happens before the
    reference reads the inputs, so it gets the same rounded values."""
    E, F32 = "dtypes", torch.float32
    kda = [
        Case(E, "kda", "bench", B=2, T=1000, H=2, HV=4, D=128, dtype=BF16, l2=True,
             g_dtype=BF16, beta_dtype=BF16),
        Case(E, "kda", "kda_chunk", B=2, T=1000, H=2, HV=4, D=128, scale=0.1, dtype=FP16,
             g_dtype=FP16, beta_dtype=FP16),
        Case(E, "kda", "kda_chunk", B=2, T=1000, H=2, HV=4, D=128, scale=0.1, dtype=BF16,
             gate=True, beta_sigmoid=True, g_dtype=BF16, beta_dtype=BF16),
        Case(E, "kda", "kda_chunk", B=2, T=1000, H=2, HV=4, D=64, scale=0.1, dtype=BF16,
             g_dtype=F32, beta_dtype=BF16),
        Case(E, "kda", "kda_chunk", B=2, T=500, H=2, HV=2, D=64, dtype=FP16, l2=True,
             gate=True, beta_sigmoid=True, neg_eigval=True, g_dtype=FP16, beta_dtype=FP16),
        Case(E, "kda", "kda_varlen", H=4, HV=4, D=128, mask_p=0.5, cu=(0, 256, 500, 1000),
             g_dtype=FP16, beta_dtype=FP16),
        Case(E, "kda", "bench", B=2, T=1, H=2, HV=2, D=64, dtype=FP16, l2=True,
             g_dtype=FP16, beta_dtype=FP16, label="T=1"),
        Case(E, "kda", "bench", B=2, T=1024, H=4, HV=4, D=128, dtype=BF16, l2=True,
             return_h=True, g_dtype=BF16, beta_dtype=BF16),
        Case(E, "kda", "bench", H=2, HV=4, D=128, dtype=BF16, l2=True, gate=True,
             lower_bound=-5.0, cu=(0, 100, 100, 1000, 1500, 4000, 4033), cp=3,
             g_dtype=BF16, beta_dtype=F32),
        Case(E, "kda", "bench", B=2, T=2048, H=2, HV=4, D=64, dtype=FP16, l2=True,
             gate=True, lower_bound=-5.0, beta_sigmoid=True, g_dtype=FP16, beta_dtype=FP16),
        Case(E, "kda", "bench", B=1, T=8192, H=4, HV=4, D=128, dtype=BF16, l2=True,
             gate=True, lower_bound=-5.0, graph=True, g_dtype=BF16, beta_dtype=BF16,
             label="CP xfer"),
        Case(E, "kda", "bench", B=2, T=2500, H=2, HV=4, D=128, dtype=BF16, l2=True,
             gate=True, lower_bound=-5.0, split=20, g_dtype=BF16, beta_dtype=BF16),
        Case(E, "kda", "kda_chunk", B=2, T=1024, H=4, HV=8, D=128, scale=0.1, l2=True,
             gate=True, dtype=BF16, wide=1, g_dtype=F32, beta_dtype=BF16),
    ]
    gdn = [
        Case(E, "gdn", "gdn_chunk", B=2, T=1000, H=2, HV=4, D=128, scale=0.1, dtype=BF16,
             l2=True, g_dtype=BF16, beta_dtype=BF16),
        Case(E, "gdn", "gdn_chunk", B=2, T=1000, H=3, HV=3, D=64, scale=0.1, dtype=FP16,
             g_dtype=FP16, beta_dtype=FP16),
        Case(E, "gdn", "gdn_chunk", B=2, T=1000, H=2, HV=8, D=64, scale=0.1, dtype=BF16,
             g_dtype=F32, beta_dtype=BF16),
        Case(E, "gdn", "gdn_gate", B=2, T=1000, H=3, HV=3, D=64, scale=0.1, dtype=BF16,
             gate=True, g_dtype=BF16, beta_dtype=BF16),
        Case(E, "gdn", "gdn_bsig", B=2, T=1024, H=4, HV=8, D=128, scale=0.1, dtype=FP16,
             beta_sigmoid=True, neg_eigval=True, g_dtype=FP16, beta_dtype=FP16),
        Case(E, "gdn", "bench", H=2, HV=8, D=128, dtype=BF16, l2=True, gate=True,
             beta_sigmoid=True, cu=(0, 300, 1000, 1100), g_dtype=F32, beta_dtype=BF16),
        Case(E, "gdn", "bench", B=2, T=1, H=2, HV=4, D=128, dtype=BF16, l2=True,
             g_dtype=BF16, beta_dtype=BF16, label="T=1"),
        Case(E, "gdn", "bench", B=1, T=8192, H=2, HV=8, D=128, dtype=BF16, l2=True,
             return_h=True, graph=True, g_dtype=BF16, beta_dtype=BF16, label="CP"),
    ]
    return kda + gdn


def widened_note(tl, c, x, got):
    """Ours once more with g and beta widened to fp32 (the f32 builds and loads): the kernels
    widen 16-bit values exactly where they read them, so o, ht and h should be bitwise those
    of the 16-bit call. Reported in the notes only."""
    try:
        out = run_ours(tl, c, replace(x, g=x.g.float(), beta=x.beta.float()))
    except Exception as e:
        return f"fp32-widened call raised {type(e).__name__}: {first_line(e)}"
    same = all(a is None or torch.equal(a, b) for a, b in zip(got, out))
    return "fp32-widened call " + ("identical" if same else "DIFFERS")


def all_cases():
    cases = kda_fla_cases() + gdn_fla_cases() + extra_cases() + cp_slow_cases()
    quick = {  # a small cross-section for --quick
        "kda B1 T63 H1/1 D64 s1 sg fp16",
        "kda B2 T1024 H4/8 D128 s0.1 l2 gate fp16",
        "kda cu[0, 256, 500, 1000] H4/4 D128 m0.5 fp16",
        "gdn B2 T75 H4/4 D64 s1 n0.01 fp16",
        "gdn B2 T1024 H4/8 D128 s0.1 fp16",
        "gdn cu[0, 256, 500, 1000] H2/8 D64 fp16",
    }
    cases += gate_dtype_cases()
    quick |= {"kda B2 T1000 H2/4 D128 l2 g:bf16 beta:bf16 bf16",
              "gdn B2 T1000 H2/8 D64 s0.1 g:fp32 beta:bf16 bf16"}
    out = []
    for c in cases:
        is_quick = c.name in quick or (c.suite == "extra" and c.cu is not None
                                       and len(c.cu) == 4 and c.cu[1] == c.cu[2])
        out.append(replace(c, quick=is_quick))
    return out


# ---- input recipes (FLA's distributions, spec 7.2 / 7.3) ------------------------------------

@dataclass
class Inputs:
    q: torch.Tensor            # as the kernels see them (normalised outside where FLA does)
    k: torch.Tensor
    v: torch.Tensor
    g: torch.Tensor
    beta: torch.Tensor
    h0: torch.Tensor = None
    A_log: torch.Tensor = None
    dt_bias: torch.Tensor = None
    lower_bound: float = None
    cu: torch.Tensor = None        # int64 on the device
    cu_cpu: torch.Tensor = None    # int64 on the host


def _dev(dev, *xs):
    return [None if x is None else x.to(dev) for x in xs]


def _normalize(x):
    return F.normalize(x, p=2, dim=-1)


def gen_kda_chunk(c, dev):
    """KDA test_chunk (and its state_v_first / beta-sigmoid siblings)."""
    torch.manual_seed(SEED)
    B, T, H, HV, D, dt = c.B, c.T, c.H, c.HV, c.D, c.dtype
    q, k = torch.rand(B, T, H, D, dtype=dt), torch.rand(B, T, H, D, dtype=dt)
    v = torch.rand(B, T, HV, D, dtype=dt)
    g = torch.randn(B, T, HV, D, dtype=dt if c.gate else torch.float)
    A_log = dt_bias = lb = None
    if c.gate:
        A_log, dt_bias = torch.randn(HV), torch.randn(HV * D)
    else:
        g = F.logsigmoid(g) / c.norm
        g = g * (torch.rand_like(g) > c.mask_p)
    if c.safe_gate:
        lb = -5.0
        if not c.gate:
            g = g.clamp(-5, 0)
    beta = torch.randn(B, T, HV, dtype=dt)
    if not c.beta_sigmoid:
        beta = beta.sigmoid()
    h0 = torch.randn(B, HV, D, D)
    q, k, v, g, beta, h0, A_log, dt_bias = _dev(dev, q, k, v, g, beta, h0, A_log, dt_bias)
    if not c.l2:
        q, k = _normalize(q), _normalize(k)
    return Inputs(q, k, v, g, beta, h0, A_log, dt_bias, lb)


def gen_kda_varlen(c, dev):
    """KDA test_chunk_varlen: randn q (normalised outside), normalised k, -1000 gates."""
    torch.manual_seed(SEED)
    T, N, H, HV, D, dt = c.cu[-1], len(c.cu) - 1, c.H, c.HV, c.D, c.dtype
    q = torch.randn(1, T, H, D, dtype=dt)
    k = _normalize(torch.randn(1, T, H, D)).to(dt)
    v = torch.randn(1, T, HV, D, dtype=dt)
    g = torch.randn(1, T, HV, D, dtype=dt if c.gate else torch.float)
    A_log = dt_bias = None
    if c.gate:
        A_log = torch.log(torch.randn(1, 1, HV, 1, device=dev).uniform_(1, 16))
        dt_bias = torch.randn(HV * D, device=dev)
    else:
        g = F.logsigmoid(g)
        g = g * (torch.rand_like(g) > c.mask_p)
    mask = torch.rand_like(g) > c.mask_p
    g = g * mask + (~mask) * (-1000)
    if c.safe_gate:
        g = g.clamp(-5, 0)
    beta = torch.rand(1, T, HV, dtype=dt).sigmoid()
    h0 = torch.randn(N, HV, D, D)
    q, k, v, g, beta, h0 = _dev(dev, q, k, v, g, beta, h0)
    return Inputs(_normalize(q), k, v, g, beta, h0, A_log, dt_bias)


def gen_gdn_chunk(c, dev):
    """GDN test_chunk: rand q/k/v, fp32 beta = sigmoid(rand), zero h0."""
    torch.manual_seed(SEED)
    B, T, H, HV, D, dt = c.B, c.T, c.H, c.HV, c.D, c.dtype
    q, k = torch.rand(B, T, H, D, dtype=dt), torch.rand(B, T, H, D, dtype=dt)
    v = torch.rand(B, T, HV, D, dtype=dt)
    beta = torch.rand(B, T, HV).sigmoid()
    g = F.logsigmoid(torch.rand(B, T, HV)) / c.norm
    g = g * (torch.rand_like(g) > c.mask_p)
    h0 = torch.zeros(B, HV, D, D)
    q, k, v, g, beta, h0 = _dev(dev, q, k, v, g, beta, h0)
    if not c.l2:
        q, k = _normalize(q), _normalize(k)
    return Inputs(q, k, v, g, beta, h0)


def gen_gdn_varlen(c, dev):
    """GDN test_chunk_varlen: q not normalised, fp16 gates and fp16 h0."""
    torch.manual_seed(SEED)
    T, N, H, HV, D, dt = c.cu[-1], len(c.cu) - 1, c.H, c.HV, c.D, c.dtype
    q = torch.randn(1, T, H, D, dtype=dt)
    k = _normalize(torch.randn(1, T, H, D)).to(dt)
    v = torch.randn(1, T, HV, D, dtype=dt)
    g = F.logsigmoid(torch.rand(1, T, HV, dtype=dt))
    g = g * (torch.rand_like(g) > c.mask_p)
    beta = torch.rand(1, T, HV).sigmoid()
    h0 = torch.randn(N, HV, D, D, dtype=dt)
    return Inputs(*_dev(dev, q, k, v, g, beta, h0))


def gen_gdn_gate(c, dev):
    """GDN test_chunk_gate_in_kernel: raw fp32 gate, A_log = randn, dt_bias = randn."""
    torch.manual_seed(SEED)
    B, T, H, D, dt = c.B, c.T, c.H, c.D, c.dtype
    q, k, v = (torch.rand(B, T, H, D, dtype=dt) for _ in range(3))
    beta = torch.rand(B, T, H).sigmoid()
    g = torch.randn(B, T, H)
    A_log = torch.randn(H)
    dt_bias = torch.randn(H) if c.dt_bias else None
    h0 = torch.zeros(B, H, D, D)
    q, k, v, g, beta, h0, A_log, dt_bias = _dev(dev, q, k, v, g, beta, h0, A_log, dt_bias)
    if not c.l2:
        q, k = _normalize(q), _normalize(k)
    return Inputs(q, k, v, g, beta, h0, A_log, dt_bias)


def gen_gdn_bsig(c, dev):
    """GDN test_chunk_beta_sigmoid_in_kernel: raw fp32 beta logits."""
    torch.manual_seed(SEED)
    B, T, H, HV, D, dt = c.B, c.T, c.H, c.HV, c.D, c.dtype
    q, k = torch.rand(B, T, H, D, dtype=dt), torch.rand(B, T, H, D, dtype=dt)
    v = torch.rand(B, T, HV, D, dtype=dt)
    beta = torch.randn(B, T, HV)
    g = F.logsigmoid(torch.rand(B, T, HV))
    h0 = torch.zeros(B, HV, D, D)
    q, k, v, g, beta, h0 = _dev(dev, q, k, v, g, beta, h0)
    if not c.l2:
        q, k = _normalize(q), _normalize(k)
    return Inputs(q, k, v, g, beta, h0)


def gen_gdn_vfirst(c, dev):
    """GDN test_chunk_state_v_first: a random h0 (stored [V, K])."""
    torch.manual_seed(SEED)
    B, T, H, D, dt = c.B, c.T, c.H, c.D, c.dtype
    q, k, v = (torch.rand(B, T, H, D, dtype=dt) for _ in range(3))
    beta = torch.rand(B, T, H, dtype=dt).sigmoid()
    g = F.logsigmoid(torch.rand(B, T, H)) / c.norm
    h0 = torch.randn(B, H, D, D)
    q, k, v, g, beta, h0 = _dev(dev, q, k, v, g, beta, h0)
    return Inputs(_normalize(q), _normalize(k), v, g, beta, h0)


def gen_bench(c, dev):
    """the benchmark's inputs: randn q/k/v (l2norm in kernel), beta = sigmoid(randn) fp32,
    g = logsigmoid(randn) fp32 (KDA per channel) or the raw gate with A_log = log U(1,16)
    and dt_bias = randn, h0 = randn fp32. Drawn on the device (the 1M-token case)."""
    torch.manual_seed(SEED)
    N = len(c.cu) - 1 if c.cu else c.B
    B, T = (1, c.cu[-1]) if c.cu else (c.B, c.T)
    H, HV, D, dt = c.H, c.HV, c.D, c.dtype
    q = torch.randn(B, T, H, D, dtype=dt, device=dev)
    k = torch.randn(B, T, H, D, dtype=dt, device=dev)
    v = torch.randn(B, T, HV, D, dtype=dt, device=dev)
    gshape = (B, T, HV, D) if c.op == "kda" else (B, T, HV)
    g = torch.randn(*gshape, device=dev)
    A_log = dt_bias = None
    if c.gate:
        if not c.no_alog:
            A_log = torch.empty(HV, device=dev).uniform_(1, 16).log()
        dt_bias = torch.randn(HV * D if c.op == "kda" else HV, device=dev)
    else:
        g = F.logsigmoid(g) / c.norm
    beta = torch.randn(B, T, HV, device=dev).sigmoid()
    h0 = torch.randn(N, HV, D, D, device=dev)
    return Inputs(q, k, v, g, beta, h0, A_log, dt_bias, c.lower_bound)


RECIPES = {"kda_chunk": gen_kda_chunk, "kda_varlen": gen_kda_varlen, "gdn_chunk": gen_gdn_chunk,
           "gdn_varlen": gen_gdn_varlen, "gdn_gate": gen_gdn_gate, "gdn_bsig": gen_gdn_bsig,
           "gdn_vfirst": gen_gdn_vfirst, "bench": gen_bench}


def make_inputs(c, dev):
    x = RECIPES[c.recipe](c, dev)
    if c.g_dtype is not None:      # before anything reads them, the reference included
        x.g = x.g.to(c.g_dtype)
    if c.beta_dtype is not None:
        x.beta = x.beta.to(c.beta_dtype)
    if c.lower_bound is not None:
        x.lower_bound = c.lower_bound
    if c.cu is not None:
        x.cu_cpu = torch.tensor(c.cu, dtype=torch.int64)
        x.cu = x.cu_cpu.to(dev)
    return x


# ---- context parallelism on slow gates ---------------------------------------------------------
# Segments forced to 1, 2 and 7 chunks where the warmups cannot bound what they drop: the slow
# gates of la_slow_gates.py (logsigmoid(randn) / 16, g = 0 on a quarter of the value heads), one
# sequence and a varlen batch (37 tokens, an empty one, 900), with and without the chunk states
# (written by the segments' CTAs; for KDA's lower-bound gate they take chunk_recur's modes 1
# and 3 instead of the chained path). Short enough that KDA's forced lengths fit its transfer
# slots and run as given.

SLOW_CU = (0, 37, 37, 937)


def cp_slow_cases():
    S = "cp_slow"
    cases = []
    for op, H in (("gdn", 2), ("kda", 4)):
        for cu, T, D in ((None, 1000, 128), (SLOW_CU, 0, 64)):
            for return_h in (False, True):
                for cp in (1, 2, 7):
                    cases.append(Case(S, op, "slow", B=1, T=T, H=H, HV=4, D=D, dtype=BF16,
                                      l2=True, cu=cu, return_h=return_h, cp=cp, label="slow"))
    # KDA's gate in kernel, dt_bias slow and the gate 0 on those heads: the lower bound
    # without the chunk states (the chained path) and with them (chunk_map_t, chunk_recur's
    # mode 3), softplus with them
    cases += [
        Case(S, "kda", "slow", B=1, T=1000, H=4, HV=4, D=128, dtype=BF16, l2=True, gate=True,
             lower_bound=-5.0, cp=2, label="slow"),
        Case(S, "kda", "slow", H=4, HV=4, D=128, dtype=BF16, l2=True, gate=True,
             lower_bound=-5.0, cu=SLOW_CU, return_h=True, cp=1, label="slow"),
        Case(S, "kda", "slow", H=4, HV=4, D=128, dtype=BF16, l2=True, gate=True, cu=SLOW_CU,
             return_h=True, cp=7, label="slow"),
    ]
    # a first segment longer than the others (first_segment), both ops, one length and varlen
    for op, H in (("gdn", 2), ("kda", 4)):
        for cu, T, D in ((None, 1000, 128), (SLOW_CU, 0, 64)):
            cases.append(Case(S, op, "slow", B=1, T=T, H=H, HV=4, D=D, dtype=BF16, l2=True,
                              cu=cu, return_h=True, cp=2, first=5, label="slow first 5"))
    return cases


def gen_slow(c, dev):
    """gen_bench's draws with la_slow_gates.py's gates: g = logsigmoid(randn) / 16 and 0 on the
    heads h % 4 == 3; KDA's gate in kernel: A_log = log U(1, 16), dt_bias of the same mean gate
    per token, -1e4 (a gate of exactly 0) on those heads."""
    import la_slow_gates as slow  # beside this file; only these cases need it
    torch.manual_seed(SEED)
    N = len(c.cu) - 1 if c.cu else c.B
    B, T = (1, c.cu[-1]) if c.cu else (c.B, c.T)
    H, HV, D, dt = c.H, c.HV, c.D, c.dtype
    q = torch.randn(B, T, H, D, dtype=dt, device=dev)
    k = torch.randn(B, T, H, D, dtype=dt, device=dev)
    v = torch.randn(B, T, HV, D, dtype=dt, device=dev)
    g = torch.randn(*((B, T, HV, D) if c.op == "kda" else (B, T, HV)), device=dev)
    A_log = dt_bias = None
    if c.gate:
        if c.op != "kda":
            raise ValueError("slow recipe: the gate in kernel is KDA's here")
        A_log = torch.empty(HV, device=dev).uniform_(1, 16).log()
        dt_bias = slow.slow_dt_bias("lb" if c.lower_bound is not None else "softplus",
                                    A_log, HV, D)
    else:
        g = slow.slow_log_gate(g)
    beta = torch.randn(B, T, HV, device=dev).sigmoid()
    h0 = torch.randn(N, HV, D, D, device=dev)
    return Inputs(q, k, v, g, beta, h0, A_log, dt_bias, c.lower_bound)


RECIPES["slow"] = gen_slow


# ---- the three implementations ----------------------------------------------------------------

def call_kwargs(c, x, fla_gdn=False):
    """FLA's keyword arguments for case c (the same for ours and FLA)."""
    kw = dict(scale=c.scale, initial_state=x.h0, output_final_state=True,
              use_qk_l2norm_in_kernel=c.l2, use_beta_sigmoid_in_kernel=c.beta_sigmoid,
              allow_neg_eigval=c.neg_eigval, state_v_first=c.state_v_first,
              cu_seqlens=x.cu, cu_seqlens_cpu=x.cu_cpu)
    if c.gate:
        kw.update(use_gate_in_kernel=True, A_log=x.A_log, dt_bias=x.dt_bias)
    if c.op == "kda":
        kw.update(safe_gate=c.safe_gate, lower_bound=x.lower_bound,
                  disable_recompute=c.disable_recompute)
    if c.return_h and not fla_gdn:  # FLA's GDN has no return_intermediate_states
        kw.update(return_intermediate_states=True)
    return kw


def run_ours(tl, c, x):
    fn = tl.chunk_kda if c.op == "kda" else tl.chunk_gated_delta_rule
    env = {}
    if c.cp is not None:
        env["TILE_LA_KDA_CP" if c.op == "kda" else "TILE_LA_GDN_CP"] = str(c.cp)
    if c.first is not None:
        env["TILE_LA_FIRST_SEG"] = str(c.first)
    if c.wide is not None:
        env["TILE_LA_KDA_W"] = str(c.wide)
    if c.split is not None:
        env["TILE_LA_KDA_SPLIT"] = str(c.split)
    # the library reads no environment: the variables become the handles' options
    from tile_la import _abi
    opt = _abi.options_from_environ({**os.environ, **env})
    saved = tl.set_options(**{name: getattr(opt, name) for name, _ in opt._fields_})
    try:
        out = fn(x.q, x.k, x.v, x.g, x.beta, **call_kwargs(c, x))
    finally:
        tl.set_options(**saved)
    return out if len(out) == 3 else (out[0], out[1], None)


def run_fla(fla, c, x):
    fla_gdn = c.op == "gdn"
    fn = fla["kda"] if c.op == "kda" else fla["gdn"]
    with torch.inference_mode():  # FLA's return_intermediate_states requires it
        out = fn(x.q, x.k, x.v, x.g, x.beta, **call_kwargs(c, x, fla_gdn))
    return out if len(out) == 3 else (out[0], out[1], None)


def f64(t):
    return None if t is None else t.detach().to("cpu", torch.float64).contiguous()


def num_chunk_states(c):
    if c.cu:
        return sum(-(-(b - a) // 64) for a, b in zip(c.cu[:-1], c.cu[1:]))
    return c.B * -(-c.T // 64)


def run_ref(lib, c, x):
    """fp64 naive recurrence on the kernels' inputs: (o, ht, h or None) as float64 CPU."""
    B, T = (1, c.cu[-1]) if c.cu else (c.B, c.T)
    N = len(c.cu) - 1 if c.cu else c.B
    kda = c.op == "kda"
    use_lb = kda and c.gate and x.lower_bound is not None
    p = refc.make_problem(refc.REF_KDA if kda else refc.REF_GDN, B, T, c.H, c.HV, c.D,
                          cu=list(c.cu) if c.cu else None, threads=os.cpu_count() or 1,
                          scale=float(c.scale or 0.0), use_qk_l2norm_in_kernel=c.l2,
                          use_beta_sigmoid_in_kernel=c.beta_sigmoid,
                          allow_neg_eigval=c.neg_eigval, use_gate_in_kernel=c.gate,
                          has_lower_bound=use_lb, lower_bound=float(x.lower_bound or 0.0),
                          safe_gate=c.safe_gate, state_v_first=c.state_v_first)
    ins = {name: f64(getattr(x, name)) for name in
           ("q", "k", "v", "g", "beta", "h0", "A_log", "dt_bias")}
    o = torch.empty(B, T, c.HV, c.D, dtype=torch.float64)
    ht = torch.empty(N, c.HV, c.D, c.D, dtype=torch.float64)
    h = torch.empty(num_chunk_states(c), c.HV, c.D, c.D, dtype=torch.float64) if c.return_h else None
    refc.recurrent_fwd(lib, p, {k: (t.data_ptr() if t is not None and t.numel() else None)
                                for k, t in ins.items()},
                       {"o": o.data_ptr() if o.numel() else None, "ht": ht.data_ptr(),
                        "h": h.data_ptr() if h is not None and h.numel() else None})
    return o, ht, h


# ---- checks ---------------------------------------------------------------------------------

def poison_allocator(sizes, dev):
    """Hands blocks of these byte sizes, filled with 0xFF (NaN in every float type), back
    to torch's caching allocator, so the next torch.empty of the same size most likely
    reads NaN where nothing is written. Best effort: the allocator decides."""
    bufs = [torch.full((n,), POISON_BYTE, dtype=torch.uint8, device=dev) for n in sizes if n]
    torch.cuda.synchronize(dev)
    del bufs


def metric(lib, ref, got, tol):
    """FLA's assert_close metric via ref_compare_f64: (ratio error, passes)."""
    if ref is None or got is None:
        return None, True
    if ref.numel() != got.numel():
        return float("nan"), False  # a wrong shape; never read past a buffer
    if ref.numel() == 0:
        return 0.0, True
    ref, g = ref.contiguous(), f64(got)
    cmp = refc.compare_f64(lib, ref.data_ptr(), g.data_ptr(), ref.numel(), tol)
    err = float("nan") if cmp.has_nan else cmp.ratio_err
    return err, bool(cmp.pass_)


def expected_h_shape(c):
    if c.cu:
        return (1, num_chunk_states(c), c.HV, c.D, c.D)
    return (c.B, -(-c.T // 64), c.HV, c.D, c.D)


def h_for_compare(h, c):
    """Chunk states as [NT, HV, D, D] keys-first (tile_la.h: chunk_states are keys first
    whatever the state layout; FLA and the reference transpose them with state_v_first)."""
    return None if h is None else h.reshape(-1, c.HV, c.D, c.D)


def graph_replay(tl, c, x, eager):
    """Captures one call of ours in a CUDA graph, replays it, and compares with eager."""
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        run_ours(tl, c, x)  # warm-up off the capture stream
    torch.cuda.current_stream().wait_stream(stream)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        out = run_ours(tl, c, x)
    graph.replay()
    torch.cuda.synchronize()
    return all(a is None or torch.equal(a, b) for a, b in zip(eager, out))


def first_line(e, width=120):
    lines = str(e).strip().splitlines()
    return (lines[0] if lines else "")[:width]


@dataclass
class Row:
    case: Case
    ours_o: float = None
    ours_ht: float = None
    fla_o: float = None
    fla_ht: float = None
    status: str = ""        # PASS, FAIL, unsupported
    det: str = "-"
    not_worse: str = "-"    # ours <= FLA on every compared output
    notes: str = ""
    seconds: float = 0.0


def run_case(c, tl, lib, fla, dev):
    row = Row(c)
    why = c.unsupported()
    if why:
        row.status, row.notes = "unsupported", why
        return row
    t0 = time.time()
    x = make_inputs(c, dev)
    notes, ok = [], True

    # ours, three times, each after poisoning the allocator with the outputs' sizes
    runs = []
    sizes = [x.v.numel() * x.v.element_size(), x.h0.numel() * 4 if x.h0 is not None else 0]
    if c.return_h:
        sizes.append(math.prod(expected_h_shape(c)) * x.q.element_size())
    try:
        for _ in range(3):
            poison_allocator(sizes, dev)
            runs.append(run_ours(tl, c, x))
        torch.cuda.synchronize()
    except Exception as e:  # a failing call is a failing case, not a crash of the run
        row.status, row.notes = "FAIL", f"ours raised {type(e).__name__}: {first_line(e)}"
        return row
    o, ht, h = runs[0]
    finite = all(t is None or bool(torch.isfinite(t).all()) for t in runs[0])
    if not finite:
        ok = False
        notes.append("NaN/inf in ours")
    same = all(a is None or torch.equal(a, b) for r in runs[1:] for a, b in zip(runs[0], r))
    row.det = "yes" if same else "NO"
    ok &= same
    if c.return_h:
        shape_ok = h is not None and tuple(h.shape) == expected_h_shape(c) and h.dtype == c.dtype
        if not shape_ok:
            ok = False
            notes.append(f"h shape {None if h is None else tuple(h.shape)} "
                         f"{None if h is None else h.dtype}, want {expected_h_shape(c)} {c.dtype}")

    if c.g_dtype is not None or c.beta_dtype is not None:
        notes.append(widened_note(tl, c, x, runs[0]))

    # reference and errors
    try:
        ref_o, ref_ht, ref_h_fla = run_ref(lib, c, x)
    except RuntimeError as e:
        row.status, row.notes = "FAIL", f"reference raised: {first_line(e)}"
        return row
    ref_h = ref_h_fla  # the reference's h is in the state layout, as FLA's; ours is keys first
    if ref_h is not None and c.state_v_first:
        ref_h = ref_h.transpose(-1, -2)
    row.ours_o, pass_o = metric(lib, ref_o, o, TOL)
    row.ours_ht, pass_ht = metric(lib, ref_ht, ht, TOL)
    ok &= pass_o and pass_ht
    ours_h = None
    if c.return_h and h is not None and tuple(h.shape) == expected_h_shape(c):
        ours_h, pass_h = metric(lib, ref_h, h_for_compare(h, c), TOL)
        ok &= pass_h
        notes.append(f"h err {ours_h:.2e}")

    if c.graph:
        try:
            g_ok = graph_replay(tl, c, x, runs[0])
            notes.append("graph replay " + ("identical" if g_ok else "DIFFERS"))
        except Exception as e:
            g_ok = False
            notes.append(f"graph capture raised {type(e).__name__}: {first_line(e)}")
        ok &= g_ok

    # FLA on the same inputs, against the same reference
    if fla is not None:
        try:
            fo, fht, fh = run_fla(fla, c, x)
            torch.cuda.synchronize()
            row.fla_o, _ = metric(lib, ref_o, fo, TOL)
            row.fla_ht, _ = metric(lib, ref_ht, fht, TOL)
            pairs = [(row.ours_o, row.fla_o), (row.ours_ht, row.fla_ht)]
            if ours_h is not None and fh is not None:
                fla_h, _ = metric(lib, ref_h_fla, h_for_compare(fh, c), TOL)
                notes.append(f"FLA h err {fla_h:.2e}")
                pairs.append((ours_h, fla_h))
            row.not_worse = "yes" if all(a <= b for a, b in pairs) else "no"
        except Exception as e:
            notes.append(f"FLA raised {type(e).__name__}: {first_line(e)}")
    row.status = "PASS" if ok else "FAIL"
    row.notes = "; ".join(notes)
    row.seconds = time.time() - t0
    del x, runs
    torch.cuda.empty_cache()
    return row


# ---- environment ------------------------------------------------------------------------------

def load_fla(disabled):
    """FLA's two ops (dispatch off), or None; never fails the run."""
    if disabled:
        print("FLA: not available (--no-fla)")
        return None, "not run (--no-fla)"
    os.environ["FLA_DISABLE_BACKEND_DISPATCH"] = "1"  # FLA's own Triton path (spec 0)
    try:
        import fla
        from fla.ops.gated_delta_rule import chunk_gated_delta_rule
        from fla.ops.kda import chunk_kda
    except Exception as e:  # ImportError, or a Triton/torch mismatch inside FLA
        print(f"FLA: not available ({type(e).__name__}: {e})")
        return None, "not available"
    version = getattr(fla, "__version__", "?")
    print(f"FLA {version} from {os.path.dirname(fla.__file__)}")
    return {"gdn": chunk_gated_delta_rule, "kda": chunk_kda}, version


def versions(fla_version):
    try:
        import triton
        triton_version = triton.__version__
    except Exception:
        triton_version = "not available"
    return f"torch {torch.__version__}, Triton {triton_version}, FLA {fla_version}"


def fmt(err):
    if err is None:
        return "-"
    return "nan" if err != err else f"{err:.2e}"


def report(rows, header):
    lines = header + ["",
                      "| case | suite | ours o | ours ht | FLA o | FLA ht | tol | det | ours<=FLA "
                      "| result | notes |",
                      "|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        tol = "-" if r.status == "unsupported" else f"{TOL:g}"
        lines.append(f"| {r.case.name} | {r.case.suite} | {fmt(r.ours_o)} | {fmt(r.ours_ht)} | "
                     f"{fmt(r.fla_o)} | {fmt(r.fla_ht)} | {tol} | {r.det} | {r.not_worse} | "
                     f"{r.status} | {r.notes.replace('|', '/')} |")
    run = [r for r in rows if r.status != "unsupported"]
    failed = [r for r in run if r.status != "PASS"]
    worse = [r for r in run if r.not_worse == "no"]
    compared = [r for r in run if r.not_worse != "-"]
    lines += ["",
              f"Summary: {len(run)} supported cases, {len(run) - len(failed)} passed, "
              f"{len(failed)} failed, {len(rows) - len(run)} unsupported (listed, not run); "
              f"worse than FLA on {len(worse)} of {len(compared)} compared cases "
              f"(reported only, not part of the exit status); TILE_TEST_SEED={SEED}."]
    if failed:
        lines.append("Failed: " + "; ".join(r.case.name for r in failed))
    return lines, not failed


def write(path, lines):
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    Path(path).write_text("\n".join(lines) + "\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="a small subset of the cases")
    ap.add_argument("--out", help="write the markdown table here (default: stdout only)")
    ap.add_argument("--no-fla", action="store_true", help="do not import or run FLA")
    ap.add_argument("-k", dest="filter", help="only cases whose name contains this")
    ap.add_argument("--part", help="I/N: run every N-th case starting at I (0-based), to split "
                                   "a run into pieces that fit a time limit")
    args = ap.parse_args()

    if not torch.cuda.is_available():
        print("error: no CUDA device")
        return 1
    try:
        lib = refc.load()
    except OSError as e:
        print(f"error: the CPU reference library {refc.lib_path()} cannot be loaded ({e}).\n"
              "Build the target tileref_shared (tests/ref) or set TILE_REF_LIB.")
        return 1
    import tile_la as tl
    try:
        tl.load_library()
    except RuntimeError as e:  # LibraryNotFoundError lists where it looked
        print(f"error: {e}")
        return 1
    fla, fla_version = load_fla(args.no_fla)
    dev = torch.device("cuda", torch.cuda.current_device())

    cases = all_cases()
    if args.quick:
        cases = [c for c in cases if c.quick]
    if args.filter:
        cases = [c for c in cases if args.filter in c.name]
    if args.part:
        i, n = (int(x) for x in args.part.split("/"))
        cases = cases[i::n]
    header = [f"# tile_la forward parity ({'quick' if args.quick else 'full'})", "",
              f"- Device: {torch.cuda.get_device_name(dev)}",
              f"- Date: {datetime.datetime.now().isoformat(timespec='seconds')}",
              f"- Seed: TILE_TEST_SEED={SEED}",
              f"- Command: `{' '.join([os.path.basename(sys.executable)] + sys.argv)}`",
              f"- Versions: {versions(fla_version)}",
              f"- Reference: fp64 ref_recurrent_fwd ({refc.lib_path()}), "
              f"{os.cpu_count()} threads; metric: FLA's relative RMS error, tolerance {TOL:g}"]
    rows = []
    with torch.no_grad():
        for c in cases:
            r = run_case(c, tl, lib, fla, dev)
            rows.append(r)
            print(f"{r.status:11} {c.name:60} ours {fmt(r.ours_o)} / {fmt(r.ours_ht)}  "
                  f"FLA {fmt(r.fla_o)} / {fmt(r.fla_ht)}  det {r.det}  {r.seconds:.1f}s  "
                  f"{r.notes}", flush=True)
            if args.out:  # rewritten after every case, so a killed run keeps its rows
                write(args.out, report(rows, header)[0])
    lines, ok = report(rows, header)
    text = "\n".join(lines) + "\n"
    print()
    print(text)
    if args.out:
        write(args.out, lines)
        print(f"written to {args.out}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
