#!/usr/bin/env python3
"""test_la_bwd_parts.py: tests/gpu/la_bwd.py's --gpus on the CPU (no GPU): --cases picks cases
by exact name and refuses unknown ones, the split puts each case in one part of about equal
cost, and the driver, with its processes faked, gives every part the run's seed and the op
checks to the first only, and joins their tables in the cases' order with the counts summed;
the segments-against-whole check judges dg on the heads that decay only.
Needs torch (la_bwd imports it) and tests/gpu on PYTHONPATH (tests/python/CMakeLists.txt);
without torch it prints "skipped" and exits 77."""
import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

try:
    import torch  # noqa: F401  (la_bwd needs it)
except ImportError:
    print("skipped: no torch")
    sys.exit(77)

import la_bwd as lb

FAILURES = []


def check(cond, what):
    if not cond:
        FAILURES.append(what)
        print(f"FAIL: {what}")


def options(**kw):
    base = dict(small=False, quick=True, k=None, op=None, cases=None, no_fla=True, out=None,
                gpus=1, op_checks=False, time_limit=0)
    return argparse.Namespace(**dict(base, **kw))


def test_select_and_split():
    todo = lb.select_cases(options(cases="gdn small d128; T=1"))
    check([c.name for c in todo] == ["T=1", "gdn small d128"], f"--cases: {todo}")
    check(lb.select_cases(options(cases="T=1;no such case")) is None, "an unknown name refused")
    every = lb.select_cases(options())
    parts = lb.split_cases(every, 4)
    flat = [c.name for p in parts for c in p]
    check(len(parts) == 4 and sorted(flat) == sorted(c.name for c in every),
          "every case in exactly one part")
    order = [c.name for c in every]
    check(all([c.name for c in p] == sorted((c.name for c in p), key=order.index)
              for p in parts), "each part in the cases' order")
    loads = [sum(lb.case_cost(c) for c in p) for p in parts]
    check(max(loads) - min(loads) <= max(lb.case_cost(c) for c in every),
          f"parts of about equal cost: {loads}")


def test_gpus():
    todo = lb.select_cases(options(k="small,T=1"))
    calls = []

    class FakePart:
        def __init__(self, cmd, env, stdout, stderr):
            names = cmd[cmd.index("--cases") + 1].split(";")
            calls.append((names, env, "--op-checks" in cmd))
            def status(n, g):
                return "FAIL" if (n, g) == ("T=1", "dk") else "ok"
            rows = [f"| {n} | {g} | 1.00e-03 |  | 0.008 | {status(n, g)} |"
                    for n in names for g in ("dq", "dk")]
            failing = sum("FAIL" in r for r in rows)
            text = "\n\n".join([
                f"la_bwd: {len(names)} cases, {failing} failing gradients or op checks; "
                f"NVIDIA H200, 2026-01-01, TILE_TEST_SEED={env['TILE_TEST_SEED']}",
                "a note every part writes", "\n".join(lb.TABLE_HEAD + rows)]) + "\n"
            Path(cmd[cmd.index("--out") + 1]).write_text(text)

        def wait(self):
            return 0

    real, visible = subprocess.Popen, os.environ.pop("CUDA_VISIBLE_DEVICES", None)
    subprocess.Popen = FakePart
    try:
        with tempfile.TemporaryDirectory() as d:
            out = Path(d) / "bwd.md"
            rc = lb.run_on_gpus(options(gpus=3, out=str(out)), todo, True)
            check(rc == 1, "a failing gradient fails the run")
            check(len(calls) == 3 and len({c[1]["CUDA_VISIBLE_DEVICES"] for c in calls}) == 3,
                  "one process per GPU")
            check(all(c[1]["TILE_TEST_SEED"] == str(lb.SEED) for c in calls), "one seed")
            check([c[2] for c in calls] == [True, False, False], "op checks in the first only")
            text = out.read_text()
            head = text.splitlines()[0]
            check(head.startswith(f"la_bwd: {len(todo)} cases, 1 failing gradients or op "
                                  "checks; 3 GPUs: NVIDIA H200"), head)
            check(text.count("a note every part writes") == 1, "notes once")
            rows = [r.split(" | ")[0][2:] for r in text.splitlines()
                    if r.startswith("| ") and not r.startswith("| case")]
            check(rows == [n for c in todo for n in (c.name, c.name)],
                  f"rows in the cases' order: {rows}")
            calls.clear()
            os.environ["CUDA_VISIBLE_DEVICES"] = "3,1"
            lb.run_on_gpus(options(gpus=2, out=str(out)), todo, True)
            check([c[1]["CUDA_VISIBLE_DEVICES"] for c in calls] == ["3", "1"],
                  f"parts on the visible GPUs in their order: {calls}")
    finally:
        subprocess.Popen = real
        os.environ.pop("CUDA_VISIBLE_DEVICES", None)
        if visible is not None:
            os.environ["CUDA_VISIBLE_DEVICES"] = visible


def test_time_limit():
    """--time-limit with --gpus: every part gets it; a part still running past it (and the
    grace) is stopped, its table so far kept, and the cases no part reached are listed."""
    todo = lb.select_cases(options(k="small,T=1"))
    calls = []

    class FakePart:
        def __init__(self, cmd, env, stdout, stderr):
            names = cmd[cmd.index("--cases") + 1].split(";")
            self.slow = not calls   # the first part is still in its second case at the limit
            calls.append((cmd, self))
            self.terminated = False
            done = names[:1] if self.slow else names
            rows = [f"| {n} | dq | 1.00e-03 |  | 0.008 | ok |" for n in done]
            Path(cmd[cmd.index("--out") + 1]).write_text("\n\n".join([
                f"la_bwd: {len(done)} of {len(names)} cases, 0 failing gradients or op checks; "
                "NVIDIA H200, 2026-01-01, TILE_TEST_SEED=1",
                "\n".join(lb.TABLE_HEAD + rows)]) + "\n")

        def wait(self, timeout=None):
            if self.slow and not self.terminated:
                check(timeout is not None, "the parent waits with a deadline")
                raise subprocess.TimeoutExpired("part", timeout)
            return -15 if self.terminated else 0

        def terminate(self):
            self.terminated = True

    real, grace = subprocess.Popen, lb.STOP_GRACE_S
    subprocess.Popen = FakePart
    lb.STOP_GRACE_S = 0
    try:
        with tempfile.TemporaryDirectory() as d:
            out = Path(d) / "bwd.md"
            rc = lb.run_on_gpus(options(gpus=2, out=str(out), time_limit=0.01), todo, False)
            check(rc == 1, "cases not reached fail the run")
            check(all(c[c.index("--time-limit") + 1] == "0.01" for c, _ in calls),
                  "every part gets the limit")
            check([p.terminated for _, p in calls] == [True, False], "only the late part stopped")
            text = out.read_text()
            first = calls[0][0][calls[0][0].index("--cases") + 1].split(";")
            check(text.startswith(f"la_bwd: {len(todo) - len(first) + 1} of {len(todo)} cases"),
                  text.splitlines()[0])
            note = [b for b in text.split("\n\n") if b.startswith("Not reached")]
            missed = note[0].split(": ", 1)[1].split("; ") if len(note) == 1 else []
            check(sorted(missed) == sorted(first[1:]), f"the cases not reached: {note}")
    finally:
        subprocess.Popen = real
        lb.STOP_GRACE_S = grace


def test_segment_view():
    cases = {c.name: c for c in lb.cases()}
    small = cases["gdn small segments"]   # HV = 2: head 0 at g = 0, head 1 decaying
    dg = torch.arange(1 * 5 * 2, dtype=torch.float64).view(1, 5, 2)
    check(torch.equal(lb.segment_view(small, "dg", dg), dg[:, :, 1:]),
          "segment_view: GDN dg on the decaying head only")
    check(lb.segment_view(small, "dq", dg) is dg, "segment_view: dq whole")
    kda = cases["segments 1 1x1000 2/4 d128 slow"]   # HV = 4: heads 1 .. 3 decay
    dgk = torch.zeros(1, 3, 4, 8)
    check(lb.segment_view(kda, "dg", dgk).shape == (1, 3, 3, 8),
          "segment_view: KDA dg on heads 1 .. 3")
    gate = cases["segments 3 varlen with an empty sequence"]   # raw gates shifted: all decay
    check(lb.segment_view(gate, "dg", dgk) is dgk, "segment_view: in-kernel gate whole")
    one = lb.replace(small, HV=1)
    check(lb.segment_view(one, "dg", dg[:, :, :1]) is None,
          "segment_view: no decaying head, no dg check")
    # the heads it keeps are the ones make_inputs' slow gates decay
    for c in (small, kda):
        g = lb.make_inputs(c, "cpu")["g"]
        decays = (g.transpose(0, 2).reshape(c.HV, -1) != 0).any(dim=1)
        kept = lb.segment_view(c, "dg", torch.arange(c.HV).view(1, 1, c.HV))
        check(kept.flatten().tolist() == decays.nonzero().flatten().tolist(),
              f"segment_view: {c.name} keeps heads {kept.flatten().tolist()}, the gates decay "
              f"on {decays.nonzero().flatten().tolist()}")


def main():
    test_segment_view()
    test_select_and_split()
    test_gpus()
    test_time_limit()
    print("PASS" if not FAILURES else f"FAIL: {len(FAILURES)}")
    return 1 if FAILURES else 0


if __name__ == "__main__":
    sys.exit(main())
