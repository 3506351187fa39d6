"""Compare the tables of two results/ trees, measured columns aside.

    python scripts/compare_results.py BEFORE/results AFTER/results

Prints each table that differs (or is missing on one side) and a summary
line; exits 1 when anything differs. The rules (which columns are
measurements) come from each study.
"""

import argparse
import sys
from pathlib import Path

import yaml

from pfresample_studies.dulger2017 import catalog
from pfresample_studies.pipeline.compare import TableRules, compare_trees


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("before", help="a results/ folder")
    parser.add_argument("after", help="another results/ folder")
    args = parser.parse_args(argv)
    study = Path(__file__).resolve().parents[1] / "config" / "studies" / "dulger2017.yaml"
    figures = yaml.safe_load(study.read_text())["dulger2017_figures"]
    rules = TableRules(catalog.MEASURED_COLUMNS, catalog.time_matched_rows(figures))
    problems = compare_trees(args.before, args.after, rules)
    for line in problems:
        print(line)
    count = len(list((Path(args.before) / "tables").rglob("*.csv")))
    print(f"{count} tables compared, {len(problems)} differ (measured columns aside)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
