"""ncu_hot.py SASS_CSV [N]: the N hottest SASS instructions (warp stall samples) of an
`ncu --page source --print-source sass --csv` dump, with their neighbourhood, as text."""
import csv
import sys

rows = list(csv.reader(open(sys.argv[1], errors="replace")))
n = int(sys.argv[2]) if len(sys.argv) > 2 else 40
head = next(i for i, r in enumerate(rows) if any("Source" == c.strip() for c in r))
cols = rows[head]
src = cols.index("Source")
samp = next(i for i, c in enumerate(cols) if c.startswith("Warp Stall Sampling (All"))
body = [r for r in rows[head + 1:] if len(r) > max(src, samp)]


def val(r):
    try:
        return float(r[samp].replace(",", ""))
    except ValueError:
        return 0.0


total = sum(val(r) for r in body)
print(f"{len(body)} instructions, {total:.0f} samples")
order = sorted(range(len(body)), key=lambda i: -val(body[i]))
for i in order[:n]:
    print(f"{i:5d} {val(body[i]):7.0f} {100 * val(body[i]) / max(total, 1):5.1f}%  {body[i][src].strip()}")
# the whole listing with samples, for reading around the hot spots
with open(sys.argv[1] + ".txt", "w") as f:
    for i, r in enumerate(body):
        f.write(f"{i:5d} {val(r):7.0f}  {r[src].strip()}\n")
