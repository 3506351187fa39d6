"""Compare the tables of two results/ trees, measured columns aside.

    python scripts/compare_results.py BEFORE/results AFTER/results

Prints each table that differs (or is missing on one side) and a summary
line; exits 1 when anything differs. The rules (which columns are
measurements, which rows or values a measurement picks) come from each
study's catalog (``compare_rules``).
"""

import argparse
import importlib
import sys
from pathlib import Path

from pfresample_studies.pipeline.claims import STUDIES
from pfresample_studies.pipeline.compare import compare_trees, study_rules

CONFIG = Path(__file__).resolve().parents[1] / "config" / "studies"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("before", help="a results/ folder")
    parser.add_argument("after", help="another results/ folder")
    args = parser.parse_args(argv)
    catalogs = {s: importlib.import_module(f"pfresample_studies.{s}.catalog") for s in STUDIES}
    problems = compare_trees(args.before, args.after, study_rules(catalogs, CONFIG))
    for line in problems:
        print(line)
    count = len(list((Path(args.before) / "tables").rglob("*.csv")))
    print(f"{count} tables compared, {len(problems)} differ (measured columns aside)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
