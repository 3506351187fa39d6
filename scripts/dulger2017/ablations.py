"""Ablations of the Dülger filter tables: what moves a method's RMSE against
Systematic's (issue: where our Tables 5.2, 6.3, 7.3, 7.6 differ from the thesis).

Every variant of one ablation runs the SIR filter (Algorithm 2.4) on the same
trajectories with the same run seeds as the pipeline's tables
(``filter_experiments.run_seed``: common random numbers), so a variant's RMSE
minus its reference's, run by run, has a paired interval:
``runs_half_width`` of the (J, R) differences, the trajectories fixed and the
runs random (docs/dulger2017.md, "RMSE and its interval").

An ablation is a reference and a set of variants; a variant is ``run_sir``'s
method and keywords plus, for the CPU, two things the library does not offer:

* ``segment_rule`` (C1 methods): which s-segment a warp searches. ``random``
  is Algorithms 5.1/6.3 and the library (s ~ U{1..SC}, drawn anew at every
  time step); ``fixed`` draws s once per warp and keeps it at every time step
  (what a generator re-initialised with the same seed before each step
  gives); ``own`` is the warp's own segment, so that with SS = 128 (32
  weights, one warp) every lineage stays in its 32 particles: islands;
  ``shared`` (C1 and CA methods) keeps Algorithms 5.1/6.2/6.3's segments but
  gives every lane of a warp the same candidate offset at each iteration
  (what one generator per warp, seeded by the warp index, would give, if it
  served the offsets too).
* ``states: float32``: the growth model's states and arithmetic in float32,
  as the GPU filter's, on the CPU filter.

Usage::

    python scripts/dulger2017/ablations.py uc1_segments --log2n 12 14 --runs 10
    python scripts/dulger2017/ablations.py b_rule --backend cuda --log2n 14 18 22 --runs 20

Writes ``<out>/<ablation>_runs.csv`` (one row per run) and
``<out>/<ablation>.md`` (per variant and N: mean RMSE, paired difference from
the reference with its 99% half-width, mean B).
"""

from __future__ import annotations

import argparse
import contextlib
import csv
import math
import sys
import time
from pathlib import Path

import numpy as np
import yaml

from pfresample.constants import CONFIDENCE_Z, WARP_SIZE, CandidateScope
from pfresample.filters import SIR_OPTIONS, run_filter
from pfresample.models.growth import GrowthModel
from pfresample.resampling import lanes
from pfresample.rng import DOMAIN_WARP, StreamBlocks, uniform_int
from pfresample_studies.dulger2017.filter_experiments import (
    make_model,
    make_trajectories,
    run_rmse,
    run_seed,
)
from pfresample_studies.dulger2017.filter_tables import mean_of_means, runs_half_width

SEED = 2017  # config/config.yaml's seed: the tables' trajectories and runs
STUDY_CONFIG = Path(__file__).resolve().parents[2] / "config/studies/dulger2017.yaml"
SEGMENT_RULES = ("random", "fixed", "own", "shared")
SHARED_OFFSET = 1 << 20  # warp-stream counters of the `shared` rule's offsets (past the segments')
FIXED_SEGMENT_KEY = (np.uint32(0x5EED), np.uint32(2017))  # the `fixed` rule's warp key

ABLATIONS = {
    # How the C1 methods' warps pick their s-segment over the time steps.
    "uc1_segments": {
        "model": "growth",
        "reference": "uphill",
        "pairs": {
            **{f"uc1-128-{r}": "uc1-128" for r in SEGMENT_RULES[1:]},
            **{f"c1-128-{r}": "c1-128" for r in SEGMENT_RULES[1:]},
            "uca-128-shared": "uca-128",
            "c1-128": "metropolis",
        },
        "variants": {
            "uphill": {"method": "uphill"},
            "uc1-128": {"method": "uphill-c1", "segment_bytes": 128},
            "uc1-128-fixed": {"method": "uphill-c1", "segment_bytes": 128, "segment_rule": "fixed"},
            "uc1-128-own": {"method": "uphill-c1", "segment_bytes": 128, "segment_rule": "own"},
            "uc1-128-shared": {
                "method": "uphill-c1",
                "segment_bytes": 128,
                "segment_rule": "shared",
            },
            "uca-128": {"method": "uphill-ca", "segment_bytes": 128},
            "uca-128-shared": {
                "method": "uphill-ca",
                "segment_bytes": 128,
                "segment_rule": "shared",
            },
            "metropolis": {"method": "metropolis"},
            "c1-128": {"method": "metropolis-c1", "segment_bytes": 128},
            "c1-128-fixed": {
                "method": "metropolis-c1",
                "segment_bytes": 128,
                "segment_rule": "fixed",
            },
            "c1-128-own": {"method": "metropolis-c1", "segment_bytes": 128, "segment_rule": "own"},
            "c1-128-shared": {
                "method": "metropolis-c1",
                "segment_bytes": 128,
                "segment_rule": "shared",
            },
        },
    },
    # Stage 4's weights: §6.9 gives w~ to the comparison-based methods, w to Systematic.
    "stage4": {
        "model": "growth",
        "reference": "systematic",
        "pairs": {
            "systematic-w~": "systematic",
            "metropolis-w": "metropolis",
            "uphill-w": "uphill",
        },
        "variants": {
            "systematic": {"method": "systematic"},
            "systematic-w~": {"method": "systematic", "normalised": False},
            "metropolis": {"method": "metropolis"},
            "metropolis-w": {"method": "metropolis", "normalised": True},
            "uphill": {"method": "uphill"},
            "uphill-w": {"method": "uphill", "normalised": True},
        },
    },
    # Table 6.3's six methods: with many trajectories, how much of a difference from
    # Systematic depends on which trajectories were drawn.
    "methods": {
        "model": "growth",
        "reference": "systematic",
        "variants": {
            "systematic": {"method": "systematic"},
            "metropolis": {"method": "metropolis"},
            "rejection": {"method": "rejection"},
            "uphill": {"method": "uphill"},
            "uca-128": {"method": "uphill-ca", "segment_bytes": 128},
            "uc1-128": {"method": "uphill-c1", "segment_bytes": 128},
            "c1-128": {"method": "metropolis-c1", "segment_bytes": 128},
        },
    },
    # float64 states (our CPU filter) against float32 (the GPU's and the thesis's).
    "precision": {
        "model": "growth",
        "reference": "systematic",
        "pairs": {f"{m}-f32": m for m in ("systematic", "metropolis", "uphill")},
        "variants": {
            "systematic": {"method": "systematic"},
            "systematic-f32": {"method": "systematic", "states": "float32"},
            "metropolis": {"method": "metropolis"},
            "metropolis-f32": {"method": "metropolis", "states": "float32"},
            "uphill": {"method": "uphill"},
            "uphill-f32": {"method": "uphill", "states": "float32"},
        },
    },
    # B: Murray's epsilon for Metropolis (B grows with log 1/epsilon), a fixed B for
    # Uphill against its SSD rule, and the unbiased methods around them.
    "b_rule": {
        "model": "growth",
        "reference": "systematic",
        "variants": {
            "systematic": {"method": "systematic"},
            "multinomial": {"method": "multinomial"},
            "rejection": {"method": "rejection"},
            "metropolis": {"method": "metropolis"},
            "metropolis-eps0.01": {"method": "metropolis", "epsilon": 0.01},
            "metropolis-eps0.001": {"method": "metropolis", "epsilon": 0.001},
            "metropolis-B2": {"method": "metropolis", "B": 2},
            "metropolis-B4": {"method": "metropolis", "B": 4},
            "uphill": {"method": "uphill"},
            "uphill-B2": {"method": "uphill", "B": 2},
            "uphill-B4": {"method": "uphill", "B": 4},
            "uphill-B16": {"method": "uphill", "B": 16},
            "uphill-B32": {"method": "uphill", "B": 32},
        },
    },
}
RUN_COLUMNS = (
    "ablation",
    "model",
    "variant",
    "backend",
    "log2n",
    "trajectory",
    "run",
    "rmse",
    "mean_B",
)
LIBRARY_KEYS = ("method", "segment_bytes", "epsilon", "B", "normalised")


def run_sir(model, y, n, method, seed, **kw):
    """Dülger's Algorithm 2.4: ``run_filter`` with ``SIR_OPTIONS`` (the CPU unless told)."""
    kw.setdefault("backend", "cpu")
    normalised = kw.pop("normalised", None)  # an override of §6.9's stage 4
    if normalised is not None:
        kw["stage4_weights"] = "normalised" if normalised else "unnormalised"
    return run_filter(model, y, n, method, seed=seed, **SIR_OPTIONS, **kw)


class Float32Growth(GrowthModel):
    """Eqs. 2.34-2.35 with float32 states and arithmetic (the GPU filter's
    precision) on the CPU filter; the noise is NumPy's, drawn in float64."""

    def transition(self, x, k, rng):
        x = np.asarray(x, dtype=np.float32)
        f = np.float32
        mean = x / f(2) + f(25) * x / (f(1) + x * x) + f(8.0 * math.cos(1.2 * k))
        noise = (math.sqrt(self.sigma_v2) * rng.standard_normal(x.shape)).astype(np.float32)
        return mean + noise

    def log_likelihood(self, y, x):
        x = np.asarray(x, dtype=np.float32)
        r = np.float32(y) - x * x / np.float32(20)
        return (np.float32(-0.5) * r * r / np.float32(self.sigma_n2)).astype(np.float64)

    def init_particles(self, n, rng):
        return super().init_particles(n, rng).astype(np.float32)


@contextlib.contextmanager
def segment_rule(rule: str | None):
    """The C1 methods' s-segment of each warp under ``rule`` (module
    docstring), by replacing ``lanes.Candidates``'s draw while it is active."""
    if rule in (None, "random"):
        yield
        return
    if rule not in SEGMENT_RULES:
        raise ValueError(f"unknown segment_rule {rule!r}; expected one of {SEGMENT_RULES}")
    original, original_pick = lanes.Candidates.__init__, lanes.Candidates.pick
    original_packed = lanes.Candidates.pick_packed

    def from_warp(original_pick):
        # `shared`: the offset from the warp stream (counters SHARED_OFFSET + m), so
        # that every lane of a warp tries the same candidate at iteration m; a packed
        # Metropolis draw keeps the lane's own u.
        def pick(self, m, word):
            if self.scope != CandidateScope.ARRAY:
                word = self.warp.word(SHARED_OFFSET + m)
            return original_pick(self, m, word)

        return pick

    def init(self, chunk, scope, per_segment, segments):
        original(self, chunk, scope, per_segment, segments)
        if scope != CandidateScope.FIXED_SEGMENT or rule == "shared":
            return
        warp = chunk.particle // WARP_SIZE
        if rule == "own":  # the segment that holds the warp's first particle
            self.segment = ((warp * WARP_SIZE) // per_segment).astype(np.uint64)
        else:
            words = StreamBlocks(FIXED_SEGMENT_KEY, warp.astype(np.uint64), DOMAIN_WARP)(0)
            self.segment = uniform_int(words[0], segments)

    lanes.Candidates.__init__ = init
    if rule == "shared":
        lanes.Candidates.pick = from_warp(original_pick)
        lanes.Candidates.pick_packed = from_warp(original_packed)
    try:
        yield
    finally:
        lanes.Candidates.__init__, lanes.Candidates.pick = original, original_pick
        lanes.Candidates.pick_packed = original_packed


def trajectories_half_width(values, z: float = CONFIDENCE_Z) -> float:
    """99% half-width of the mean of (J, R) ``values`` over trajectories
    drawn at random: z * sd(trajectory means) / sqrt(J)."""
    means = np.asarray(values, dtype=np.float64).mean(axis=1)
    return float(z * means.std(ddof=1) / math.sqrt(means.size)) if means.size > 1 else math.nan


def model_for(spec, variant):
    if variant.get("states") != "float32":
        return make_model(spec)
    if spec["model"] != "growth":
        raise ValueError("states: float32 is written for the growth model only")
    return Float32Growth()


def run_ablation(
    name, log2ns, trajectories, runs, backend, out: Path, model=None, only=None
) -> Path:
    """Run every variant of ``name`` at each N on its model or ``model`` (a
    ``filter_models`` entry), or only the variants ``only``; write and
    return its runs CSV (``<name>[_<variants>]_runs.csv``)."""
    ablation = ABLATIONS[name]
    model_name = model or ablation["model"]
    study = yaml.safe_load(STUDY_CONFIG.read_text())
    spec = study["filter_models"][model_name]
    arrays, _ = make_trajectories(spec, trajectories, SEED)
    truth, y = arrays["truth"], arrays["y"]
    rows = []
    for log2n in log2ns:
        n = 2**log2n
        for label, variant in ablation["variants"].items():
            if only and label not in only:
                continue
            cpu_only = "segment_rule" in variant or "states" in variant
            where = "cpu" if cpu_only else backend
            kw = {k: variant[k] for k in LIBRARY_KEYS if k in variant and k != "method"}
            model = model_for(spec, variant)
            values, bs, start = [], [], time.perf_counter()
            with segment_rule(variant.get("segment_rule")):
                for j in range(trajectories):
                    for r in range(runs):
                        seed = run_seed(SEED, model_name, n, j, r)
                        result = run_sir(
                            model, y[j], n, variant["method"], seed, backend=where,
                            stage_times=False, **kw,
                        )  # fmt: skip
                        values.append(run_rmse(spec["model"], result.estimates, truth[j]))
                        bs.append(float(np.mean(result.B)))
                        row = (name, model_name, label, where, log2n, j, r, values[-1], bs[-1])
                        rows.append(row)
            v = np.reshape(values, (trajectories, runs))
            print(
                f"{name} 2^{log2n} {label:22s} {where}: RMSE {mean_of_means(v):.5f} "
                f"+- {runs_half_width(v):.5f}, mean B {np.mean(bs):.2f}, "
                f"{time.perf_counter() - start:.1f} s",
                flush=True,
            )
    out.mkdir(parents=True, exist_ok=True)
    path = out / (f"{name}_{'+'.join(only)}_runs.csv" if only else f"{name}_runs.csv")
    with open(path, "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(RUN_COLUMNS)
        writer.writerows(rows)
    return path


def summarise(paths, command: str, subsets: int = 0) -> str:
    """The Markdown summary of runs CSVs of one ablation (module docstring),
    written beside the first as ``<ablation>[_<model>].md``; with ``subsets`` K, also
    each variant's difference over disjoint sets of K trajectories."""
    rows = []
    for path in paths:
        with open(path, newline="") as f:
            rows += list(csv.DictReader(f))
    path = Path(paths[0])
    name = rows[0]["ablation"]
    ablation = ABLATIONS[name]
    model = rows[0].get("model", ablation["model"])
    cells: dict = {}
    for row in rows:
        key = (int(row["log2n"]), row["variant"], row["backend"])
        cells.setdefault(key, {})[(int(row["trajectory"]), int(row["run"]))] = (
            float(row["rmse"]), float(row["mean_B"]),
        )  # fmt: skip

    def grid(cell):  # (J, R) RMSEs of a cell and its mean B
        J = 1 + max(j for j, _ in cell)
        R = 1 + max(r for _, r in cell)
        v = np.array([[cell[(j, r)][0] for r in range(R)] for j in range(J)])
        return v, float(np.mean([b for _, b in cell.values()]))

    grids = {key: grid(cell) for key, cell in cells.items()}

    def reference(log2n, label):  # the RMSEs a variant's differences are taken from
        against = ablation.get("pairs", {}).get(label, ablation["reference"])
        found = [g for (n2, lab, _), (g, _) in grids.items() if n2 == log2n and lab == against]
        if not found:
            raise ValueError(f"{name}: no runs of {against!r} to take differences from")
        return found[0]

    first = next(iter(grids.values()))[0]
    lines = [
        f"# Ablation `{name}` ({model}): {first.shape[0]} trajectories x {first.shape[1]} runs",
        "",
        f"`{command}`. Differences are the variant's RMSE minus `{ablation['reference']}`'s "
        f"or its pair's ({ablation.get('pairs', {})}), run by run (same seeds), in units of "
        "1e-3, with the 99% "
        "half-width of their mean: `± runs` with the trajectories fixed (`runs_half_width`, "
        "as the tables), `± trajectories` with the trajectories drawn too (the spread of the "
        "J trajectory means), the interval within which another set of trajectories -- the "
        "thesis's -- would put the difference.",
        "",
        "| log2 N | variant | backend | RMSE | ± | diff (1e-3) | ± runs (1e-3) "
        "| ± trajectories (1e-3) | mean B |",
        "|---:|---|---|---:|---:|---:|---:|---:|---:|",
    ]
    for (log2n, label, where), (values, mean_b) in grids.items():
        d = values - reference(log2n, label)
        lines.append(
            f"| {log2n} | {label} | {where} | {mean_of_means(values):.5f} | "
            f"{runs_half_width(values):.5f} | {1e3 * mean_of_means(d):+.2f} | "
            f"{1e3 * runs_half_width(d):.2f} | {1e3 * trajectories_half_width(d):.2f} | "
            f"{mean_b:.2f} |"
        )
    if subsets:
        lines += [
            "",
            f"Differences (1e-3) over disjoint sets of {subsets} trajectories -- as many as the "
            "thesis used -- each the mean over its trajectories and their runs:",
            "",
            "| log2 N | variant | sets | min | max | sets below 0 |",
            "|---:|---|---:|---:|---:|---:|",
        ]
        for (log2n, label, _), (values, _) in grids.items():
            if label == ablation["reference"]:
                continue
            d = (values - reference(log2n, label)).mean(axis=1)
            sets = 1e3 * d[: d.size // subsets * subsets].reshape(-1, subsets).mean(axis=1)
            lines.append(
                f"| {log2n} | {label} | {sets.size} | {sets.min():+.2f} | {sets.max():+.2f} | "
                f"{int((sets < 0).sum())} |"
            )
    text = "\n".join(lines) + "\n"
    stem = name if model == ablation["model"] else f"{name}_{model}"
    path.with_name(f"{stem}.md").write_text(text)
    return text


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("ablation", choices=sorted(ABLATIONS))
    parser.add_argument("--model", help="a filter_models entry instead of the ablation's")
    parser.add_argument("--variants", nargs="+", help="run only these variants")
    parser.add_argument(
        "--subsets",
        type=int,
        default=0,
        help="also the differences over disjoint sets of K trajectories",
    )
    parser.add_argument(
        "--summarise", type=Path, nargs="+", help="only summarise these runs CSVs (one ablation)"
    )
    parser.add_argument("--log2n", type=int, nargs="+", default=[14])
    parser.add_argument("--trajectories", type=int, default=16)
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--backend", choices=("cpu", "cuda"), default="cpu")
    parser.add_argument("--out", type=Path, default=Path("results/dulger2017/ablations"))
    a = parser.parse_args(argv)
    paths = a.summarise or [
        run_ablation(
            a.ablation, a.log2n, a.trajectories, a.runs, a.backend, a.out, a.model, a.variants
        )
    ]
    print(summarise(paths, "python " + " ".join(sys.argv), a.subsets))


if __name__ == "__main__":
    main()
