"""Per-job overhead of a finished pipeline run (pfresample_studies.pipeline.overhead).

    python scripts/overhead_report.py                  # results/ of this checkout
    python scripts/overhead_report.py path/to/results --jobs jobs.csv

Prints, per kind of job (weights, tuning, resample, tables, figures) and in
total: the number of jobs, the summed job time from the Snakemake benchmark
records, the summed overhead (process start + imports + first-call compile)
and its share, and the largest peak memory (max_rss) of any job; then, per
rule, the jobs, job time, share, longest job and CPU time (``--rules CSV``
also writes that table).
"""

import argparse

from pfresample_studies.pipeline import overhead


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("results", nargs="?", default="results")
    parser.add_argument("--jobs", help="also write the per-job rows to this CSV file")
    parser.add_argument("--rules", help="also write the per-rule table to this CSV file")
    args = parser.parse_args()
    jobs = overhead.job_overheads(args.results)
    if jobs.empty:
        raise SystemExit(f"no benchmark records under {args.results}/benchmarks")
    if args.jobs:
        jobs.to_csv(args.jobs, index=False)
    fmt = {"float_format": lambda x: f"{x:.2f}", "index": False}
    print(overhead.summary(jobs).to_string(**fmt))
    rules = overhead.per_rule(jobs)
    if args.rules:
        rules.to_csv(args.rules, index=False, float_format="%.2f")
    print()
    print(rules.to_string(**fmt))


if __name__ == "__main__":
    main()
