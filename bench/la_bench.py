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
sigmoid(randn) fp32, g = logsigmoid(randn) fp32 (KDA per channel), fp32 randn initial
state, final state requested. KDA runs with safe_gate=True, lower_bound=-5 on both sides,
as FLA's benchmark does. FLA is fla.ops.gated_delta_rule.chunk_gated_delta_rule and
fla.ops.kda.chunk_kda with FLA_DISABLE_BACKEND_DISPATCH=1.

Timing: after a warm-up (FLA's autotuning included), N calls are captured in one CUDA
graph; each of >= 100 replays is timed with CUDA events; the reported time is the median
replay / N. Every timed cell is first checked: our o and final state against FLA's with
FLA's metric (relative RMS < 0.01). Work is counted as 164 kFLOP per token per value head
(docs/benchmarking.md), shown as TFLOP/s and as % of the bf16 matmul rate measured in the
same run (torch.matmul 8192^3, graph timed).

usage: python3 bench/la_bench.py [--only gdn|kda] [--quick] [--no-fla] [--short-seqs]
                                 [--seqs 1x8192,8192x4] [--configs 'GDN 2/8,KDA 8/8']
                                 [--replays 100]
Writes bench/results/la_fwd_<date>_<device>[_quick].md (and .png when matplotlib imports).
Needs the tile_la package importable (PYTHONPATH=python from the checkout, or pip install
--no-build-isolation ./python) and its library found (TILE_LA_LIBRARY=build/kernels/libtilela.so;
tile_la/_abi.py lists the places looked at).
"""
import argparse
import datetime
import os
import re
import statistics
import sys
from dataclasses import dataclass
from pathlib import Path

import torch
import torch.nn.functional as F

REPO = Path(__file__).resolve().parents[1]   # for the default results folder only

D = 128
FLOP_PER_TOKEN_HEAD = 164e3     # chunked forward at C = 64, K = V = 128 (docs/benchmarking.md)
CHECK_RATIO = 0.01              # FLA's metric, ours against FLA
GRAPH_TARGET_MS = 20.0          # aim for replays of about this length


@dataclass
class Config:
    op: str             # "gdn" or "kda"
    H: int
    HV: int
    gate: bool = False  # KDA: gate in kernel with A_log, dt_bias, lower_bound -5

    @property
    def label(self):
        return f"{self.op.upper()} {self.H}/{self.HV}" + (" gate-in-kernel lb-5" if self.gate else "")


GDN_CONFIGS = [Config("gdn", h, hv) for h, hv in
               [(2, 8), (4, 16), (8, 32), (16, 64), (16, 32), (8, 24), (16, 48), (32, 32)]]
KDA_CONFIGS = [Config("kda", h, hv) for h, hv in [(8, 8), (16, 16), (32, 32), (64, 64), (16, 32)]]
KDA_CONFIGS.append(Config("kda", 8, 8, gate=True))

SEQ_SETS = [("1x32768", [32768]), ("1x8192", [8192]), ("1x2048", [2048]),
            ("8192x4", [8192] * 4), ("1024x8", [1024] * 8),
            ("28672+4096", [28672, 4096]), ("1024+7168", [1024, 7168])]
SHORT_SEQ_SETS = [("8192 seqs of 4", [4] * 8192), ("1024 seqs of 8", [8] * 1024)]
QUICK = {"configs": {"GDN 2/8", "GDN 16/64", "KDA 8/8", "KDA 16/32", "KDA 8/8 gate-in-kernel lb-5"},
         "seqs": {"1x8192", "8192x4", "1024+7168"}}


# ---- inputs and calls --------------------------------------------------------------------------

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


def make_inputs(cfg, lens, dev, seed=0):
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
    else:
        x.g = F.logsigmoid(x.g)
    if N > 1:
        offsets = [0]
        for n in lens:
            offsets.append(offsets[-1] + n)
        x.cu_cpu = torch.tensor(offsets, dtype=torch.int64)
        x.cu64 = x.cu_cpu.to(dev)
        x.cu32 = x.cu64.to(torch.int32)
    return x


def kwargs(cfg, x, fla):
    kw = dict(initial_state=x.h0, output_final_state=True, use_qk_l2norm_in_kernel=True)
    if fla:
        kw.update(cu_seqlens=x.cu64, cu_seqlens_cpu=x.cu_cpu)
    else:
        kw.update(cu_seqlens=x.cu32, cu_seqlens_cpu=x.cu_cpu)
    if cfg.op == "kda":
        kw.update(safe_gate=True, lower_bound=-5.0)
        if cfg.gate:
            kw.update(use_gate_in_kernel=True, A_log=x.A_log, dt_bias=x.dt_bias)
    return kw


def op_fn(impl, cfg):
    return impl.chunk_kda if cfg.op == "kda" else impl.chunk_gated_delta_rule


def call(impl, cfg, x, fla):
    """One forward call; returns (o, final_state)."""
    out = op_fn(impl, cfg)(x.q, x.k, x.v, x.g, x.beta, **kwargs(cfg, x, fla))
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


# ---- one cell ----------------------------------------------------------------------------------

@dataclass
class Cell:
    cfg: Config
    seqs: str
    tokens: int
    ours_ms: float = None
    fla_ms: float = None
    err_o: float = None
    err_ht: float = None
    ok: bool = None         # None: not checked (no FLA)
    note: str = ""

    @property
    def flops(self):
        return FLOP_PER_TOKEN_HEAD * self.tokens * self.cfg.HV

    @property
    def speedup(self):
        return self.fla_ms / self.ours_ms if self.ours_ms and self.fla_ms else None


def run_cell(tl, fla, cfg, label, lens, dev, replays):
    cell = Cell(cfg, label, sum(lens))
    try:
        x = make_inputs(cfg, lens, dev)
        o, ht = call(tl, cfg, x, False)
        if fla is not None:  # correctness of this very cell, ours against FLA
            fo, fht = call(fla, cfg, x, True)
            cell.err_o, cell.err_ht = rel_rms(fo, o), rel_rms(fht, ht)
            cell.ok = cell.err_o < CHECK_RATIO and cell.err_ht < CHECK_RATIO
            del fo, fht
        elif not (torch.isfinite(o).all() and torch.isfinite(ht).all()):
            cell.ok, cell.note = False, "NaN/inf in ours"
        del o, ht
        cell.ours_ms = graph_time(lambda: call(tl, cfg, x, False), replays)
        if fla is not None:
            cell.fla_ms = graph_time(lambda: call(fla, cfg, x, True), replays)
    except torch.cuda.OutOfMemoryError:
        cell.note = "out of memory"
    except Exception as e:  # report the cell, keep the run going
        lines = str(e).strip().splitlines()
        cell.note = f"{type(e).__name__}: {(lines[0] if lines else '')[:100]}"
    finally:
        x = None
        torch.cuda.synchronize()
        torch.cuda.empty_cache()
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


def f3(x):
    return "-" if x is None else f"{x:.3f}"


def fe(x):
    return "-" if x is None else ("nan" if x != x else f"{x:.1e}")


def markdown(cells, header, peak, seq_labels):
    lines = list(header) + ["", "## Time per call, ms: ours / FLA (speedup)", ""]
    configs = list(dict.fromkeys(c.cfg.label for c in cells))
    lines.append("| config | " + " | ".join(seq_labels) + " |")
    lines.append("|---|" + "---|" * len(seq_labels))
    by_key = {(c.cfg.label, c.seqs): c for c in cells}
    for label in configs:
        row = []
        for s in seq_labels:
            c = by_key.get((label, s))
            if c is None:
                row.append("")
            elif c.ours_ms is None:
                row.append(c.note or "failed")
            else:
                sp = f" ({c.speedup:.2f}x)" if c.speedup else ""
                row.append(f"{f3(c.ours_ms)} / {f3(c.fla_ms)}{sp}" + ("" if c.ok is not False else " WRONG"))
        lines.append(f"| {label} | " + " | ".join(row) + " |")
    lines += ["", "## Every cell", "",
              "| config | seqs | tokens | ours ms | FLA ms | speedup | ours TFLOP/s | ours % peak "
              "| FLA TFLOP/s | FLA % peak | err o | err ht | check | note |",
              "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for c in cells:
        ot = c.flops / (c.ours_ms * 1e9) if c.ours_ms else None
        ft = c.flops / (c.fla_ms * 1e9) if c.fla_ms else None
        pct = (lambda t: "-" if t is None else f"{100 * t / peak:.1f}%")
        check = {True: "ok", False: "FAIL", None: "-"}[c.ok]
        lines.append(f"| {c.cfg.label} | {c.seqs} | {c.tokens} | {f3(c.ours_ms)} | {f3(c.fla_ms)} | "
                     f"{'-' if not c.speedup else f'{c.speedup:.2f}x'} | "
                     f"{'-' if ot is None else f'{ot:.1f}'} | {pct(ot)} | "
                     f"{'-' if ft is None else f'{ft:.1f}'} | {pct(ft)} | {fe(c.err_o)} | "
                     f"{fe(c.err_ht)} | {check} | {c.note} |")
    timed = [c for c in cells if c.speedup]
    if timed:
        sp = sorted(c.speedup for c in timed)
        geo = 1.0
        for s in sp:
            geo *= s ** (1.0 / len(sp))
        lines += ["", f"Speedup over FLA: geometric mean {geo:.2f}x over {len(sp)} cells, "
                      f"min {sp[0]:.2f}x, max {sp[-1]:.2f}x."]
    bad = [c for c in cells if c.ok is False]
    if bad:
        lines.append("Cells failing the check against FLA: "
                     + "; ".join(f"{c.cfg.label} {c.seqs}" for c in bad))
    return "\n".join(lines) + "\n"


def plot(cells, path, title):
    """Grouped bars of the speedup over FLA per cell, one panel per op; False when
    matplotlib is missing or nothing was compared."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except Exception:
        return False
    ops = [op for op in ("gdn", "kda") if any(c.cfg.op == op and c.speedup for c in cells)]
    if not ops:
        return False
    fig, axes = plt.subplots(len(ops), 1, figsize=(14, 4.5 * len(ops)), squeeze=False)
    for ax, op in zip(axes[:, 0], ops):
        mine = [c for c in cells if c.cfg.op == op]
        configs = list(dict.fromkeys(c.cfg.label for c in mine))
        seqs = list(dict.fromkeys(c.seqs for c in mine))
        width = 0.8 / max(1, len(seqs))
        for j, s in enumerate(seqs):
            vals = [next((c.speedup or 0.0 for c in mine if c.cfg.label == cl and c.seqs == s), 0.0)
                    for cl in configs]
            ax.bar([i + j * width for i in range(len(configs))], vals, width, label=s)
        ax.axhline(1.0, color="black", linewidth=0.8)
        ax.set_xticks([i + 0.4 - width / 2 for i in range(len(configs))])
        ax.set_xticklabels(configs, fontsize=8)
        ax.set_ylabel("speedup over FLA (x)")
        ax.set_title(f"{op.upper()} forward, {title}")
        ax.legend(fontsize=7, ncol=4)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return True


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


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--only", choices=["gdn", "kda"])
    ap.add_argument("--quick", action="store_true", help="a few cells")
    ap.add_argument("--no-fla", action="store_true", help="time ours only")
    ap.add_argument("--short-seqs", action="store_true",
                    help="also 8192 sequences of 4 tokens and 1024 of 8")
    ap.add_argument("--seqs", help="comma-separated sequence-set labels to run")
    ap.add_argument("--configs", help="comma-separated config labels to run, e.g. 'GDN 16/48'")
    ap.add_argument("--replays", type=int, default=100, help="timed graph replays (>= 100)")
    ap.add_argument("--results-dir", default=str(REPO / "bench" / "results"))
    args = ap.parse_args()
    args.replays = max(100, args.replays)

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
        configs = [c for c in configs if c.label in wanted]
    seq_labels = [s[0] for s in seq_sets]

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
              f"- Versions: {versions(fla_version)}",
              f"- Command: `{' '.join([os.path.basename(sys.executable)] + sys.argv)}`",
              f"- bf16 matmul 8192^3 measured in this run: {peak:.0f} TFLOP/s (graph timed)",
              "- K = V = 128, bf16 q/k/v, l2norm in kernel, fp32 beta/gates/states, initial "
              "state given, final state requested; KDA with safe_gate, lower_bound -5",
              f"- Times: median of {args.replays} CUDA-graph replays of N calls, divided by N; "
              "work = 164 kFLOP per token per value head",
              f"- Check: ours against FLA with FLA's metric, relative RMS < {CHECK_RATIO}"]

    print(f"{name}: bf16 matmul {peak:.0f} TFLOP/s")
    print(f"{'config':30} {'seqs':16} {'ours ms':>9} {'FLA ms':>9} {'speedup':>8} "
          f"{'TFLOP/s':>8} {'err o':>8} {'err ht':>8}")
    cells = []
    with torch.no_grad():
        for cfg in configs:
            for label, lens in seq_sets:
                c = run_cell(tl, fla, cfg, label, lens, dev, args.replays)
                cells.append(c)
                tf = c.flops / (c.ours_ms * 1e9) if c.ours_ms else None
                print(f"{cfg.label:30} {label:16} {f3(c.ours_ms):>9} {f3(c.fla_ms):>9} "
                      f"{'-' if not c.speedup else f'{c.speedup:.2f}x':>8} "
                      f"{'-' if tf is None else f'{tf:.1f}':>8} {fe(c.err_o):>8} {fe(c.err_ht):>8}"
                      f"{'' if c.ok is not False else '  CHECK FAILED'} {c.note}", flush=True)
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
    return 1 if any(c.ok is False for c in cells) else 0


if __name__ == "__main__":
    sys.exit(main())
