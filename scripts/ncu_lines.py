"""ncu_lines.py SASS_CSV LISTING [--top N] [--launch K] [--phase NAME=FILE:A-B[,FILE:A-B...]]...

Where a kernel's time goes by .tile line: an `ncu --page source --print-source sass --csv`
dump of its SourceCounters (warp stall samples and executed instructions per SASS
instruction) joined with `nvdisasm --print-line-info -c` of the same cubin built with
`tilec --lineinfo` (or a TILE_LINEINFO=ON library's module), by the instruction's offset in
the kernel. Prints the stall reasons over the kernel, the N lines with the most samples (with
their text where the file is readable, and their top three reasons), and with --phase the
share of samples and of executed instructions of each named set of line ranges (FILE is the
file's name without directories; the rest is "other"). A dump of several launches is summed
over them, or --launch K takes the K-th (from 0). Each instruction's opcode is checked
against the listing's at its offset: a mismatch means the dump and the cubin differ.
"""
import argparse
import collections
import csv
import os
import re
import sys


def read_listing(path):
    """{offset: (file, line, opcode)} from nvdisasm --print-line-info output."""
    where, at = {}, None
    for text in open(path, errors="replace"):
        m = re.search(r'//## File "([^"]+)", line (\d+)', text)
        if m:
            at = (m.group(1), int(m.group(2)))
            continue
        m = re.search(r"/\*([0-9a-f]+)\*/\s+(?:@!?U?P\w+\s+)?([A-Z][A-Z0-9_.]*)", text)
        if m:
            file, line = at if at else ("?", 0)
            where[int(m.group(1), 16)] = (file, line, m.group(2).split(".")[0])
    return where


def read_launches(path):
    """Each launch's (header, rows) from the ncu source-page CSV."""
    launches = []
    for row in csv.reader(open(path, errors="replace")):
        if row and row[0] == "Kernel Name":
            launches.append([None, []])
        elif launches and launches[-1][0] is None and "Address" in row:
            launches[-1][0] = row
        elif launches and launches[-1][0] is not None and row:
            launches[-1][1].append(row)
    return [(h, rows) for h, rows in launches if h is not None]


def number(text):
    try:
        return float(text.replace(",", ""))
    except (ValueError, AttributeError):
        return 0.0


def parse_phase(spec):
    name, _, ranges = spec.partition("=")
    out = []
    for part in ranges.split(","):
        file, _, span = part.rpartition(":")
        lo, _, hi = span.partition("-")
        out.append((file, int(lo), int(hi or lo)))
    if not name or not out:
        sys.exit(f"ncu_lines.py: bad --phase '{spec}' (NAME=FILE:A-B[,FILE:A-B...])")
    return name, out


def source_text(file, line, cache={}):
    if file not in cache:
        try:
            cache[file] = open(file, errors="replace").read().split("\n")
        except OSError:
            cache[file] = []
    lines = cache[file]
    return lines[line - 1].strip() if 0 < line <= len(lines) else ""


def main():
    ap = argparse.ArgumentParser(usage=__doc__)
    ap.add_argument("csv")
    ap.add_argument("listing")
    ap.add_argument("--top", type=int, default=30)
    ap.add_argument("--launch", type=int, default=-1)
    ap.add_argument("--phase", action="append", default=[])
    a = ap.parse_args()
    where = read_listing(a.listing)
    launches = read_launches(a.csv)
    if not launches or not where:
        sys.exit("ncu_lines.py: no SASS rows in the dump or no instructions in the listing")
    if a.launch >= 0:
        launches = launches[a.launch:a.launch + 1]
    phases = [parse_phase(p) for p in a.phase]
    samples, executed = collections.Counter(), collections.Counter()
    reasons = collections.defaultdict(collections.Counter)
    by_reason = collections.Counter()
    total = total_exec = 0.0
    mismatches = instructions = 0
    for head, rows in launches:
        addr, src = head.index("Address"), head.index("Source")
        samp = next(i for i, c in enumerate(head) if c.startswith("Warp Stall Sampling (All"))
        exe = head.index("Instructions Executed") if "Instructions Executed" in head else None
        stalls = [(i, c[len("stall_"):]) for i, c in enumerate(head)
                  if c.startswith("stall_") and "Not Issued" not in c]
        base = min(int(r[addr], 16) for r in rows)
        for r in rows:
            off = int(r[addr], 16) - base
            file, line, op = where.get(off, ("?", 0, ""))
            if op and op not in r[src]:
                mismatches += 1
            instructions += 1
            key = (file, line)
            s = number(r[samp])
            samples[key] += s
            total += s
            if exe is not None:
                executed[key] += number(r[exe])
                total_exec += number(r[exe])
            for i, name in stalls:
                v = number(r[i])
                if v:
                    reasons[key][name] += v
                    by_reason[name] += v
    total = max(total, 1.0)
    print(f"{instructions} instructions in {len(launches)} launch(es), {total:.0f} samples, "
          f"{mismatches} opcode mismatches against the listing")
    print("reasons: " + ", ".join(f"{k} {100 * v / total:.1f}%"
                                  for k, v in by_reason.most_common(8)))
    for (file, line), s in samples.most_common(a.top):
        top3 = ", ".join(f"{k} {v:.0f}" for k, v in reasons[(file, line)].most_common(3))
        print(f"{100 * s / total:5.1f}% {os.path.basename(file)}:{line:<5} "
              f"{source_text(file, line)[:64]:64s} | {top3}")
    if phases:
        share, share_exec = collections.Counter(), collections.Counter()
        for (file, line), s in samples.items():
            name = next((n for n, rs in phases
                         if any(os.path.basename(file) == f and lo <= line <= hi
                                for f, lo, hi in rs)), "other")
            share[name] += s
            share_exec[name] += executed[(file, line)]
        print("phase: samples, executed instructions")
        for name in [n for n, _ in phases] + ["other"]:
            print(f"  {name:20s} {100 * share[name] / total:5.1f}% "
                  f"{100 * share_exec[name] / max(total_exec, 1.0):5.1f}%")


if __name__ == "__main__":
    main()
