"""The order in which the pipeline starts Dülger (2017)'s jobs: Snakemake job
priorities from each job's expected seconds.

With ``--resources gpu=N`` Snakemake starts the ready jobs of highest priority
first. Priorities that rank jobs by their expected time make that
longest-processing-time-first list scheduling: the longest cells start first,
so the run does not end with one GPU finishing an hour-long cell while the
others idle. Three bands keep the scarce resource busy:

* ``INPUTS``: weights, trajectories and SSD tables, which every cell waits for;
* ``GPU``: cells on a GPU, longest first;
* ``CPU``: cells and cell parts on the CPU, longest first. They rank below every
  GPU job so that a GPU job never waits for a core that CPU cells took (each
  GPU job frees its own core when it ends, and the next GPU job takes it).

Inside a band the thesis's chapters come in order (an earlier chapter's cells
first), and inside a chapter the longest cells first. A run then finishes
chapters 2, 5 and 6 before chapter 7's radar cells, whose longest cell (about
11 minutes on an H100) still starts early enough to end with the others: a
user gets whole chapters as the run goes, at about the length of a run that
ranks every cell by its time alone.

Tables and figures keep priority 0: they are short and come last anyway.

Only the order matters, so the times are a rough model, not a measurement to
quote: a filter step costs ``STEP_S`` plus N times the method's cost per
particle (:data:`PARTICLE_S`, rounded from the growth-model tables at N = 2^22
on an H100, evidence/2026-11-25-h100-e74e5ae/dulger2017_ablations/tables_16x10/), radar steps
:data:`RADAR_FACTOR` times more; a CPU run costs :data:`CPU_PARTICLE_S` per
particle and step; a resampling cell, whose N sweep and timing repeats make it
about proportional to the method's per-particle cost, :data:`RESAMPLE_S`
per picosecond of it.
"""

from __future__ import annotations

# Priority bands; inside a band, chapter steps; a job's expected seconds are
# added (capped below the next step).
BAND = 1_000_000
INPUTS = 3 * BAND
GPU = 2 * BAND
CPU = BAND
CHAPTER = 100_000
LAST_CHAPTER = 9

# Seconds of a filter step that do not grow with N (launches of a graph step).
STEP_S = 28e-6
# Seconds per particle of one filter step on the GPU, by registry method.
PARTICLE_S = {
    "systematic": 22e-12,
    "metropolis": 296e-12,
    "metropolis-c1": 70e-12,
    "metropolis-c2": 135e-12,
    "rejection": 184e-12,
    "uphill": 189e-12,
    "uphill-ca": 63e-12,
    "uphill-c1": 49e-12,
}
# A method not listed above: about the middle of the list.
DEFAULT_PARTICLE_S = 150e-12
# Radar steps against growth steps (4-D states; heavier-tailed weights).
RADAR_FACTOR = 1.5
# Seconds per particle of one step of the CPU filter (one core; the 2-core AMD
# EPYC's 18.5 s a 100-step run at N = 2^20, docs/performance.md).
CPU_PARTICLE_S = 1.8e-7
# Seconds of a resampling cell per picosecond of its method's PARTICLE_S, and
# its fixed cost (the weights, the process, the summaries).
RESAMPLE_S = 0.2
RESAMPLE_FIXED_S = 5.0


def filter_seconds(method: str, kind: str, n: int, steps: int, runs: int, backend: str) -> float:
    """Expected seconds of ``runs`` runs of ``steps`` steps of the filter with
    ``method`` on a ``kind`` model (growth or radar) with ``n`` particles."""
    if backend == "cpu":
        per_step = CPU_PARTICLE_S * n
    else:
        per_step = STEP_S + PARTICLE_S.get(method, DEFAULT_PARTICLE_S) * n
    factor = RADAR_FACTOR if kind == "radar" else 1.0
    return runs * steps * per_step * factor


def resample_seconds(method: str, rungs: int = 1) -> float:
    """Expected seconds of a resampling cell (a ladder of ``rungs`` costs about
    one pass of its largest B, so about one cell)."""
    return RESAMPLE_FIXED_S + RESAMPLE_S * PARTICLE_S.get(method, DEFAULT_PARTICLE_S) * 1e12


def priority(seconds: float, band: int, chapter: int = LAST_CHAPTER) -> float:
    """The Snakemake priority of a job of ``band`` and of the thesis's
    ``chapter`` expected to take ``seconds``."""
    if not 0 <= chapter <= LAST_CHAPTER:
        raise ValueError(f"chapter must be 0 ... {LAST_CHAPTER}, got {chapter}")
    return band + (LAST_CHAPTER - chapter) * CHAPTER + min(float(seconds), CHAPTER - 1)
