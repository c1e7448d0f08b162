#!/usr/bin/env python3
"""check_no_sys_path.py REPO: no Python file of the package, the tests, the benchmarks or
scripts/ edits sys.path. They import the installed package, or run with PYTHONPATH=python
(said in their headers); a script that patches sys.path would hide a missing install and
could pick up another copy of the package. (bench/results/ holds archived records: not
checked.)"""
import re
import sys
from pathlib import Path

PATTERN = re.compile(r"\bsys\.path\s*(\.\s*(insert|append|extend|remove)\b|\+?=|\[)")
GLOBS = ["python/**/*.py", "tests/gpu/*.py", "tests/python/*.py", "bench/*.py", "scripts/*.py"]


def main():
    root = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parents[2]
    bad = []
    for glob in GLOBS:
        for path in sorted(root.glob(glob)):
            for n, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
                if PATTERN.search(line):
                    bad.append(f"{path.relative_to(root)}:{n}: {line.strip()}")
    for line in bad:
        print(line)
    print("PASS" if not bad else f"FAIL: {len(bad)} sys.path edits")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
