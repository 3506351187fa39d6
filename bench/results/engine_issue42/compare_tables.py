"""scripts/compare_results.py's comparison (dulger2017's measured columns
aside) over the CSV tables of the second tree only (a tree built for some
targets), each against the same table of the first.

    python compare_tables.py BEFORE/results AFTER/results
"""

import sys
from pathlib import Path

import yaml

from pfresample.pipeline.compare import TableRules, compare_table
from pfresample.studies.dulger2017 import catalog

root = Path(__file__).resolve().parents[3]
figures = yaml.safe_load((root / "config/studies/dulger2017.yaml").read_text())[
    "dulger2017_figures"
]
rules = TableRules(catalog.MEASURED_COLUMNS, catalog.time_matched_rows(figures))
before, after = Path(sys.argv[1]) / "tables", Path(sys.argv[2]) / "tables"
names = sorted(p.relative_to(after).as_posix() for p in after.rglob("*.csv"))
bad = 0
for name in names:
    problem = compare_table(before / name, after / name, rules)
    if problem:
        bad += 1
        print(f"{name}: {problem}")
print(
    f"{len(names)} tables of the after tree compared with the before tree, "
    f"{bad} differ (measured columns aside)"
)
