#!/usr/bin/env python3
"""la_bench.py: forward speed of the prebuilt GDN/KDA kernels (python/tile_la) against
FLA's Triton kernels, in one process on one GPU, on the forward grid of docs/benchmarking.md.

Grid (K = V = 128, bf16): GDN h_qk/h_v 2/8, 4/16, 8/32, 16/64, 16/32, 8/24, 16/48, 32/32;
KDA H = HV 8, 16, 32, 64, GVA 16/32, and KDA 8/8 with the gate in kernel (A_log,
dt_bias, lower_bound -5). Sequence sets as FlashQLA's benchmark defines them (docs/benchmarking.md
copies its labels): 1x32768, 1x8192, 1x2048 (one sequence), 8192x4 (four sequences of
8192 tokens), 1024x8 (eight of 1024), varlen 28672+4096 and 1024+7168; every set of
more than one sequence is passed packed (B = 1) with cu_seqlens. --short-seqs adds
8192 sequences of 4 tokens and 1024 of 8 (state-bound; large HV may not fit in memory).

Inputs as docs/benchmarking.md says: q, k, v = randn bf16 with use_qk_l2norm_in_kernel, beta =
sigmoid(randn) fp32, fp32 randn initial state, final state requested; gates in two regimes,
both run on every cell and reported side by side (--gates picks one):
  fast  g = logsigmoid(randn) fp32 (KDA per channel); the in-kernel gate cell: A_log = log U(1, 16),
        dt_bias = randn.
  slow  FlashQLA's benchmark: g = logsigmoid(randn) / 16, and g = 0 on every value head h with
        h % 4 == 3 (a quarter of the heads); the in-kernel gate cell: the same A_log, dt_bias set
        per head so that the mean gate per token equals the slow log-space gate's, and -1e4 on the
        heads h % 4 == 3, where the gate evaluates to exactly 0 in fp32 (slow_dt_bias below).
q, k, v, beta, h0, A_log and the raw gate are the same draws in both regimes. KDA runs with
safe_gate=True, lower_bound=-5 on both sides, as FLA's benchmark does. FLA is
fla.ops.gated_delta_rule.chunk_gated_delta_rule and fla.ops.kda.chunk_kda with
FLA_DISABLE_BACKEND_DISPATCH=1.

Timing: after a warm-up (FLA's autotuning included), N calls are captured in one CUDA
graph; each of >= 100 replays is timed with CUDA events; the reported time is the median
replay / N. Every timed cell is first checked: our o and final state against FLA's with
FLA's metric (relative RMS < 0.01). Work is counted as 164 kFLOP per token per value head
(docs/benchmarking.md), shown as TFLOP/s and as % of the bf16 matmul rate measured in the
same run (torch.matmul 8192^3, graph timed).

usage: python3 bench/la_bench.py [--only gdn|kda] [--quick] [--no-fla] [--short-seqs]
                                 [--gates fast|slow|both] [--seqs 1x8192,8192x4]
                                 [--configs 'GDN 2/8,KDA 8/8'] [--replays 100] [--commit REV]
                                 [--gpus N]
       python3 bench/la_bench.py --self-check    # the input generator's statistics, on the CPU
--gpus N splits the cells over N GPUs of this machine (one la_bench.py per GPU, each timing its
cells alone on its GPU: a cell's ours and FLA always in one process) and joins their files as
--merge does: the whole grid (98 cells, ~20 s each) in about a quarter of the time on four.
Writes bench/results/la_fwd_<date>_<device>[_quick].md (and .png when matplotlib imports), with
the command, device, date, git commit and versions.
Needs the tile_la package importable (PYTHONPATH=python from the checkout, or pip install
--no-build-isolation ./python) and its library found (TILE_LA_LIBRARY=build/kernels/libtilela.so;
tile_la/_abi.py lists the places looked at).
"""
import argparse
import datetime
import math
import os
import re
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import torch
import torch.nn.functional as F

REPO = Path(__file__).resolve().parents[1]   # the results folder and the git commit

D = 128
FLOP_PER_TOKEN_HEAD = 164e3     # chunked forward at C = 64, K = V = 128 (docs/benchmarking.md)
CHECK_RATIO = 0.01              # FLA's metric, ours against FLA
# The speed targets (README.md): every cell of >= 8192 tokens 2x FLA's, and one sequence of
# 32768 tokens with at most 16 value heads 3x, in every gate regime
TARGET_MIN_TOKENS, TARGET_SPEEDUP = 8192, 2.0
TARGET_LONG_TOKENS, TARGET_LONG_MAX_HV, TARGET_LONG_SPEEDUP = 32768, 16, 3.0
GRAPH_TARGET_MS = 20.0          # aim for replays of about this length
LOWER_BOUND = -5.0              # KDA: safe_gate's lower bound, and the lower-bound gate's

# ---- gate regimes (docs/benchmarking.md, "Gate regimes") ---------------------------------------
REGIMES = ("fast", "slow")
SLOW_DIVISOR = 16               # slow: g = logsigmoid(randn) / 16
ZERO_HEAD_PERIOD = 4            # slow: value heads h with h % 4 == 3 never decay
ZERO_DT_BIAS = -1e4             # slow, in-kernel gate: dt_bias of those heads (gate == 0 in fp32)


@dataclass
class Config:
    op: str             # "gdn" or "kda"
    H: int
    HV: int
    gate: str = None    # KDA, gate computed in the kernel from A_log and dt_bias:
                        # "lb": lower_bound * sigmoid(exp(A_log) * (x + dt_bias)), lower_bound -5
                        # "softplus": -exp(A_log) * softplus(x + dt_bias) (no safe_gate)

    @property
    def label(self):
        suffix = {None: "", "lb": " gate-in-kernel lb-5", "softplus": " gate-in-kernel softplus"}
        return f"{self.op.upper()} {self.H}/{self.HV}" + suffix[self.gate]


GDN_CONFIGS = [Config("gdn", h, hv) for h, hv in
               [(2, 8), (4, 16), (8, 32), (16, 64), (16, 32), (8, 24), (16, 48), (32, 32)]]
KDA_CONFIGS = [Config("kda", h, hv) for h, hv in [(8, 8), (16, 16), (32, 32), (64, 64), (16, 32)]]
KDA_CONFIGS.append(Config("kda", 8, 8, gate="lb"))
# not in the grid, run only when --configs names it: the softplus in-kernel gate (FLA's
# non-safe_gate path)
EXTRA_CONFIGS = [Config("kda", 8, 8, gate="softplus")]

SEQ_SETS = [("1x32768", [32768]), ("1x8192", [8192]), ("1x2048", [2048]),
            ("8192x4", [8192] * 4), ("1024x8", [1024] * 8),
            ("28672+4096", [28672, 4096]), ("1024+7168", [1024, 7168])]
SHORT_SEQ_SETS = [("8192 seqs of 4", [4] * 8192), ("1024 seqs of 8", [8] * 1024)]
QUICK = {"configs": {"GDN 2/8", "GDN 16/64", "KDA 8/8", "KDA 16/32", "KDA 8/8 gate-in-kernel lb-5"},
         "seqs": {"1x8192", "8192x4", "1024+7168"}}

GATE_TEXT = {
    "fast": "g = logsigmoid(randn) (KDA per channel); in-kernel gate: A_log = log U(1, 16), "
            "dt_bias = randn",
    "slow": f"g = logsigmoid(randn) / {SLOW_DIVISOR}, g = 0 on the value heads h % "
            f"{ZERO_HEAD_PERIOD} == {ZERO_HEAD_PERIOD - 1} (KDA per channel); in-kernel gate: the "
            "same A_log, dt_bias = b_h on every channel of head h, b_h solving mean gate per "
            f"token = E[logsigmoid(randn)] / {SLOW_DIVISOR}, and {ZERO_DT_BIAS:g} on the heads "
            f"h % {ZERO_HEAD_PERIOD} == {ZERO_HEAD_PERIOD - 1} (gate exactly 0 in fp32)",
}


# ---- inputs (torch only, no CUDA needed: --self-check runs them on the CPU) -------------------

def zero_decay_heads(HV):
    """The slow regime's value heads without decay: every 4th, h = 3, 7, 11, ..."""
    return [h for h in range(HV) if h % ZERO_HEAD_PERIOD == ZERO_HEAD_PERIOD - 1]


def _normal_grid(n=24001, lim=12.0):
    """Points and weights of a Riemann sum over x ~ N(0, 1), float64 on the CPU."""
    x = torch.linspace(-lim, lim, n, dtype=torch.float64)
    w = torch.exp(-0.5 * x * x)
    return x, w / w.sum()


def logsigmoid_mean():
    """E[logsigmoid(x)], x ~ N(0, 1): the fast log-space gate's mean (about -0.806)."""
    x, w = _normal_grid()
    return (F.logsigmoid(x) * w).sum().item()


def slow_target():
    """The slow log-space gate's mean per token (and channel): about -0.0504."""
    return logsigmoid_mean() / SLOW_DIVISOR


def gate_activation(form, x, A_log, dt_bias, lower_bound=LOWER_BOUND):
    """FLA's in-kernel KDA gate (fla/ops/kda/gate.py, naive_kda_gate and
    naive_kda_lowerbound_gate) of the raw input x [..., HV, D] in fp32, dt_bias [HV * D]:
    "softplus": -exp(A_log) * softplus(x + dt_bias); "lb": lower_bound * sigmoid(exp(A_log) *
    (x + dt_bias)), A_log optional."""
    HV, Dd = x.shape[-2:]
    y = x.float() + dt_bias.float().view(HV, Dd)
    a = A_log.float().exp().view(HV, 1) if A_log is not None else None
    if form == "softplus":
        return -a * F.softplus(y)
    return lower_bound * torch.sigmoid(y if a is None else a * y)


def mean_gate(form, a, b, lower_bound=LOWER_BOUND):
    """E over x ~ N(0, 1) of the in-kernel gate with exp(A_log) = a and dt_bias = b (float64
    tensors of one shape), per element."""
    x, w = _normal_grid()
    y = x + b[..., None]
    vals = -a[..., None] * F.softplus(y) if form == "softplus" \
        else lower_bound * torch.sigmoid(a[..., None] * y)
    return (vals * w).sum(-1)


def solve_dt_bias(form, a, target, lower_bound=LOWER_BOUND):
    """The b per head with mean_gate(form, a, b) == target (< 0): bisection, the mean gate
    falling (more decay) as b grows."""
    lo = torch.full_like(a, -60.0)
    hi = torch.full_like(a, 20.0)
    for _ in range(80):
        mid = 0.5 * (lo + hi)
        too_much = mean_gate(form, a, mid, lower_bound) < target
        hi = torch.where(too_much, mid, hi)
        lo = torch.where(too_much, lo, mid)
    return 0.5 * (lo + hi)


def slow_dt_bias(cfg, A_log):
    """The slow regime's dt_bias [HV * D] for an in-kernel gate cell: per head h the b_h with
    E_x[gate] = slow_target() for x ~ N(0, 1) (the raw gate input), the same on every channel
    (no randn term: exp(A_log) up to 16 would turn it into channel means orders of magnitude
    apart); ZERO_DT_BIAS on zero_decay_heads, where both forms evaluate to 0 in fp32."""
    a = A_log.detach().double().cpu().exp() if A_log is not None \
        else torch.ones(cfg.HV, dtype=torch.float64)
    b = solve_dt_bias(cfg.gate, a, slow_target())
    b[zero_decay_heads(cfg.HV)] = ZERO_DT_BIAS
    dev = A_log.device if A_log is not None else "cpu"
    return b.float().repeat_interleave(D).to(dev)


@dataclass
class Inputs:
    q: torch.Tensor
    k: torch.Tensor
    v: torch.Tensor
    g: torch.Tensor
    beta: torch.Tensor
    h0: torch.Tensor
    A_log: torch.Tensor = None
    dt_bias: torch.Tensor = None
    cu32: torch.Tensor = None      # ours: int32 on the device (no conversion in the timed call)
    cu64: torch.Tensor = None      # FLA: int64 on the device
    cu_cpu: torch.Tensor = None    # FLA: the host copy that spares it a sync


def make_inputs(cfg, lens, dev, regime="fast", seed=0):
    """One cell's inputs on `dev` (a CUDA device or the CPU). Both regimes draw the same
    tensors in the same order (the fast regime's as before the slow one existed) and differ
    only in the gate (g, or dt_bias for an in-kernel gate)."""
    if regime not in REGIMES:
        raise ValueError(f"unknown gate regime {regime!r}")
    gen = torch.Generator(device=dev)
    gen.manual_seed(seed)
    T, N = sum(lens), len(lens)

    def randn(*shape, dtype=torch.float32):
        return torch.randn(*shape, dtype=dtype, device=dev, generator=gen)

    x = Inputs(q=randn(1, T, cfg.H, D, dtype=torch.bfloat16),
               k=randn(1, T, cfg.H, D, dtype=torch.bfloat16),
               v=randn(1, T, cfg.HV, D, dtype=torch.bfloat16),
               g=randn(1, T, cfg.HV, D) if cfg.op == "kda" else randn(1, T, cfg.HV),
               beta=randn(1, T, cfg.HV).sigmoid(),
               h0=randn(N, cfg.HV, D, D))
    if cfg.gate:  # the raw gate input; A_log = log U(1, 16) as FLA's tests draw it
        x.A_log = torch.empty(cfg.HV, device=dev).uniform_(1, 16, generator=gen).log()
        x.dt_bias = randn(cfg.HV * D)
        if regime == "slow":
            x.dt_bias = slow_dt_bias(cfg, x.A_log)
    else:
        x.g = F.logsigmoid(x.g)
        if regime == "slow":
            x.g = x.g / SLOW_DIVISOR               # exact: a power of two
            x.g[:, :, zero_decay_heads(cfg.HV)] = 0.0
    if N > 1:
        offsets = [0]
        for n in lens:
            offsets.append(offsets[-1] + n)
        x.cu_cpu = torch.tensor(offsets, dtype=torch.int64)
        x.cu64 = x.cu_cpu.to(dev)
        x.cu32 = x.cu64.to(torch.int32)
    return x


def effective_gate(cfg, x):
    """The gate the kernels apply, log space: g, or the in-kernel activation of g."""
    return gate_activation(cfg.gate, x.g, x.A_log, x.dt_bias) if cfg.gate else x.g


# ---- calls -------------------------------------------------------------------------------------

def kwargs(cfg, x, fla):
    kw = dict(initial_state=x.h0, output_final_state=True, use_qk_l2norm_in_kernel=True)
    if fla:
        kw.update(cu_seqlens=x.cu64, cu_seqlens_cpu=x.cu_cpu)
    else:
        kw.update(cu_seqlens=x.cu32, cu_seqlens_cpu=x.cu_cpu)
    if cfg.op == "kda":
        if cfg.gate != "softplus":  # lower_bound would turn the softplus gate into the other
            kw.update(safe_gate=True, lower_bound=LOWER_BOUND)
        if cfg.gate:
            kw.update(use_gate_in_kernel=True, A_log=x.A_log, dt_bias=x.dt_bias)
    return kw


def op_fn(impl, cfg):
    return impl.chunk_kda if cfg.op == "kda" else impl.chunk_gated_delta_rule


def call(impl, cfg, x, fla, **extra):
    """One forward call (extra: more keyword arguments); returns (o, final_state)."""
    out = op_fn(impl, cfg)(x.q, x.k, x.v, x.g, x.beta, **kwargs(cfg, x, fla), **extra)
    return out[0], out[1]


# ---- timing and checks -------------------------------------------------------------------------

def events_ms(fn, n):
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(n):
        fn()
    stop.record()
    torch.cuda.synchronize()
    return start.elapsed_time(stop) / n


def graph_time(fn, replays):
    """Median ms per call: N calls captured in one CUDA graph, `replays` timed replays."""
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):  # warm-up (and autotune) off the capture stream
        for _ in range(3):
            fn()
    torch.cuda.current_stream().wait_stream(side)
    torch.cuda.synchronize()
    estimate = events_ms(fn, 3)  # eager, host overhead included: only to choose N
    n = max(1, min(100, round(GRAPH_TARGET_MS / max(estimate, 1e-3))))
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        for _ in range(n):
            fn()
    graph.replay()
    torch.cuda.synchronize()
    starts = [torch.cuda.Event(enable_timing=True) for _ in range(replays)]
    stops = [torch.cuda.Event(enable_timing=True) for _ in range(replays)]
    for start, stop in zip(starts, stops):
        start.record()
        graph.replay()
        stop.record()
    torch.cuda.synchronize()
    ms = statistics.median(a.elapsed_time(b) for a, b in zip(starts, stops)) / n
    del graph
    return ms


def rel_rms(ref, got):
    """FLA's assert_close metric: 0 if max |ref - got| <= 1e-6, else
    RMS(ref - got) / (RMS(ref) + 1e-8); NaN when either holds a NaN."""
    ref, got = ref.double(), got.double()
    if torch.isnan(ref).any() or torch.isnan(got).any():
        return float("nan")
    diff = ref - got
    if diff.abs().max().item() <= 1e-6:
        return 0.0
    return (diff.square().mean().sqrt() / (ref.square().mean().sqrt() + 1e-8)).item()


def matmul_peak_tflops(dev, replays):
    n = 8192
    a = torch.randn(n, n, dtype=torch.bfloat16, device=dev)
    b = torch.randn(n, n, dtype=torch.bfloat16, device=dev)
    ms = graph_time(lambda: torch.matmul(a, b), replays)
    return 2.0 * n ** 3 / (ms * 1e-3) / 1e12


# ---- one cell: every regime ---------------------------------------------------------------------

@dataclass
class Run:                  # one regime of one cell
    ours_ms: float = None
    fla_ms: float = None
    err_o: float = None
    err_ht: float = None
    ok: bool = None         # None: not checked (no FLA)
    note: str = ""
    plan: str = ""          # ours: the library's launch plan (tile_la.record_plans)

    @property
    def speedup(self):
        return self.fla_ms / self.ours_ms if self.ours_ms and self.fla_ms else None


@dataclass
class Cell:
    cfg: Config
    seqs: str
    tokens: int
    runs: dict = field(default_factory=dict)   # regime -> Run

    @property
    def flops(self):
        return FLOP_PER_TOKEN_HEAD * self.tokens * self.cfg.HV


def run_regime(tl, fla, cfg, lens, dev, replays, regime):
    r = Run()
    x = None
    try:
        x = make_inputs(cfg, lens, dev, regime)
        tl.record_plans(True)   # the plan this cell runs, for the result file
        try:
            o, ht = call(tl, cfg, x, False)
            r.plan = "\n".join(tl.plans())
        finally:
            tl.record_plans(False)
        if fla is not None:  # correctness of this very cell, ours against FLA
            fo, fht = call(fla, cfg, x, True)
            r.err_o, r.err_ht = rel_rms(fo, o), rel_rms(fht, ht)
            r.ok = r.err_o < CHECK_RATIO and r.err_ht < CHECK_RATIO
            del fo, fht
        elif not (torch.isfinite(o).all() and torch.isfinite(ht).all()):
            r.ok, r.note = False, "NaN/inf in ours"
        del o, ht
        r.ours_ms = graph_time(lambda: call(tl, cfg, x, False), replays)
        if fla is not None:
            r.fla_ms = graph_time(lambda: call(fla, cfg, x, True), replays)
    except torch.cuda.OutOfMemoryError:
        r.note = "out of memory"
    except Exception as e:  # report the cell, keep the run going
        lines = str(e).strip().splitlines()
        r.note = f"{type(e).__name__}: {(lines[0] if lines else '')[:100]}"
    finally:
        x = None
        torch.cuda.synchronize()
        torch.cuda.empty_cache()
    return r


def run_cell(tl, fla, cfg, label, lens, dev, replays, regimes):
    cell = Cell(cfg, label, sum(lens))
    for regime in regimes:
        cell.runs[regime] = run_regime(tl, fla, cfg, lens, dev, replays, regime)
    return cell


# ---- output ------------------------------------------------------------------------------------

def device_short_name(name):
    m = re.search(r"([A-Z]{1,2}\d{2,4}[A-Z]?)", name.replace("NVIDIA", ""))
    return m.group(1).lower() if m else re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")


def versions(fla_version):
    try:
        import triton
        tv = triton.__version__
    except Exception:
        tv = "not available"
    return f"torch {torch.__version__} (CUDA {torch.version.cuda}), Triton {tv}, FLA {fla_version}"


def git_commit():
    """`git rev-parse --short HEAD` of the checkout holding this script, with a remark when
    tracked files differ from it; "unknown" without git or outside a checkout."""
    def git(*args):
        r = subprocess.run(["git", "-C", str(REPO), *args], capture_output=True, text=True,
                           timeout=30)
        return r.stdout.strip() if r.returncode == 0 else None
    try:
        rev = git("rev-parse", "--short", "HEAD")
        if not rev:
            return "unknown"
        if git("status", "--porcelain", "--untracked-files=no"):
            rev += " (tracked files modified since)"
        return rev
    except Exception:
        return "unknown"


def f3(x):
    return "-" if x is None else f"{x:.3f}"


def f4(x):   # the times of the "Every cell" table: enough digits for --merge's speedups
    return "-" if x is None else f"{x:.4f}"


def fe(x):
    return "-" if x is None else ("nan" if x != x else f"{x:.1e}")


def fx(x):
    return "-" if not x else f"{x:.2f}x"


def worst(a, b):
    """The larger error of two (None when neither was measured, NaN when either is NaN)."""
    vals = [v for v in (a, b) if v is not None]
    if not vals:
        return None
    return float("nan") if any(v != v for v in vals) else max(vals)


def regimes_of(cells):
    return [r for r in REGIMES if any(r in c.runs for c in cells)]


def speedup_summary(cells, regime, min_tokens=0):
    sp = sorted(c.runs[regime].speedup for c in cells
                if regime in c.runs and c.runs[regime].speedup and c.tokens >= min_tokens)
    if not sp:
        return None
    geo = math.exp(sum(math.log(s) for s in sp) / len(sp))
    return f"geometric mean {geo:.2f}x over {len(sp)} cells, min {sp[0]:.2f}x, max {sp[-1]:.2f}x"


def markdown(cells, header, peak, seq_labels):
    regimes = regimes_of(cells)
    lines = list(header)
    configs = list(dict.fromkeys(c.cfg.label for c in cells))
    by_key = {(c.cfg.label, c.seqs): c for c in cells}

    def grid(title, entry):
        out = ["", title, "", "| config | " + " | ".join(seq_labels) + " |",
               "|---|" + "---|" * len(seq_labels)]
        for label in configs:
            row = []
            for s in seq_labels:
                c = by_key.get((label, s))
                if c is None:
                    row.append("")
                    continue
                row.append(" ; ".join(entry(c.runs[r]) if r in c.runs else "-" for r in regimes))
            out.append(f"| {label} | " + " | ".join(row) + " |")
        return out

    def failed(r):
        return r.note or "failed"

    def wrong(r):
        return " WRONG" if r.ok is False else ""

    lines += grid(f"## Speedup over FLA ({' ; '.join(regimes)} gates)",
                  lambda r: failed(r) if r.ours_ms is None
                  else (fx(r.speedup) if r.speedup else f"ours {f3(r.ours_ms)} ms") + wrong(r))
    lines += grid(f"## Time per call, ms: ours / FLA (speedup) ({' ; '.join(regimes)} gates)",
                  lambda r: failed(r) if r.ours_ms is None
                  else f"{f3(r.ours_ms)} / {f3(r.fla_ms)}"
                  + (f" ({r.speedup:.2f}x)" if r.speedup else "") + wrong(r))

    cols = ["config", "seqs", "tokens"]
    for r in regimes:
        cols += [f"{r}: ours ms", f"{r}: FLA ms", f"{r}: speedup"]
    for r in regimes:
        cols += [f"{r}: ours TFLOP/s (% peak)", f"{r}: FLA TFLOP/s (% peak)"]
    for r in regimes:
        cols += [f"{r}: err o / ht", f"{r}: check"]
    cols.append("note")
    lines += ["", "## Every cell (" + " and ".join(regimes) + " gates"
              + (" side by side)" if len(regimes) > 1 else ")"), "",
              "| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]

    def rate(c, ms):
        if not ms:
            return "-"
        t = c.flops / (ms * 1e9)
        return f"{t:.1f} ({100 * t / peak:.1f}%)"

    for c in cells:
        runs = [c.runs.get(r, Run()) for r in regimes]
        row = [c.cfg.label, c.seqs, str(c.tokens)]
        for r in runs:
            row += [f4(r.ours_ms), f4(r.fla_ms), fx(r.speedup)]
        for r in runs:
            row += [rate(c, r.ours_ms), rate(c, r.fla_ms)]
        for r in runs:
            row += [f"{fe(r.err_o)} / {fe(r.err_ht)}", {True: "ok", False: "FAIL", None: "-"}[r.ok]]
        row.append("; ".join(f"{name}: {r.note}" for name, r in zip(regimes, runs) if r.note))
        lines.append("| " + " | ".join(row) + " |")

    lines.append("")
    for r in regimes:
        everything = speedup_summary(cells, r)
        if everything:
            lines.append(f"- Speedup over FLA, {r} gates, all cells: {everything}.")
        long_only = speedup_summary(cells, r, 8192)
        if long_only and long_only != everything:
            lines.append(f"- Speedup over FLA, {r} gates, cells of >= 8192 tokens: {long_only}.")
    bad = [f"{c.cfg.label} {c.seqs} ({r})" for c in cells for r in regimes
           if r in c.runs and c.runs[r].ok is False]
    if bad:
        lines.append("- Cells failing the check against FLA: " + "; ".join(bad))
    lines += targets_section(cells)
    lines += plans_section(cells)
    return "\n".join(lines) + "\n"


def target_of(cell):
    """The speedup a cell must reach (TARGET_* above), or None below TARGET_MIN_TOKENS."""
    lens = dict(SEQ_SETS + SHORT_SEQ_SETS).get(cell.seqs, [])
    if len(lens) == 1 and lens[0] == TARGET_LONG_TOKENS and cell.cfg.HV <= TARGET_LONG_MAX_HV:
        return TARGET_LONG_SPEEDUP
    return TARGET_SPEEDUP if cell.tokens >= TARGET_MIN_TOKENS else None


def targets_section(cells):
    """Per gate regime, the cells short of their target (target_of), a failed or unmeasured
    cell counting as short; nothing without a cell that has a target, or without FLA."""
    counted = [c for c in cells if target_of(c)]
    if not any(r.fla_ms for c in counted for r in c.runs.values()):
        return []
    out = ["", "## Targets", "",
           f"Every cell of >= {TARGET_MIN_TOKENS} tokens at least {TARGET_SPEEDUP:g}x as fast as "
           f"FLA, one sequence of {TARGET_LONG_TOKENS} tokens with at most {TARGET_LONG_MAX_HV} "
           f"value heads at least {TARGET_LONG_SPEEDUP:g}x, in every gate regime.", ""]
    for r in regimes_of(counted):
        runs = [(c, c.runs[r]) for c in counted if r in c.runs]
        short = [f"{c.cfg.label} {c.seqs} "   # three decimals: 1.998x is short of 2x
                 f"{f'{run.speedup:.3f}x' if run.speedup else 'unmeasured'}"
                 f" (target {target_of(c):g}x)" for c, run in runs
                 if not run.speedup or run.ok is False or run.speedup < target_of(c)]
        met = len(runs) - len(short)
        out.append(f"- {r} gates: {met} of {len(runs)} cells met"
                   + (": short: " + "; ".join(short) if short else "") + ".")
    return out


def plans_section(cells):
    """Each cell's launch plan (the first regime's: the gates' values do not change it), as
    tile_la_describe_plan prints it."""
    out = ["", "## Launch plans", ""]
    for c in cells:
        plan = next((r.plan for r in c.runs.values() if r.plan), "")
        if plan:
            out += [f"{c.cfg.label} {c.seqs}:", "```", plan.rstrip(), "```", ""]
    return out if len(out) > 3 else []


def plot(cells, path, title):
    """Grouped bars of the speedup over FLA per cell, one panel per op and gate regime; False
    when matplotlib is missing or nothing was compared."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except Exception:
        return False
    panels = [(op, r) for op in ("gdn", "kda") for r in regimes_of(cells)
              if any(c.cfg.op == op and r in c.runs and c.runs[r].speedup for c in cells)]
    if not panels:
        return False
    fig, axes = plt.subplots(len(panels), 1, figsize=(14, 4.5 * len(panels)), squeeze=False)
    for ax, (op, regime) in zip(axes[:, 0], panels):
        mine = [c for c in cells if c.cfg.op == op]
        configs = list(dict.fromkeys(c.cfg.label for c in mine))
        seqs = list(dict.fromkeys(c.seqs for c in mine))
        width = 0.8 / max(1, len(seqs))
        for j, s in enumerate(seqs):
            vals = [next((c.runs[regime].speedup or 0.0 for c in mine if c.cfg.label == cl
                          and c.seqs == s and regime in c.runs), 0.0) for cl in configs]
            ax.bar([i + j * width for i in range(len(configs))], vals, width, label=s)
        ax.axhline(1.0, color="black", linewidth=0.8)
        ax.set_xticks([i + 0.4 - width / 2 for i in range(len(configs))])
        ax.set_xticklabels(configs, fontsize=8)
        ax.set_ylabel("speedup over FLA (x)")
        ax.set_title(f"{op.upper()} forward, {regime} gates, {title}")
        ax.legend(fontsize=7, ncol=4)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return True


def _num(text):
    text = text.strip()
    return None if text in ("-", "") else float(text.rstrip("x"))


def every_cell_from_markdown(text):
    """The cells of a result file's "Every cell" table, every column la_bench.py wrote (times,
    errors, the check, the note), with each cell's launch plan: for --merge, and for
    --plot-from where the run had no matplotlib."""
    configs = {c.label: c for c in GDN_CONFIGS + KDA_CONFIGS + EXTRA_CONFIGS}
    lines = text.splitlines()
    start = next(i for i, l in enumerate(lines) if l.startswith("## Every cell"))
    first = next(i for i in range(start + 1, len(lines)) if lines[i].startswith("|"))
    end = next((i for i in range(first, len(lines)) if not lines[i].startswith("|")), len(lines))
    cols = [h.strip() for h in lines[first].strip().strip("|").split("|")]
    regimes = [r for r in REGIMES if f"{r}: ours ms" in cols]
    plans = {}
    for i, l in enumerate(lines):   # "label seqs:" then a fenced plan
        if l.endswith(":") and i + 1 < len(lines) and lines[i + 1] == "```":
            close = next(j for j in range(i + 2, len(lines)) if lines[j] == "```")
            plans[l[:-1]] = "\n".join(lines[i + 2:close])
    cells = []
    for row in lines[first + 2:end]:
        v = dict(zip(cols, (e.strip() for e in row.strip().strip("|").split("|"))))
        cell = Cell(configs[v["config"]], v["seqs"], int(v["tokens"]))
        notes = dict(n.split(": ", 1) for n in v["note"].split("; ") if ": " in n)
        for r in regimes:
            err = v[f"{r}: err o / ht"].split(" / ")
            cell.runs[r] = Run(ours_ms=_num(v[f"{r}: ours ms"]), fla_ms=_num(v[f"{r}: FLA ms"]),
                               err_o=_num(err[0]), err_ht=_num(err[1]),
                               ok={"ok": True, "FAIL": False}.get(v[f"{r}: check"]),
                               note=notes.get(r, ""),
                               plan=plans.get(f"{cell.cfg.label} {cell.seqs}", ""))
        cells.append(cell)
    return cells


def merge(out, inputs):
    """--merge: the cells of several result files of one commit, device and versions (a grid
    run in parts, each cell's ours and FLA timed in the same call; a part may itself be merged,
    as --gpus writes) as one result file, in the grid's order; 0, or 1 with a message on
    stderr."""
    texts = [(p, Path(p).read_text()) for p in inputs]

    def field_of(text, name):
        m = re.search(rf"^- {name}: (.*)$", text, re.M)
        return m[1] if m else ""

    def runs_of(text):
        """A file's runs as "date: command" lines: its own, or a merged file's list."""
        if field_of(text, "Date"):
            return [f"  - {field_of(text, 'Date')}: {field_of(text, 'Command')}"]
        return re.findall(r"^  - \S+: `.*`$", text, re.M)

    def peaks_of(text):
        """The matmul rates a file measured: one run's, or a merged file's lowest and highest."""
        one = re.search(r"measured in this run: (\d+) TFLOP/s", text)
        span = re.search(r"measured in these runs: (\d+)-(\d+) TFLOP/s", text)
        return [float(one[1])] if one else [float(span[1]), float(span[2])] if span else []

    for name in ("Device", "Commit", "Versions"):
        values = {field_of(t, name) for _, t in texts}
        if len(values) != 1:
            print(f"error: the files differ in {name}: {sorted(values)}", file=sys.stderr)
            return 1
    cells, source, peaks = {}, {}, []
    for p, t in texts:
        try:
            found = every_cell_from_markdown(t)
            peak = peaks_of(t)
        except (StopIteration, KeyError, ValueError, IndexError):
            found = peak = None
        if not found or not peak:
            print(f"error: {p}: no every-cell table and matmul rate of la_bench.py's",
                  file=sys.stderr)
            return 1
        peaks += peak
        for c in found:
            key = (c.cfg.label, c.seqs)
            if key in cells:
                print(f"error: {key[0]} {key[1]} is in {source[key]} and {p}", file=sys.stderr)
                return 1
            cells[key], source[key] = c, p
    order = [c.label for c in GDN_CONFIGS + KDA_CONFIGS + EXTRA_CONFIGS]
    seq_order = [s for s, _ in SEQ_SETS + SHORT_SEQ_SETS]
    merged = sorted(cells.values(), key=lambda c: (order.index(c.cfg.label),
                                                   seq_order.index(c.seqs)))
    seq_labels = [s for s in seq_order if any(c.seqs == s for c in merged)]
    first = texts[0][1]
    header = ["# GDN / KDA forward: tile_la against FLA (grid, merged)", ""]
    header += [f"- {name}: {field_of(first, name)}" for name in ("Device", "Commit", "Versions")]
    runs = [line for _, t in texts for line in runs_of(t)]
    header.append(f"- Runs: {len(runs)}, each cell's ours and FLA timed in the same process on "
                  "one GPU (la_bench.py --merge):")
    header += runs
    header.append(f"- bf16 matmul 8192^3 measured in these runs: {min(peaks):.0f}-{max(peaks):.0f}"
                  f" TFLOP/s (graph timed); % of peak below against {min(peaks):.0f}")
    header += [l for l in first.splitlines() if l.startswith(("- K = V", "- Gates,", "- Times:",
                                                              "- Check:"))]
    Path(out).write_text(markdown(merged, header, min(peaks), seq_labels))
    print(f"{len(merged)} cells from {len(texts)} files written to {out}")
    return 0


# ---- --self-check: the input generator's statistics on the CPU ---------------------------------

SELF_CHECK_CASES = [(Config("gdn", 2, 8), [4096, 4096]),
                    (Config("gdn", 8, 24), [8192]),
                    (Config("kda", 16, 32), [2048, 2048]),
                    (Config("kda", 8, 8, gate="lb"), [8192]),
                    (Config("kda", 8, 8, gate="softplus"), [8192])]


def self_check():
    """Builds each regime's inputs on the CPU for a few configs and checks what the gate
    regimes promise; prints one line per config and regime and returns 0 when all hold."""
    torch.set_num_threads(max(1, min(8, os.cpu_count() or 1)))
    cpu = torch.device("cpu")
    fast_mean, target = logsigmoid_mean(), slow_target()
    failures = []
    print(f"E[logsigmoid(randn)] = {fast_mean:.4f}; slow target per token {target:.5f} "
          f"(x64 tokens: {64 * fast_mean:.1f} and {64 * target:.2f} per chunk)")
    print("mean g and mean exp(g): per token and channel over the decaying heads; chunk: mean "
          "sum of g over 64 tokens;\nmax_d: mean over tokens of the largest gate over channels "
          "(KDA's warmup bound reads it)")
    print(f"{'config':32} {'regime':6} {'zero-decay heads':18} {'mean g':>9} {'mean e^g':>9} "
          f"{'chunk':>8} {'max_d g':>9} {'min g':>8}  result")
    for cfg, lens in SELF_CHECK_CASES:
        xs = {r: make_inputs(cfg, lens, cpu, r) for r in REGIMES}
        gates = {r: effective_gate(cfg, xs[r]) for r in REGIMES}
        for regime in REGIMES:
            x, g = xs[regime], gates[regime]
            bad = []

            def need(cond, what):
                if not cond:
                    bad.append(what)

            gh = g[0] if cfg.op == "kda" else g[0].unsqueeze(-1)   # [T, HV, D or 1]
            zero = [h for h in range(cfg.HV) if bool((gh[:, h] == 0).all())]
            want_zero = zero_decay_heads(cfg.HV) if regime == "slow" else []
            need(zero == want_zero, f"zero-decay heads {zero}, want {want_zero}")
            if regime == "slow":
                need(len(zero) * 4 == cfg.HV, "not a quarter of the heads")
            live = [h for h in range(cfg.HV) if h not in want_zero]
            gl = gh[:, live].double()                            # [T, live, D or 1]
            need(bool((g <= 0).all()), "a gate > 0")
            need(bool(torch.isfinite(g).all()), "a non-finite gate")
            need(bool((gl < 0).float().mean() > 0.99), "decaying heads with g == 0")
            mean_g = gl.mean().item()
            mean_eg = gl.exp().mean().item()
            T = gl.shape[0] // 64 * 64
            chunk = gl[:T].reshape(T // 64, 64, *gl.shape[1:]).sum(1).mean().item()
            maxd = gl.max(-1).values.mean().item()
            if not cfg.gate:
                want = fast_mean if regime == "fast" else target
                need(abs(mean_g / want - 1) < 0.02, f"mean g {mean_g:.5f}, want {want:.5f}")
            if cfg.gate and regime == "slow":  # per head, each with its own exp(A_log)
                per_head = gl.mean((0, 2))
                dev_max = (per_head / target - 1).abs().max().item()
                need(dev_max < 0.10, f"a head's mean g {dev_max:.1%} off the target")
            if cfg.gate == "lb" or (cfg.op == "kda" and regime == "slow"):
                need(bool((g >= LOWER_BOUND).all()), f"a gate below {LOWER_BOUND}")
            if regime == "slow":
                f = xs["fast"]
                same = ["q", "k", "v", "beta", "h0", "A_log", "cu64"]
                same += ["g"] if cfg.gate else []
                for name in same:
                    a, b = getattr(f, name), getattr(x, name)
                    need((a is None and b is None) or torch.equal(a, b),
                         f"{name} differs between the regimes")
                if not cfg.gate:  # the same draws: slow == fast / 16 on the decaying heads
                    fl = gates["fast"][:, :, live]
                    need(torch.equal(g[:, :, live], fl / SLOW_DIVISOR), "slow != fast / 16")
            zs = "none" if not zero else ",".join(map(str, zero)) if len(zero) <= 3 \
                else f"{zero[0]},{zero[1]},..,{zero[-1]}"
            zs += f" ({len(zero)}/{cfg.HV})"
            print(f"{cfg.label:32} {regime:6} {zs:18} {mean_g:9.4f} {mean_eg:9.4f} {chunk:8.2f} "
                  f"{maxd:9.4f} {g.min().item():8.3f}  {'ok' if not bad else 'FAIL: ' + '; '.join(bad)}")
            failures += [f"{cfg.label} {regime}: {b}" for b in bad]
        if cfg.gate:
            a = xs["slow"].A_log.double().exp()
            b = xs["slow"].dt_bias.view(cfg.HV, D)[:, 0].double()
            print(f"{'':32} slow dt_bias per head (exp(A_log)): "
                  + ", ".join(f"{bv:.2f} ({av:.1f})" for av, bv in zip(a.tolist(), b.tolist())))
    print("self-check: " + ("ok" if not failures else f"{len(failures)} failures"))
    return 0 if not failures else 1


# ---- main ---------------------------------------------------------------------------------------

def load_fla(disabled):
    if disabled:
        print("FLA: not run (--no-fla); timing ours only")
        return None, "not run"
    os.environ["FLA_DISABLE_BACKEND_DISPATCH"] = "1"  # FLA's own Triton kernels
    try:
        import fla
        from fla.ops.gated_delta_rule import chunk_gated_delta_rule
        from fla.ops.kda import chunk_kda
    except Exception as e:
        print(f"FLA: not available ({type(e).__name__}: {e}); timing ours only")
        return None, "not available"

    class FLA:  # the two ops under the names the binding uses
        pass
    FLA.chunk_gated_delta_rule = staticmethod(chunk_gated_delta_rule)
    FLA.chunk_kda = staticmethod(chunk_kda)
    return FLA, getattr(fla, "__version__", "?")


def parse_cells(text):
    """--cells 'GDN 2/8@1x8192;KDA 8/8@8192x4' -> [(Config, (seqs label, lengths))], in order;
    ValueError naming an unknown config or sequence set."""
    configs = {c.label: c for c in GDN_CONFIGS + KDA_CONFIGS + EXTRA_CONFIGS}
    seq_sets = dict(SEQ_SETS + SHORT_SEQ_SETS)
    cells = []
    for item in filter(None, (t.strip() for t in text.split(";"))):
        label, _, seqs = item.rpartition("@")
        if label not in configs:
            raise ValueError(f"unknown config '{label}' in '{item}'")
        if seqs not in seq_sets:
            raise ValueError(f"unknown sequence set '{seqs}' in '{item}'")
        cells.append((configs[label], (seqs, seq_sets[seqs])))
    return cells


def cell_cost(cfg, lens):
    """A cell's share of a run, for splitting cells over GPUs: its fixed timing (>= 100 replays
    of ~20 ms graphs per side and regime) plus setup and checks that grow with its work."""
    return 1.0 + sum(lens) * cfg.HV / (32768 * 64)


# What a process pays once per config it times, in cell_cost's units: FLA's Triton autotuning
# and compiles for the config's head counts (minutes for KDA's backward on a fresh cache)
CONFIG_SETUP_COST = 4.0


def split_cells(cells, parts):
    """cells over at most `parts` lists of about equal cost, a config's cells kept in one list
    where that costs nothing (each list pays CONFIG_SETUP_COST per config it holds): whole
    configs first, the costliest to the lightest list, then single cells from the heaviest list
    to the lightest while that lowers the heaviest. Each list in the grid's order."""
    cost = [cell_cost(cfg, lens) for cfg, (_, lens) in cells]
    by_config = {}
    for i, (cfg, _) in enumerate(cells):
        by_config.setdefault(cfg.label, []).append(i)

    def load(m):
        return sum(cost[i] for i in m) + CONFIG_SETUP_COST * len({cells[i][0].label for i in m})

    members = [[] for _ in range(parts)]
    for label in sorted(by_config, key=lambda c: -sum(cost[i] for i in by_config[c])):
        lightest = min(range(parts), key=lambda k: load(members[k]))
        members[lightest] += by_config[label]
    while True:
        loads = [load(m) for m in members]
        hi, lo = loads.index(max(loads)), loads.index(min(loads))

        def after(i):   # the larger of the two lists' loads once cell i moves from hi to lo
            return max(load([j for j in members[hi] if j != i]), load(members[lo] + [i]))
        best = min(members[hi], key=after, default=None)
        if best is None or after(best) >= loads[hi]:
            break
        members[hi].remove(best)
        members[lo].append(best)
    return [[cells[i] for i in sorted(m)] for m in members if m]


def part_gpus(n):
    """The GPUs for n parts: the first n of CUDA_VISIBLE_DEVICES when it is set (so that
    `CUDA_VISIBLE_DEVICES=2,3 ... --gpus 2` runs on GPUs 2 and 3), else 0 .. n - 1."""
    visible = [g for g in os.environ.get("CUDA_VISIBLE_DEVICES", "").split(",") if g.strip()]
    if not visible:
        return [str(k) for k in range(n)]
    if len(visible) < n:
        sys.exit(f"--gpus {n}: CUDA_VISIBLE_DEVICES names only {len(visible)} GPUs "
                 f"({','.join(visible)})")
    return [g.strip() for g in visible[:n]]


def run_parts(script, parts, extra, work, deadline=None):
    """One `script` process per part, all at once, part k on the k-th of part_gpus() with
    its cells (--cells) and the arguments extra(k), its output in work/gpu<k>.log; their exit
    codes, in order (la_bench.py's and la_bwd_bench.py's --gpus). A part still running at
    `deadline` (time.time()'s clock) is stopped there (its table so far is kept)."""
    procs, gpus = [], part_gpus(len(parts))
    for k, part in enumerate(parts):
        cmd = [sys.executable, str(Path(script).resolve()),
               "--cells", ";".join(f"{cfg.label}@{label}" for cfg, (label, _) in part)] + extra(k)
        log = open(work / f"gpu{k}.log", "w")
        procs.append((subprocess.Popen(cmd, env=dict(os.environ, CUDA_VISIBLE_DEVICES=gpus[k]),
                                       stdout=log, stderr=subprocess.STDOUT), log))
        print(f"GPU {gpus[k]}: {len(part)} cells, log {work / f'gpu{k}.log'}", flush=True)
    codes = []
    for k, (proc, log) in enumerate(procs):
        try:
            codes.append(proc.wait() if deadline is None
                         else proc.wait(max(0.0, deadline - time.time())))
        except subprocess.TimeoutExpired:
            proc.terminate()
            codes.append(proc.wait())
        log.close()
        print(f"GPU {gpus[k]}: exit {codes[-1]}, {len(parts[k])} cells", flush=True)
    return codes


def run_on_gpus(args, cells):
    """--gpus N: one la_bench.py per GPU over its share of the cells, all recording one commit,
    then their files joined by merge() into results-dir; 0 when every part ran and passed its
    checks, else 1. The parts' files and logs stay in a temporary folder."""
    out_dir = Path(args.results_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="la_bench_parts_"))
    commit = args.commit or git_commit()
    codes = run_parts(__file__, split_cells(cells, args.gpus), lambda k: [
        "--gates", args.gates, "--replays", str(args.replays), "--commit", commit,
        "--results-dir", str(work / f"gpu{k}")] + (["--no-fla"] if args.no_fla else []), work)
    failed, files = 0, []
    for k, rc in enumerate(codes):
        found = sorted((work / f"gpu{k}").glob("la_fwd_*.md"))
        failed += rc != 0 or not found
        files += found
    if not files:
        print("error: no part wrote a result file")
        return 1
    name = files[0].name[:-len(".md")] + ("_quick.md" if args.quick else ".md")
    if merge(str(out_dir / name), [str(f) for f in files]) != 0:
        return 1
    return 1 if failed else 0


def main():
    ap = argparse.ArgumentParser(description=" ".join(__doc__.split("\n\n")[0].split()))
    ap.add_argument("--only", choices=["gdn", "kda"])
    ap.add_argument("--quick", action="store_true", help="a few cells")
    ap.add_argument("--no-fla", action="store_true", help="time ours only")
    ap.add_argument("--short-seqs", action="store_true",
                    help="also 8192 sequences of 4 tokens and 1024 of 8")
    ap.add_argument("--gates", choices=["fast", "slow", "both"], default="both",
                    help="gate regimes to run (docs/benchmarking.md); both: side by side")
    ap.add_argument("--seqs", help="comma-separated sequence-set labels to run")
    ap.add_argument("--configs", help="comma-separated config labels to run, e.g. 'GDN 16/48' "
                    "(also 'KDA 8/8 gate-in-kernel softplus', not in the grid)")
    ap.add_argument("--replays", type=int, default=100, help="timed graph replays (>= 100)")
    ap.add_argument("--results-dir", default=str(REPO / "bench" / "results"))
    ap.add_argument("--commit", help="the commit to record when this tree has no git history")
    ap.add_argument("--self-check", action="store_true",
                    help="check the gate regimes' inputs on the CPU (no GPU), exit 0 or 1")
    ap.add_argument("--plot-from", metavar="RESULT.md",
                    help="draw the plot of a result file (beside it, .png) and exit")
    ap.add_argument("--gpus", type=int, default=1,
                    help="split the cells over this many GPUs of this machine, one process "
                    "each, and join their result files into one")
    ap.add_argument("--cells", help="semicolon-separated 'config@seqs' cells to run instead of "
                    "--configs x --seqs (what --gpus gives each process)")
    ap.add_argument("--merge", nargs="+", metavar=("OUT.md", "RESULT.md"),
                    help="write the cells of RESULT.md files (one commit, device and versions; "
                    "a grid run in parts) to OUT.md as one result, and exit")
    args = ap.parse_args()
    if args.self_check:
        return self_check()
    if args.merge:
        if len(args.merge) < 2:
            ap.error("--merge needs OUT.md and at least one RESULT.md")
        return merge(args.merge[0], args.merge[1:])
    if args.plot_from:
        md = Path(args.plot_from)
        ok = plot(every_cell_from_markdown(md.read_text()), md.with_suffix(".png"), md.stem)
        print(f"{md.with_suffix('.png')}" if ok else "error: no matplotlib, or nothing compared")
        return 0 if ok else 1
    args.replays = max(100, args.replays)
    regimes = list(REGIMES) if args.gates == "both" else [args.gates]

    configs = [c for c in GDN_CONFIGS + KDA_CONFIGS if args.only in (None, c.op)]
    seq_sets = SEQ_SETS + (SHORT_SEQ_SETS if args.short_seqs else [])
    if args.quick:
        configs = [c for c in configs if c.label in QUICK["configs"]]
        seq_sets = [s for s in seq_sets if s[0] in QUICK["seqs"]]
    if args.seqs:
        wanted = set(args.seqs.split(","))
        seq_sets = [s for s in seq_sets if s[0] in wanted]
    if args.configs:
        wanted = set(args.configs.split(","))
        configs = [c for c in configs + EXTRA_CONFIGS
                   if c.label in wanted and args.only in (None, c.op)]
    cells_todo = [(cfg, sq) for cfg in configs for sq in seq_sets]
    if args.cells:
        try:
            cells_todo = parse_cells(args.cells)
        except ValueError as e:
            print(f"error: --cells: {e}")
            return 1
    if args.gpus < 1:
        ap.error("--gpus needs a count of at least 1")
    if args.gpus > 1:   # (before this process takes a GPU)
        return run_on_gpus(args, cells_todo)
    seq_order = [label for label, _ in SEQ_SETS + SHORT_SEQ_SETS]
    seq_labels = [label for label in seq_order if any(sq[0] == label for _, sq in cells_todo)]

    if not torch.cuda.is_available():
        print("error: no CUDA device")
        return 1
    import tile_la as tl
    try:
        tl.load_library()
    except RuntimeError as e:  # LibraryNotFoundError lists where it looked
        print(f"error: {e}")
        return 1
    fla, fla_version = load_fla(args.no_fla)
    dev = torch.device("cuda", torch.cuda.current_device())
    name = torch.cuda.get_device_name(dev)


    with torch.no_grad():
        peak = matmul_peak_tflops(dev, args.replays)
    date = datetime.date.today().isoformat()
    stem = f"la_fwd_{date}_{device_short_name(name)}" + ("_quick" if args.quick else "")
    out_dir = Path(args.results_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    md_path, png_path = out_dir / f"{stem}.md", out_dir / f"{stem}.png"
    header = [f"# GDN / KDA forward: tile_la against FLA ({'quick' if args.quick else 'grid'})", "",
              f"- Device: {name}",
              f"- Date: {datetime.datetime.now().isoformat(timespec='seconds')}",
              f"- Commit: {args.commit or git_commit()}",
              f"- Versions: {versions(fla_version)}",
              f"- Command: `{shlex.join([os.path.basename(sys.executable)] + sys.argv)}`",
              f"- bf16 matmul 8192^3 measured in this run: {peak:.0f} TFLOP/s (graph timed)",
              "- K = V = 128, bf16 q/k/v, l2norm in kernel, fp32 beta/gates/states, initial "
              "state given, final state requested; KDA with safe_gate, lower_bound -5 (except "
              "the softplus in-kernel gate)"]
    header += [f"- Gates, {r}: {GATE_TEXT[r]}" for r in regimes]
    header += [f"- Times: median of {args.replays} CUDA-graph replays of N calls, divided by N; "
               "work = 164 kFLOP per token per value head",
               f"- Check: ours against FLA with FLA's metric, relative RMS < {CHECK_RATIO}, in "
               "every regime"]

    print(f"{name}: bf16 matmul {peak:.0f} TFLOP/s; gates: {', '.join(regimes)}")
    print(f"{'config':32} {'seqs':16}" + "".join(
        f" | {r + ' ours':>9} {'FLA':>8} {'speedup':>7} {'err':>7}" for r in regimes))
    cells = []
    with torch.no_grad():
        for cfg, (label, lens) in cells_todo:
            c = run_cell(tl, fla, cfg, label, lens, dev, args.replays, regimes)
            cells.append(c)
            line = f"{cfg.label:32} {label:16}"
            notes = []
            for r in regimes:
                run = c.runs[r]
                line += (f" | {f3(run.ours_ms):>9} {f3(run.fla_ms):>8} {fx(run.speedup):>7} "
                         f"{fe(worst(run.err_o, run.err_ht)):>7}")
                if run.ok is False:
                    notes.append(f"{r}: CHECK FAILED")
                if run.note:
                    notes.append(f"{r}: {run.note}")
            print(line + ("  " + "; ".join(notes) if notes else ""), flush=True)
            md_path.write_text(markdown(cells, header, peak, seq_labels))  # survives a kill
    text = markdown(cells, header, peak, seq_labels)
    if plot(cells, png_path, name):
        text += f"\n![speedup over FLA]({png_path.name})\n"
    else:
        print("no plot (matplotlib not importable, or nothing compared)")
    md_path.write_text(text)
    print()
    print(text)
    print(f"written to {md_path}")
    return 1 if any(r.ok is False for c in cells for r in c.runs.values()) else 0


if __name__ == "__main__":
    sys.exit(main())
