"""Which columns of each CSV table differ between two results/ trees (every
table of the second tree; NaN equal to NaN).

    python compare_columns.py BEFORE/results AFTER/results
"""

import sys
from pathlib import Path

import pandas as pd

before, after = Path(sys.argv[1]) / "tables", Path(sys.argv[2]) / "tables"
names = sorted(p.relative_to(after).as_posix() for p in after.rglob("*.csv"))
for name in names:
    a, b = pd.read_csv(before / name), pd.read_csv(after / name)
    if list(a.columns) != list(b.columns) or a.shape != b.shape:
        print(f"{name}: shapes or columns differ: {a.shape} {b.shape}")
        continue
    diff = []
    for c in a.columns:
        x, y = a[c], b[c]
        same = x.equals(y) or (x.isna() & y.isna() | (x == y)).all()
        if not same:
            diff.append(c)
    if diff:
        print(f"{name}: columns that differ: {diff}")
print(len(names), "tables")
