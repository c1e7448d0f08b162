#!/usr/bin/env python3
"""la_bwd_bench.py: training speed, ours (tile_la.chunk_kda and chunk_gated_delta_rule under
autograd) against FLA's, forward, backward and forward+backward, on la_bench.py's grid and
inputs (both gate regimes of docs/benchmarking.md, KDA with safe_gate and lower_bound -5 on both
sides).

Timing as la_bench.py's: N calls captured in one CUDA graph, the median of >= 100 timed
replays / N. "fwd" is the forward with autograd recording (what training runs), "fwd+bwd" the
forward then torch.autograd.grad of sum(o do) + sum(ht dht) with respect to q, k, v, g, beta and
h0 (and A_log, dt_bias with the gate in kernel); "bwd" is their difference (the backward's
kernels run on the forward's stream, so they are captured together). Work: 410 kFLOP per token
and value head for the backward (issue 35; FLA's backward as written does about 508k), 164k for
the forward. Every cell is checked first: our gradients against FLA's with FLA's metric.

GDN: FLA refuses its GDN backward on Hopper with Triton >= 3.4 and < 3.7.1 (that Triton gives
wrong gradients in one of its kernels). For timing only, this script lifts that check (its flag
in fla.ops.common.chunk_o) and says so in its header; the "grad err vs FLA" column of such a
cell then compares with gradients FLA itself calls wrong (tests/gpu/la_bwd.py judges ours
against the fp64 reference).

usage: python3 bench/la_bwd_bench.py [--configs 'KDA 8/8,GDN 2/8'] [--seqs 1x8192,8192x4]
                                     [--disable-recompute]
                                     [--gates fast|slow|both] [--replays 100] [--out FILE.md]
                                     [--gpus N] [--time-limit SECONDS]
--gpus N splits the cells over N GPUs of this machine, one process each (a cell's ours and FLA
in one process on one GPU), and joins their tables: FLA's autotuning, minutes per KDA shape,
then runs for N configs at once. --time-limit starts no cell past its seconds and lists the
cells not reached under the table (exit 1): a run on a machine lent for a while ends with a
table of what it measured; with --gpus a part still in a cell STOP_GRACE_S later is stopped
and its rows so far joined.
"""
import argparse
import datetime
import os
import re
import sys
import tempfile
import time
from pathlib import Path

import torch

import la_bench as lb   # beside this file (the script's folder is on sys.path): grid, inputs, timing

BWD_FLOP = 410e3
FWD_FLOP = lb.FLOP_PER_TOKEN_HEAD
GRAD_RATIO = 0.02
# the training targets (issues 35, 36): at >= 8192 tokens, the backward 1.5x FLA's and the
# forward and backward together 2x
TARGET_BWD, TARGET_FWD_BWD = 1.5, 2.0
TABLE_HEAD = ("| config | seqs | gates | fwd ours / FLA ms | bwd ours / FLA ms (speedup) | "
              "fwd+bwd ours / FLA ms (speedup) | bwd TFLOP/s ours / FLA | grad err vs FLA |")
TABLE_RULE = "|---|---|---|---|---|---|---|---|"


def targets_line(measured):
    """measured: (label, tokens, bwd speedup or None, fwd+bwd speedup or None) per cell and
    regime; the cells of >= lb.TARGET_MIN_TOKENS tokens short of either target, or ''."""
    counted = [m for m in measured if m[1] >= lb.TARGET_MIN_TOKENS]
    if not counted:
        return ""
    short = [f"{label} (bwd {f'{b:.3f}x' if b else '-'}, fwd+bwd {f'{fb:.3f}x' if fb else '-'})"
             for label, _, b, fb in counted
             if not b or not fb or b < TARGET_BWD or fb < TARGET_FWD_BWD]
    return (f"Targets (>= {lb.TARGET_MIN_TOKENS} tokens: backward {TARGET_BWD:g}x FLA's, forward "
            f"and backward {TARGET_FWD_BWD:g}x): {len(counted) - len(short)} of {len(counted)} "
            "met" + ("; short: " + "; ".join(short) if short else "") + ".")


TARGETS_RE = re.compile(r"^Targets \(.*\): (\d+) of (\d+) met(?:; short: (.*))?\.$")
LIFTED = ("FLA's GDN backward check (Triton >= 3.4 and < 3.7.1 on Hopper) lifted for "
          "timing: its GDN gradients from this Triton are not a reference.")
T_START = time.time()
STOP_GRACE_S = 120   # how long past --time-limit a part may finish the cell it is in


def unreached_note(limit, labels):
    """The note under a table that lists the cells (config seqs regime) not reached."""
    return (f"Not reached within --time-limit {limit:g} s: " if limit else
            "Not reached (a part stopped: its log says why): ") + "; ".join(labels) + "."


def grid_key(label, seqs, regime):
    """A row's place in the grid's order (config, sequence set, gate regime)."""
    order = [c.label for c in lb.GDN_CONFIGS + lb.KDA_CONFIGS + lb.EXTRA_CONFIGS]
    seq_order = [s for s, _ in lb.SEQ_SETS + lb.SHORT_SEQ_SETS]
    return (order.index(label) if label in order else len(order),
            seq_order.index(seqs) if seqs in seq_order else len(seq_order),
            lb.REGIMES.index(regime) if regime in lb.REGIMES else len(lb.REGIMES))


def join_parts(texts):
    """The tables of several runs' outputs (parts of one run) as one: their rows in the grid's
    order, FLA's lifted check noted once, the targets line summed over the parts."""
    rows, met, counted, short, lifted, devices = [], 0, 0, [], False, []
    for text in texts:
        lifted |= LIFTED in text
        m = re.search(r": ([^:]*), \d{4}-\d{2}-\d{2}, commit ", text.splitlines()[0])
        devices += [m[1]] if m and m[1] not in devices else []
        for line in text.splitlines():
            cols = [c.strip() for c in line.strip("|").split("|")]
            if line.startswith("| ") and not line.startswith("| config |") and len(cols) >= 3:
                rows.append((grid_key(*cols[:3]), line))
            m = TARGETS_RE.match(line)
            if m:
                met, counted = met + int(m[1]), counted + int(m[2])
                short += m[3].split("; ") if m[3] else []
    rows.sort(key=lambda r: r[0])
    short.sort(key=lambda s: grid_key(*s.split(" (")[0].rsplit(" ", 2)))
    lines = [TABLE_HEAD, TABLE_RULE] + [line for _, line in rows]
    targets = (f"Targets (>= {lb.TARGET_MIN_TOKENS} tokens: backward {TARGET_BWD:g}x FLA's, "
               f"forward and backward {TARGET_FWD_BWD:g}x): {met} of {counted} met"
               + ("; short: " + "; ".join(short) if short else "") + ".") if counted else ""
    return lines, targets, lifted, ", ".join(devices) or "unknown device"


def run_on_gpus(args, cells, what):
    """--gpus N: one la_bwd_bench.py per GPU over its share of the cells (la_bench's split_cells
    and run_parts), then their tables joined; 0 when every part ran, else 1."""
    work = Path(tempfile.mkdtemp(prefix="la_bwd_bench_parts_"))
    limit = ["--time-limit", str(args.time_limit)] if args.time_limit else []
    deadline = time.time() + args.time_limit + STOP_GRACE_S if args.time_limit else None
    codes = lb.run_parts(__file__, lb.split_cells(cells, args.gpus), lambda k: [
        "--gates", args.gates, "--replays", str(args.replays), "--commit", args.commit,
        "--out", str(work / f"gpu{k}.md")] + (["--no-fla"] if args.no_fla else [])
        + (["--disable-recompute"] if args.disable_recompute else []) + limit, work, deadline)
    failed, texts = 0, []
    for k, rc in enumerate(codes):
        out = work / f"gpu{k}.md"
        failed += rc != 0 or not out.exists()
        texts += [out.read_text()] if out.exists() else []
    if not texts:
        print("error: no part wrote its table")
        return 1
    lines, targets, lifted, device = join_parts(texts)
    reached = {tuple(c.strip() for c in line.strip("|").split("|")[:3]) for line in lines[2:]}
    unreached = [f"{cfg.label} {label} {regime}" for cfg, (label, _) in cells
                 for regime in regimes_of(args.gates) if (cfg.label, label, regime) not in reached]
    head = (f"la_bwd_bench.py --gpus {args.gpus} {what}: {len(texts)} GPUs of one machine "
            f"({device}), {datetime.date.today()}, commit {args.commit}")
    text = head + ("\n\n" + LIFTED if lifted else "") + "\n\n" + "\n".join(lines) + "\n"
    text += "\n" + targets + "\n" if targets else ""
    text += "\n" + unreached_note(args.time_limit, unreached) + "\n" if unreached else ""
    print(text)
    if args.out:
        Path(args.out).write_text(text)
    return 1 if failed or unreached else 0


def regimes_of(gates):
    """--gates' regimes, in the grid's order."""
    return list(lb.REGIMES) if gates == "both" else [gates]


def fla_ops(gdn):
    """FLA's two ops; with gdn, its GDN backward's Triton check lifted (timing only)."""
    import fla.ops.common.chunk_o as chunk_o
    from fla.ops.gated_delta_rule import chunk_gated_delta_rule
    from fla.ops.kda import chunk_kda
    lifted = False
    if gdn and not chunk_o.TRITON_ABOVE_3_7_1:
        chunk_o.TRITON_ABOVE_3_7_1 = True
        lifted = True
    ops = type("FLA", (), {"chunk_kda": staticmethod(chunk_kda),
                           "chunk_gated_delta_rule": staticmethod(chunk_gated_delta_rule)})
    return ops, lifted


def leaves_of(cfg, x):
    names = ["q", "k", "v", "g", "beta", "h0"] + (["A_log", "dt_bias"] if cfg.gate else [])
    for n in names:
        setattr(x, n, getattr(x, n).detach().requires_grad_(True))
    return [getattr(x, n) for n in names]


def call(impl, cfg, x, fla, saved):
    """la_bench's call, with disable_recompute where asked: KDA on both sides, GDN on ours
    (the forward keeps gdn_kkt's outputs; FLA's GDN always keeps its A and recomputes the
    rest, and takes no such keyword)."""
    keep = saved and (cfg.op == "kda" or not fla)
    return lb.call(impl, cfg, x, fla, **({"disable_recompute": True} if keep else {}))


def time_cell(impl, cfg, x, fla, leaves, do, dht, replays, saved):
    def fwd():
        return call(impl, cfg, x, fla, saved)

    def fwd_bwd():
        o, ht = fwd()
        return torch.autograd.grad((o, ht), leaves, (do, dht))

    return lb.graph_time(fwd, replays), lb.graph_time(fwd_bwd, replays)


def run(tl, fla, cfg, lens, regime, replays, saved):
    x = lb.make_inputs(cfg, lens, "cuda", regime)
    leaves = leaves_of(cfg, x)
    gen = torch.Generator(device="cuda").manual_seed(1)
    do = torch.randn(x.v.shape, device="cuda", generator=gen).to(x.v.dtype)
    dht = torch.randn(x.h0.shape, device="cuda", generator=gen)
    res = {}
    o, ht = call(tl, cfg, x, False, saved)
    ours = torch.autograd.grad((o, ht), leaves, (do, dht))
    if fla is not None:
        o, ht = call(fla, cfg, x, True, saved)
        theirs = torch.autograd.grad((o, ht), leaves, (do, dht))
        res["err"] = max(lb.rel_rms(b, a) for a, b in zip(ours, theirs))
    del o, ht, ours
    res["ours"] = time_cell(tl, cfg, x, False, leaves, do, dht, replays, saved)
    if fla is not None:
        res["fla"] = time_cell(fla, cfg, x, True, leaves, do, dht, replays, saved)
    return res


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--configs", default="KDA 8/8,KDA 16/32,GDN 2/8,GDN 16/32")
    ap.add_argument("--seqs", default="1x8192,8192x4")
    ap.add_argument("--gates", choices=["fast", "slow", "both"], default="both")
    ap.add_argument("--replays", type=int, default=100)
    ap.add_argument("--no-fla", action="store_true")
    ap.add_argument("--disable-recompute", action="store_true",
                    help="the forward keeps its products for the backward (KDA both "
                         "sides, GDN ours)")
    ap.add_argument("--out")
    ap.add_argument("--commit", help="the commit to record when this tree has no git history")
    ap.add_argument("--gpus", type=int, default=1,
                    help="split the cells over this many GPUs of this machine, one process "
                    "each, and join their tables")
    ap.add_argument("--cells", help="semicolon-separated 'config@seqs' cells to run instead of "
                    "--configs x --seqs (what --gpus gives each process)")
    ap.add_argument("--time-limit", type=float, default=0,
                    help="seconds: start no cell past this, and list those not reached (exit "
                    f"1); with --gpus each part's, a part stopped {STOP_GRACE_S} s later")
    args = ap.parse_args()
    os.environ.setdefault("FLA_DISABLE_BACKEND_DISPATCH", "1")
    configs = [c for c in lb.GDN_CONFIGS + lb.KDA_CONFIGS + lb.EXTRA_CONFIGS
               if c.label in args.configs.split(",")]
    seqs = [(s, lens) for s, lens in lb.SEQ_SETS if s in args.seqs.split(",")]
    cells = [(cfg, sq) for cfg in configs for sq in seqs]
    if args.cells:
        try:
            cells = lb.parse_cells(args.cells)
        except ValueError as e:
            print(f"error: --cells: {e}")
            return 1
    if args.gpus < 1:
        ap.error("--gpus needs a count of at least 1")
    what = (f"--cells '{args.cells}'" if args.cells else
            f"--configs '{args.configs}' --seqs {args.seqs}")
    what += f" --gates {args.gates}" + (" --disable-recompute" if args.disable_recompute else "")
    if args.gpus > 1:   # (before this process takes a GPU)
        args.commit = args.commit or lb.git_commit()
        return run_on_gpus(args, cells, what)
    if not torch.cuda.is_available():
        print("error: no CUDA device")
        return 1
    import tile_la as tl
    fla, lifted = None, False
    if not args.no_fla:
        fla, lifted = fla_ops(any(c.op == "gdn" for c, _ in cells))
    regimes = regimes_of(args.gates)
    lines = [TABLE_HEAD, TABLE_RULE]
    measured = []   # for targets_line
    unreached = []  # (config seqs regime) past --time-limit
    head = (f"la_bwd_bench.py {what}: {torch.cuda.get_device_name()}, {datetime.date.today()}, "
            f"commit {args.commit or lb.git_commit()}")
    if lifted:
        head += "\n\n" + LIFTED

    def table():
        text = head + "\n\n" + "\n".join(lines) + "\n"
        if fla is not None and targets_line(measured):
            text += "\n" + targets_line(measured) + "\n"
        if unreached:
            text += "\n" + unreached_note(args.time_limit, unreached) + "\n"
        return text

    def write_out():   # after every row: a run stopped from outside keeps what it measured
        if args.out:
            tmp = Path(f"{args.out}.tmp")
            tmp.write_text(table())
            os.replace(tmp, args.out)
    for cfg, (label, lens) in cells:
        for regime in regimes:
            if args.time_limit and time.time() - T_START > args.time_limit:
                unreached.append(f"{cfg.label} {label} {regime}")
                continue
            try:
                r = run(tl, fla, cfg, lens, regime, args.replays, args.disable_recompute)
            except Exception as e:   # noqa: BLE001 - report the cell, keep going
                note = str(e).strip().splitlines()[0][:100] if str(e).strip() else ""
                lines.append(f"| {cfg.label} | {label} | {regime} | "
                             f"{type(e).__name__}: {note} |||||")
                measured.append((f"{cfg.label} {label} {regime}", sum(lens), None, None))
                print(lines[-1], flush=True)
                write_out()
                torch.cuda.empty_cache()
                continue
            of, ofb = r["ours"]
            ff, ffb = r.get("fla", (None, None))
            ob, fb = ofb - of, (ffb - ff if ff else None)
            measured.append((f"{cfg.label} {label} {regime}", sum(lens),
                             fb / ob if fb else None, ffb / ofb if ffb else None))
            work = BWD_FLOP * sum(lens) * cfg.HV

            def s(a, b):
                return f"{a:.3f} / {b:.3f} ({b / a:.2f}x)" if b else f"{a:.3f}"
            rate = f"{work / ob / 1e9:.1f}" + (f" / {work / fb / 1e9:.1f}" if fb else "")
            err = f"{r['err']:.1e}" if "err" in r else "-"
            lines.append(f"| {cfg.label} | {label} | {regime} | "
                         f"{of:.3f}{f' / {ff:.3f}' if ff else ''} | {s(ob, fb)} | "
                         f"{s(ofb, ffb)} | {rate} | {err} |")
            print(lines[-1], flush=True)
            write_out()
            torch.cuda.empty_cache()
    print(table())
    write_out()
    return 1 if unreached else 0


if __name__ == "__main__":
    sys.exit(main())
