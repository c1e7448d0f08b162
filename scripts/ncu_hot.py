"""ncu_hot.py SASS_CSV [N]: the N hottest SASS instructions (warp stall samples) of an
`ncu --page source --print-source sass --csv` dump, with their neighbourhood, as text.
Also writes SASS_CSV.txt: every instruction with its samples, executions (warp level) and
shared-memory wavefronts where the dump has those columns, for reading around hot spots."""
import csv
import sys

rows = list(csv.reader(open(sys.argv[1], errors="replace")))
n = int(sys.argv[2]) if len(sys.argv) > 2 else 40
head = next(i for i, r in enumerate(rows) if any("Source" == c.strip() for c in r))
cols = rows[head]
src = cols.index("Source")
samp = next(i for i, c in enumerate(cols) if c.startswith("Warp Stall Sampling (All"))
extra = [i for i, c in enumerate(cols)
         if c.startswith("Instructions Executed") or "Wavefronts" in c or "Conflicts" in c]
body = [r for r in rows[head + 1:] if len(r) > max([src, samp] + extra)]


def num(r, i):
    try:
        return float(r[i].replace(",", ""))
    except ValueError:
        return 0.0


total = sum(num(r, samp) for r in body)
print(f"{len(body)} instructions, {total:.0f} samples; extra columns: "
      + ", ".join(cols[i] for i in extra))
order = sorted(range(len(body)), key=lambda i: -num(body[i], samp))
for i in order[:n]:
    print(f"{i:5d} {num(body[i], samp):7.0f} {100 * num(body[i], samp) / max(total, 1):5.1f}%  "
          f"{body[i][src].strip()}")
with open(sys.argv[1] + ".txt", "w") as f:
    for i, r in enumerate(body):
        ex = " ".join(f"{num(r, c):9.0f}" for c in extra)
        f.write(f"{i:5d} {num(r, samp):7.0f} {ex}  {r[src].strip()}\n")
