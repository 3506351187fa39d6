"""The filter experiments of Güldaş (2015) §4.2–4.3 (Figs 4.9–4.12), on the
library's filters (``pfresample.filters.adaptive``, ``filters.smcem``) and
models (``models.bimodal``, ``models.volatility``).

* Figs 4.9–4.10 (:func:`filter_cell`): at one N, M runs of a filter kind
  with standard multinomial and with butterfly resampling (the thesis's
  default radix sequence): the bootstrap filter with ``multinomial`` against
  ``butterfly-multinomial``, the adaptive filter with adaptive multinomial
  (our ``multinomial``, run when the ESS is low) against the adaptive
  butterfly. Run j of both arms uses
  seed j (common random numbers: the same initial particles and, until they
  diverge, the same noise). Per run: the time-averaged squared error of
  §4.2.1 (its mean over runs is AMSE), the wall time, the mean interaction
  level.
* Fig 4.11 (:func:`interaction_cell`): one run of each adaptive filter at
  N = 1024, the butterfly with radix (2, ..., 2): ESS and interaction level
  at every step.
* Fig 4.12: the M simulated sequences (the same at every N) are first
  solved exactly (:func:`smcem_reference_cell`, ``filters.volatility_grid``):
  each sequence's maximum-likelihood point and the exact EM trace from each
  start. Then at one N (:func:`smcem_cell`), SMC-EM with both resampling
  schemes of §4.3.2 and both filters of §4.3.1, from each start, every
  iterate of (alpha, sigma) and the time per EM iteration. An SMC-EM
  estimate's error against the truth splits into three parts, each
  measured: SMC-EM minus exact EM at the same iteration (the Monte Carlo
  error, the part a resampler changes), exact EM minus the ML point (the
  start and the iteration budget; zero once EM has converged), and the ML
  point minus the truth (the data's).

The filter and SMC-EM cells run where the configured ``backend`` says
(``filters.guldas_gpu`` on the GPU: the whole run one CUDA graph; the
seconds are then device time for the filters, wall time per EM iteration
for SMC-EM); the interaction cell, one run at N = 1024, runs on the CPU.
"""

from __future__ import annotations

import math
import zlib

import numpy as np

from pfresample.backend import cuda_device, resolve_backend
from pfresample.filters import ADAPTIVE_OPTIONS, BOOTSTRAP_OPTIONS, run_filter, volatility_grid
from pfresample.filters.adaptive import amse, interaction_level
from pfresample.filters.smcem import ALPHA_0, FILTERS, SIGMA_0, TAU, run_smcem
from pfresample.models import BimodalModel, VolatilityModel
from pfresample.models.volatility import ALPHA, SIGMA
from pfresample.radix import default_radix
from pfresample.resampling.registry import get_method
from pfresample.timing import cpu_name

FILTER_KINDS = ("bootstrap", "adaptive")
SMCEM_SCHEMES = ("multinomial", "butterfly")
# SMC-EM's starts by name: "ml" is each sequence's ML point (smcem_reference_cell).
SMCEM_STARTS = {"truth": (ALPHA, SIGMA), "guess": (ALPHA_0, SIGMA_0), "ml": None}


def filter_arms(kind: str, n: int) -> list[dict]:
    """The two arms of a filter cell: scheme, registry method, radix and the
    label its figure shows."""
    butterfly = {"scheme": "butterfly", "method": "butterfly-multinomial",
                 "radix": default_radix(n), "label": "butterfly multinomial"}  # fmt: skip
    if kind == "bootstrap":
        standard = {"scheme": "standard", "method": "multinomial", "radix": None,
                    "label": "multinomial"}  # fmt: skip
    elif kind == "adaptive":
        standard = {"scheme": "standard", "method": "multinomial", "radix": None,
                    "label": "adaptive multinomial"}  # fmt: skip
        butterfly["label"] = "adaptive butterfly"
    else:
        raise ValueError(f"filter kind must be one of {FILTER_KINDS}, got {kind!r}")
    return [standard, butterfly]


def _run_seeds(seed: int, tag: str, count: int) -> list[int]:
    """``count`` run seeds of the cell ``tag`` from SeedSequence(seed, tag)."""
    sequence = np.random.SeedSequence(seed, spawn_key=(zlib.crc32(tag.encode()),))
    return [int(s) for s in sequence.generate_state(count, np.uint64)]


def _run(kind, arm, model, y, n, seed, tau, backend):
    """Fig 1.2's bootstrap or Fig 1.3's adaptive filter (``run_filter`` with
    ``BOOTSTRAP_OPTIONS`` or ``ADAPTIVE_OPTIONS``) of one arm."""
    radix = {"radix": arm["radix"]} if arm["radix"] is not None else {}
    if kind == "bootstrap":
        return run_filter(model, y, n, arm["method"], seed=seed, backend=backend,
                          **BOOTSTRAP_OPTIONS, **radix)  # fmt: skip
    return run_filter(model, y, n, arm["method"], seed=seed, backend=backend, ess_threshold=tau,
                      **ADAPTIVE_OPTIONS, **radix)  # fmt: skip


def _level(run, radix, n: int) -> np.ndarray:
    """Each step's interaction level (Fig 4.11): log2 of the largest block
    that interacted, from the stages run (a standard method: one stage of N)."""
    if radix is None:
        radix = default_radix(n) if get_method(run.method).adaptive is not None else (n,)
    return interaction_level(run.stages, radix)


def _metadata(experiment: str, n: int, seed: int, backend: str = "cpu", **extra) -> dict:
    device = cuda_device() if backend == "cuda" else cpu_name()
    return {"experiment": experiment, "n": int(n), "seed": int(seed), "backend": backend,
            "device": device, **extra}  # fmt: skip


def filter_cell(
    kind: str, n: int, *, runs: int, steps: int, tau: float, seed: int, backend="cpu", log=None
):
    """Figs 4.9 (``kind="bootstrap"``) and 4.10 (``"adaptive"``) at one N:
    ``(arrays, metadata)`` with ``amse``, ``seconds`` and ``level`` of shape
    (2 arms, runs). ``backend``: "cpu", "cuda" or "auto"."""
    backend = resolve_backend(backend)
    model = BimodalModel()
    truth, y = model.simulate(steps)
    arms = filter_arms(kind, n)
    shape = (len(arms), runs)
    errors, seconds, level = np.empty(shape), np.empty(shape), np.empty(shape)
    for j, run_seed in enumerate(_run_seeds(seed, f"filter-{kind}-{n}", runs)):
        for a, arm in enumerate(arms):
            result = _run(kind, arm, model, y, n, run_seed, tau, backend)
            errors[a, j] = amse(result.resampled_estimates, truth)
            # the loop's clock on the CPU, the run's graph's device time on the GPU
            seconds[a, j] = (
                result.total_seconds if result.backend == "cuda" else result.wall_seconds
            )
            level[a, j] = _level(result, arm["radix"], n).mean()
        if log is not None and (j + 1) % max(1, runs // 4) == 0:
            log.info("%s filter N = %d: %d of %d runs", kind, n, j + 1, runs)
    arrays = {"amse": errors, "seconds": seconds, "level": level}
    metadata = _metadata(f"{kind} filter", n, seed, backend, kind=kind, runs=int(runs),
                         steps=int(steps), tau=float(tau),
                         model="bimodal, eqs. 4.7-4.8")  # fmt: skip
    metadata["arms"] = [
        {**arm, "radix": "x".join(map(str, arm["radix"])) if arm["radix"] else ""} for arm in arms
    ]
    return arrays, metadata


def interaction_cell(n: int, *, steps: int, tau: float, seed: int, log=None):
    """Fig 4.11: ESS and interaction level at every step of one run of the
    adaptive multinomial and the radix-2 adaptive butterfly filter."""
    model = BimodalModel()
    _, y = model.simulate(steps)
    (run_seed,) = _run_seeds(seed, f"interaction-{n}", 1)
    arms = {"adaptive multinomial": ("multinomial", None),
            "adaptive butterfly": ("butterfly-multinomial", (2,) * int(math.log2(n)))}  # fmt: skip
    ess, level = [], []
    for label, (method, radix) in arms.items():
        run = _run("adaptive", {"method": method, "radix": radix}, model, y, n, run_seed, tau,
                   "cpu")  # fmt: skip
        ess.append(run.ess)
        level.append(_level(run, radix, n))
        if log is not None:
            log.info("%s: mean interaction level %.2f", label, level[-1].mean())
    arrays = {"ess": np.array(ess), "level": np.array(level)}
    metadata = _metadata("interaction level", n, seed, steps=int(steps), tau=float(tau),
                         labels=list(arms))  # fmt: skip
    return arrays, metadata


def smcem_sequences(seed: int, count: int, length: int) -> list[np.ndarray]:
    """The M observation sequences y_0 ... y_n of Fig 4.12, simulated under
    (alpha*, beta*, sigma*); the same for every N."""
    model = VolatilityModel()
    sequence = np.random.SeedSequence(seed, spawn_key=(zlib.crc32(b"smcem-data"),))
    return [model.simulate(length, np.random.default_rng(s))[1] for s in sequence.spawn(count)]


def smcem_reference_cell(*, sequences: int, length: int, iterations: int, starts, seed: int,
                         log=None):  # fmt: skip
    """Fig 4.12's references, per sequence: the ML point of (alpha, sigma)
    (beta fixed; ``volatility_grid.ml_point`` from the truth and the guess)
    and the exact EM trace of ``iterations`` iterations from each of
    ``starts`` (names of SMCEM_STARTS). Arrays: ``ml`` (M, 3: alpha, sigma,
    log-likelihood), ``alpha``/``sigma``/``loglik`` (starts, M, iterations + 1)."""
    data = smcem_sequences(seed, sequences, length)
    ml = np.empty((sequences, 3))
    shape = (len(starts), sequences, iterations + 1)
    alpha, sigma, loglik = np.empty(shape), np.empty(shape), np.empty(shape)
    for m, y in enumerate(data):
        point = volatility_grid.ml_point(y, [SMCEM_STARTS["truth"], SMCEM_STARTS["guess"]])
        ml[m] = point.alpha, point.sigma, point.log_likelihood
        for s, name in enumerate(starts):
            a0, s0 = SMCEM_STARTS[name] or (point.alpha, point.sigma)
            alpha[s, m], sigma[s, m], loglik[s, m] = volatility_grid.exact_em(y, a0, s0, iterations)
        if log is not None:
            log.info("sequence %d: ML alpha %.4f sigma %.4f; exact EM after %d iterations: %s",
                     m, point.alpha, point.sigma, iterations,
                     ", ".join(f"{name} ({alpha[s, m, -1]:.4f}, {sigma[s, m, -1]:.4f})"
                               for s, name in enumerate(starts)))  # fmt: skip
    arrays = {"ml": ml, "alpha": alpha, "sigma": sigma, "loglik": loglik}
    metadata = _metadata("SMC-EM references", 0, seed, sequences=int(sequences),
                         length=int(length), iterations=int(iterations), starts=list(starts),
                         grid_steps_per_sigma=volatility_grid.GRID_STEPS_PER_SIGMA,
                         grid_half_width=volatility_grid.GRID_HALF_WIDTH)  # fmt: skip
    return arrays, metadata


def smcem_cell(
    n: int, reference, *, iterations: int, seed: int, filters=FILTERS, tau: float = TAU,
    starts=None, backend="cpu", log=None,
):  # fmt: skip
    """Fig 4.12 at one N: SMC-EM on the reference's sequences from each of
    its starts, for each filter of ``filters`` and scheme: ``alpha``,
    ``sigma`` (every iterate: arms x starts x M x (iterations + 1)) and
    ``seconds`` (mean per EM iteration: arms x starts x M). ``reference``:
    :func:`smcem_reference_cell`'s (arrays, metadata). Sequence m of every
    arm and start uses one run seed (the same noise stream). ``starts``: a
    subset of the reference's (default all)."""
    backend = resolve_backend(backend)
    ref, ref_meta = reference
    starts, sequences = list(starts or ref_meta["starts"]), ref_meta["sequences"]
    missing = sorted(set(starts) - set(ref_meta["starts"]))
    if missing:
        raise ValueError(f"starts {missing} are not in the reference's {ref_meta['starts']}")
    data = smcem_sequences(ref_meta["seed"], sequences, ref_meta["length"])
    arms = [(f, s) for f in filters for s in SMCEM_SCHEMES]
    shape = (len(arms), len(starts), sequences)
    alpha, sigma = np.empty((*shape, iterations + 1)), np.empty((*shape, iterations + 1))
    seconds = np.empty(shape)
    run_seeds = _run_seeds(seed, f"smcem-{n}", sequences)
    for m, (y, run_seed) in enumerate(zip(data, run_seeds, strict=True)):
        for j, name in enumerate(starts):
            a0, s0 = SMCEM_STARTS[name] or tuple(ref["ml"][m, :2])
            for a, (kind, scheme) in enumerate(arms):
                run = run_smcem(y, n, scheme, run_seed, iterations=iterations, alpha0=a0,
                                sigma0=s0, backend=backend, filter=kind, tau=tau)  # fmt: skip
                alpha[a, j, m], sigma[a, j, m] = run.alpha, run.sigma
                seconds[a, j, m] = run.seconds.mean()
        if log is not None:
            log.info("SMC-EM N = %d: sequence %d of %d", n, m + 1, sequences)
    arrays = {"alpha": alpha, "sigma": sigma, "seconds": seconds}
    metadata = _metadata("SMC-EM", n, seed, backend, sequences=int(sequences),
                         length=int(ref_meta["length"]), iterations=int(iterations),
                         starts=list(starts), tau=float(tau),
                         arms=[{"filter": f, "scheme": s} for f, s in arms])  # fmt: skip
    return arrays, metadata
