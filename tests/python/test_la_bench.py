#!/usr/bin/env python3
"""test_la_bench.py: bench/la_bench.py's result files on the CPU (no GPU, no FLA): the
"Targets" section (cells short of 2x at >= 8192 tokens, of 3x on one sequence of 32768 tokens
with at most 16 value heads, per gate regime) and --merge (a grid run in parts as one result:
every cell's numbers kept, cells in the grid's order, files of another commit, device or
versions and cells in two files refused); --cells and --gpus (each cell in one part, parts of
about equal cost, one process per GPU, their files joined; the processes faked);
la_bwd_bench.py's targets line (backward 1.5x, forward and backward 2x at >= 8192 tokens)
and --time-limit with --gpus (the cells no part reached listed, a part past the deadline
stopped with its rows kept). Needs torch (la_bench imports it) and bench/ on PYTHONPATH
(tests/python/CMakeLists.txt); without torch it prints "skipped" and exits 77."""
import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

try:
    import torch  # noqa: F401  (la_bench needs it)
except ImportError:
    print("skipped: no torch")
    sys.exit(77)

import la_bench as lb
import la_bwd_bench as bb

CONFIGS = {c.label: c for c in lb.GDN_CONFIGS + lb.KDA_CONFIGS}


def cell(label, seqs, tokens, fast, slow, ok=True):
    """A cell whose (ours, FLA) times per regime are given"""
    c = lb.Cell(CONFIGS[label], seqs, tokens)
    for regime, (ours, fla) in (("fast", fast), ("slow", slow)):
        c.runs[regime] = lb.Run(ours_ms=ours, fla_ms=fla, err_o=3.1e-3, err_ht=2.2e-3, ok=ok,
                                plan=f"{label} plan\n  0: a launch")
    return c


def header(commit="abc1234", device="NVIDIA H200", date="2026-01-01T00:00:00", peak=680):
    return ["# GDN / KDA forward: tile_la against FLA (grid)", "",
            f"- Device: {device}", f"- Date: {date}", f"- Commit: {commit}",
            "- Versions: torch 2, Triton 3, FLA 0.5", f"- Command: `la_bench.py run {date}`",
            f"- bf16 matmul 8192^3 measured in this run: {peak} TFLOP/s (graph timed)",
            "- Gates, fast: as bench.md", "- Gates, slow: as bench.md"]


def write(path, cells, **kw):
    seqs = list(dict.fromkeys(c.seqs for c in cells))
    path.write_text(lb.markdown(cells, header(**kw), 680, seqs))


FAILURES = []


def check(cond, what):
    if not cond:
        FAILURES.append(what)
        print(f"FAIL: {what}")


def test_targets():
    cells = [cell("GDN 2/8", "1x32768", 32768, (0.30, 0.99), (0.35, 0.99)),   # 3.3x ; 2.83x
             cell("GDN 2/8", "8192x4", 32768, (0.25, 0.4975), (0.24, 0.50)),  # 1.99x ; 2.08x
             cell("GDN 16/64", "1x32768", 32768, (1.5, 3.49), (1.5, 3.49)),   # 64 heads: 2x
             cell("GDN 2/8", "1x2048", 2048, (0.09, 0.09), (0.09, 0.09)),     # no target
             cell("KDA 8/8", "1x8192", 8192, (0.1, 0.4), (0.1, 0.4), ok=False)]
    text = "\n".join(lb.targets_section(cells))
    fast = next(line for line in text.splitlines() if line.startswith("- fast gates"))
    slow = next(line for line in text.splitlines() if line.startswith("- slow gates"))
    check(fast.startswith("- fast gates: 2 of 4 cells met: short: "), fast)
    check("GDN 2/8 8192x4 1.990x (target 2x)" in fast, fast)
    check("KDA 8/8 1x8192 4.000x (target 2x)" in fast, "a cell failing its check is short")
    check("1x32768" not in fast and "1x2048" not in fast, fast)
    check(slow.startswith("- slow gates: 2 of 4 cells met: short: "), slow)
    check("GDN 2/8 1x32768 2.829x (target 3x)" in slow, slow)
    check("8192x4" not in slow, slow)
    check(lb.targets_section(cells[3:4]) == [], "no section without a cell that has a target")
    no_fla = cell("GDN 2/8", "1x8192", 8192, (0.1, None), (0.1, None))
    check(lb.targets_section([no_fla]) == [], "no section without FLA (--no-fla)")


def test_merge():
    a = [cell("KDA 8/8", "1x8192", 8192, (0.175, 0.400), (0.1751, 0.4002)),
         cell("GDN 2/8", "8192x4", 32768, (0.2485, 0.4966), (0.2490, 0.4970))]
    b = [cell("GDN 2/8", "1x32768", 32768, (0.2951, 0.9760), (0.2980, 0.9761))]
    with tempfile.TemporaryDirectory() as d:
        d = Path(d)
        write(d / "a.md", a, date="2026-01-01T01:00:00")
        write(d / "b.md", b, date="2026-01-01T02:00:00", peak=690)
        check(lb.merge(str(d / "m.md"), [str(d / "a.md"), str(d / "b.md")]) == 0, "merge")
        text = (d / "m.md").read_text()
        got = lb.every_cell_from_markdown(text)
        check([(c.cfg.label, c.seqs) for c in got] ==
              [("GDN 2/8", "1x32768"), ("GDN 2/8", "8192x4"), ("KDA 8/8", "1x8192")],
              f"the grid's order: {[(c.cfg.label, c.seqs) for c in got]}")
        want = {(c.cfg.label, c.seqs): c for c in a + b}
        for c in got:
            w = want[(c.cfg.label, c.seqs)]
            for r in ("fast", "slow"):
                g, e = c.runs[r], w.runs[r]
                check((g.ours_ms, g.fla_ms, g.ok) == (e.ours_ms, e.fla_ms, e.ok),
                      f"{c.cfg.label} {c.seqs} {r}: {g} against {e}")
                check(abs(g.speedup - e.speedup) < 1e-9, "speedups from the kept digits")
                check(g.plan == e.plan, f"{c.cfg.label} {c.seqs}: its plan")
        check("- Runs: 2, each cell's" in text and "la_bench.py run 2026-01-01T02:00:00" in text,
              "the runs listed")
        check("680-690 TFLOP/s" in text, "both runs' matmul rates")
        check("GDN 2/8 8192x4 1.998x (target 2x)" in text.split("## Targets")[1],
              "a target judged on the kept digits")
        # a merged file merges again (--gpus writes one per call): its runs and rates carried
        write(d / "e.md", [cell("KDA 8/8", "8192x4", 32768, (0.45, 0.97), (0.45, 0.97))],
              date="2026-01-01T03:00:00", peak=670)
        check(lb.merge(str(d / "m2.md"), [str(d / "m.md"), str(d / "e.md")]) == 0, "re-merge")
        text2 = (d / "m2.md").read_text()
        check(len(lb.every_cell_from_markdown(text2)) == 4, "every cell of both")
        check("- Runs: 3, each cell's" in text2 and "2026-01-01T03:00:00" in text2 and
              "2026-01-01T01:00:00" in text2, "the runs of both, merged ones included")
        check("670-690 TFLOP/s" in text2, "the rates of all three runs")
        # refused: another commit, a cell in two files
        write(d / "c.md", b, commit="def5678")
        check(lb.merge(str(d / "x.md"), [str(d / "a.md"), str(d / "c.md")]) == 1, "commits")
        check(lb.merge(str(d / "x.md"), [str(d / "b.md"), str(d / "b.md")]) == 1, "a cell twice")
        (d / "y.md").write_text("# not a result\n\n- Device: NVIDIA H200\n")
        check(lb.merge(str(d / "x.md"), [str(d / "y.md")]) == 1, "not a result file")
        check(not (d / "x.md").exists(), "nothing written when refused")


def test_cells_split():
    cells = lb.parse_cells("GDN 2/8@1x8192; KDA 8/8 gate-in-kernel lb-5@8192x4;GDN 16/64@1x32768")
    check([(c.label, s) for c, (s, _) in cells] ==
          [("GDN 2/8", "1x8192"), ("KDA 8/8 gate-in-kernel lb-5", "8192x4"),
           ("GDN 16/64", "1x32768")], f"--cells parsed: {cells}")
    check(cells[1][1][1] == [8192] * 4, "the sequence set's lengths")
    for bad in ("GDN 3/8@1x8192", "GDN 2/8@1x9999", "GDN 2/8"):
        try:
            lb.parse_cells(bad)
            check(False, f"--cells '{bad}' accepted")
        except ValueError as e:
            check(bad.split("@")[0] in str(e) or "1x9999" in str(e), f"'{bad}': {e}")
    grid = [(c, s) for c in lb.GDN_CONFIGS + lb.KDA_CONFIGS for s in lb.SEQ_SETS]
    parts = lb.split_cells(grid, 4)
    flat = [x for p in parts for x in p]
    check(len(parts) == 4 and len(flat) == len(grid) and
          all(flat.count(x) == 1 for x in grid), "every cell in exactly one part")
    check(all(p == sorted(p, key=grid.index) for p in parts), "each part in the grid's order")
    def load(p):
        return (sum(lb.cell_cost(c, s[1]) for c, s in p)
                + lb.CONFIG_SETUP_COST * len({c.label for c, _ in p}))
    loads = [load(p) for p in parts]
    worst = max(lb.cell_cost(c, s[1]) for c, s in grid) + lb.CONFIG_SETUP_COST
    check(max(loads) - min(loads) <= worst, f"parts of about equal cost: {loads}")
    # a config split over lists pays its setup in each: at most one split per list boundary
    pairs = {(k, c.label) for k, p in enumerate(parts) for c, _ in p}
    configs = {c.label for c, _ in grid}
    check(len(pairs) <= len(configs) + len(parts) - 1, f"configs kept together: {sorted(pairs)}")
    even = [(c, s) for c in lb.GDN_CONFIGS[:4] for s in lb.SEQ_SETS]
    check(sorted(len({c.label for c, _ in p}) for p in lb.split_cells(even, 4)) == [1, 1, 1, 1],
          "four configs of equal cost over four lists: one config each")
    check(len(lb.split_cells(grid[:2], 4)) == 2, "no empty part")
    one = [(lb.KDA_CONFIGS[0], s) for s in lb.SEQ_SETS]
    check(len(lb.split_cells(one, 2)) == 2, "one config's cells still spread when that pays")


def test_gpus():
    """run_on_gpus with each part's process faked: it writes the result file a real part
    would (its cells, timed as given), so the driver's commands and the join are checked."""
    grid = lb.parse_cells("GDN 2/8@1x8192;GDN 2/8@8192x4;KDA 8/8@1x8192;GDN 16/64@1x32768;"
                          "KDA 16/32@8192x4")
    calls = []

    class FakePart:
        def __init__(self, cmd, env, stdout, stderr):
            calls.append((cmd, env["CUDA_VISIBLE_DEVICES"]))
            arg = dict(zip(cmd[2::2], cmd[3::2]))
            mine = lb.parse_cells(arg["--cells"])
            out = Path(arg["--results-dir"])
            out.mkdir(parents=True)
            write(out / "la_fwd_2026-01-01_h200.md",
                  [cell(c.label, s, sum(lens), (0.1, 0.25), (0.1, 0.25)) for c, (s, lens) in mine],
                  commit=arg["--commit"])
            self.rc = 1 if env["CUDA_VISIBLE_DEVICES"] == FAIL_GPU[0] else 0

        def wait(self):
            return self.rc

    FAIL_GPU = ["none"]
    real, visible = subprocess.Popen, os.environ.pop("CUDA_VISIBLE_DEVICES", None)
    subprocess.Popen = FakePart
    try:
        with tempfile.TemporaryDirectory() as d:
            args = argparse.Namespace(gpus=3, gates="both", replays=100, commit="abc1234",
                                      no_fla=False, quick=False, results_dir=d)
            check(lb.run_on_gpus(args, grid) == 0, "three parts")
            check(sorted(g for _, g in calls) == ["0", "1", "2"], f"GPUs: {calls}")
            check(all(c[c.index("--commit") + 1] == "abc1234" for c, _ in calls), "one commit")
            got = lb.every_cell_from_markdown((Path(d) / "la_fwd_2026-01-01_h200.md").read_text())
            check([(c.cfg.label, c.seqs) for c in got] ==
                  [("GDN 2/8", "1x8192"), ("GDN 2/8", "8192x4"), ("GDN 16/64", "1x32768"),
                   ("KDA 8/8", "1x8192"), ("KDA 16/32", "8192x4")], "every cell, joined")
            FAIL_GPU[0] = "1"
            calls.clear()
            args.results_dir = str(Path(d) / "again")
            check(lb.run_on_gpus(args, grid) == 1, "a failing part fails the run")
            check((Path(d) / "again" / "la_fwd_2026-01-01_h200.md").exists(),
                  "the parts that ran are still joined")
            FAIL_GPU[0] = "none"
            calls.clear()
            args.results_dir = str(Path(d) / "visible")
            os.environ["CUDA_VISIBLE_DEVICES"] = "5, 6,7"
            check(lb.run_on_gpus(args, grid) == 0, "parts on the visible GPUs")
            check(sorted(g for _, g in calls) == ["5", "6", "7"], f"visible GPUs: {calls}")
            os.environ["CUDA_VISIBLE_DEVICES"] = "5,6"
            try:
                lb.run_on_gpus(args, grid)
                check(False, "three parts on two visible GPUs must stop")
            except SystemExit as e:
                check("names only 2 GPUs" in str(e), f"message: {e}")
    finally:
        subprocess.Popen = real
        os.environ.pop("CUDA_VISIBLE_DEVICES", None)
        if visible is not None:
            os.environ["CUDA_VISIBLE_DEVICES"] = visible


def test_bwd_targets():
    line = bb.targets_line([("GDN 2/8 1x8192 slow", 8192, 1.49, 2.1),
                            ("GDN 2/8 8192x4 slow", 32768, 1.6, 2.05),
                            ("KDA 8/8 1x2048 slow", 2048, 1.0, 1.0),
                            ("KDA 8/8 1x8192 fast", 8192, None, None)])
    check(line.startswith("Targets (>= 8192 tokens: backward 1.5x FLA's, forward and backward "
                          "2x): 1 of 3 met; short: "), line)
    check("GDN 2/8 1x8192 slow (bwd 1.490x, fwd+bwd 2.100x)" in line, line)
    check("KDA 8/8 1x8192 fast (bwd -, fwd+bwd -)" in line and "8192x4" not in line, line)
    check(bb.targets_line([("KDA 8/8 1x2048 fast", 2048, 1.0, 1.0)]) == "", "none below 8192")


def bwd_gpus_args(out, time_limit):
    """la_bwd_bench.py's arguments for run_on_gpus over two GPUs, the table to `out`."""
    return argparse.Namespace(gpus=2, gates="both", replays=100, commit="abc1234", no_fla=False,
                              disable_recompute=False, time_limit=time_limit, out=str(out))


def table_rows(text):
    """A la_bwd_bench table's rows as their first three cells (config, seqs, gates)."""
    return [line.split(" | ")[:3] for line in text.splitlines()
            if line.startswith("| ") and not line.startswith("| config")]


def test_bwd_gpus():
    """la_bwd_bench.py --gpus: each part's process faked, writing the table a real part would;
    the joined table in the grid's order, the targets summed, FLA's lifted check noted once."""
    grid = lb.parse_cells("GDN 2/8@1x8192;GDN 16/32@1x8192;KDA 8/8@1x8192;KDA 8/8@8192x4")
    calls = []

    class FakePart:
        def __init__(self, cmd, env, stdout, stderr):
            arg = dict(zip(cmd[2::2], cmd[3::2]))
            calls.append((arg, env["CUDA_VISIBLE_DEVICES"]))
            rows, measured = [], []
            for cfg, (seqs, lens) in lb.parse_cells(arg["--cells"]):
                for regime in ("fast", "slow"):
                    b = 1.4 if cfg.label == "GDN 16/32" else 1.6
                    rows.append(f"| {cfg.label} | {seqs} | {regime} | 0.1 / 0.2 | x | y | z | e |")
                    measured.append((f"{cfg.label} {seqs} {regime}", sum(lens), b, 2.1))
            text = (f"la_bwd_bench.py --cells '{arg['--cells']}' --gates both: NVIDIA H200, "
                    f"2026-01-01, commit {arg['--commit']}\n\n"
                    + (bb.LIFTED + "\n\n" if "GDN" in arg["--cells"] else "")
                    + "\n".join([bb.TABLE_HEAD, bb.TABLE_RULE] + rows) + "\n\n"
                    + bb.targets_line(measured) + "\n")
            Path(arg["--out"]).write_text(text)

        def wait(self):
            return 0

    real = subprocess.Popen
    subprocess.Popen = FakePart
    try:
        with tempfile.TemporaryDirectory() as d:
            args = bwd_gpus_args(Path(d) / "bwd.md", time_limit=0)
            check(bb.run_on_gpus(args, grid, "--cells 'x' --gates both") == 0, "two parts")
            check(sorted(g for _, g in calls) == ["0", "1"], f"GPUs: {calls}")
            text = (Path(d) / "bwd.md").read_text()
            rows = table_rows(text)
            check(rows == [["| GDN 2/8", "1x8192", "fast"], ["| GDN 2/8", "1x8192", "slow"],
                           ["| GDN 16/32", "1x8192", "fast"], ["| GDN 16/32", "1x8192", "slow"],
                           ["| KDA 8/8", "1x8192", "fast"], ["| KDA 8/8", "1x8192", "slow"],
                           ["| KDA 8/8", "8192x4", "fast"], ["| KDA 8/8", "8192x4", "slow"]],
                  f"rows in the grid's order: {rows}")
            check("2 GPUs of one machine (NVIDIA H200)" in text.splitlines()[0], text[:120])
            check(text.count(bb.LIFTED) == 1, "FLA's lifted check noted once")
            check(": 6 of 8 met; short: GDN 16/32 1x8192 fast (bwd 1.400x, fwd+bwd 2.100x); "
                  "GDN 16/32 1x8192 slow (bwd 1.400x, fwd+bwd 2.100x)." in text, text[-300:])
    finally:
        subprocess.Popen = real


def test_bwd_time_limit():
    """la_bwd_bench.py --gpus --time-limit: the limit passed to every part; a part that stops
    early (its cells past the limit) or is stopped at the deadline keeps its rows, and the
    cells no part reached are listed under the joined table (exit 1)."""
    grid = lb.parse_cells("KDA 8/8@1x8192;KDA 8/8@8192x4;GDN 2/8@1x8192")
    calls, stopped = [], []

    class FakePart:
        def __init__(self, cmd, env, stdout, stderr):
            self.arg = dict(zip(cmd[2::2], cmd[3::2]))
            calls.append(self.arg)
            cells = lb.parse_cells(self.arg["--cells"])
            cfg, (seqs, _) = cells[0]   # each part measures its first cell's fast row only
            rows = [f"| {cfg.label} | {seqs} | fast | 0.1 / 0.2 | x | y | z | e |"]
            Path(self.arg["--out"]).write_text(
                f"la_bwd_bench.py --cells 'x' --gates both: NVIDIA H200, 2026-01-01, commit "
                f"{self.arg['--commit']}\n\n" + "\n".join([bb.TABLE_HEAD, bb.TABLE_RULE] + rows)
                + "\n")
            self.hangs = "GDN" in self.arg["--cells"]

        def wait(self, timeout=None):
            if self.hangs and timeout is not None and not stopped:
                raise subprocess.TimeoutExpired("part", timeout)
            return -15 if self.hangs else 0

        def terminate(self):
            stopped.append(self.arg["--cells"])

    real = subprocess.Popen
    subprocess.Popen = FakePart
    try:
        with tempfile.TemporaryDirectory() as d:
            args = bwd_gpus_args(Path(d) / "bwd.md", time_limit=5.0)
            grace = bb.STOP_GRACE_S
            bb.STOP_GRACE_S = 0
            try:
                rc = bb.run_on_gpus(args, grid, "--cells 'x' --gates both")
            finally:
                bb.STOP_GRACE_S = grace
            text = (Path(d) / "bwd.md").read_text()
            check(rc == 1, f"unreached cells: exit {rc}")
            check(all(a.get("--time-limit") == "5.0" for a in calls), f"the limit: {calls}")
            check(len(stopped) == 1 and "GDN" in stopped[0], f"stopped: {stopped}")
            rows = table_rows(text)
            check(len(rows) == 2, f"each part's rows kept: {rows}")
            # every cell and regime without a row, in the order the cells were given
            missing = [f"{cfg.label} {seqs} {r}" for cfg, (seqs, _) in grid
                       for r in ("fast", "slow") if [f"| {cfg.label}", seqs, r] not in rows]
            note = [line for line in text.splitlines() if line.startswith("Not reached")]
            check(len(missing) == 4 and note == [
                f"Not reached within --time-limit 5 s: {'; '.join(missing)}."],
                f"the note: {note}, missing {missing}")
    finally:
        subprocess.Popen = real


def main():
    test_targets()
    test_merge()
    test_cells_split()
    test_gpus()
    test_bwd_targets()
    test_bwd_gpus()
    test_bwd_time_limit()
    print("PASS" if not FAILURES else f"FAIL: {len(FAILURES)}")
    return 1 if FAILURES else 0


if __name__ == "__main__":
    sys.exit(main())
