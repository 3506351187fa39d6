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
* Fig 4.12 (:func:`smcem_cell`): at one N, SMC-EM with both resampling
  schemes of §4.3.2 on M simulated sequences (the same sequences at every
  N): the final alpha and sigma and the time per EM iteration.

The filter and SMC-EM cells run where the configured ``backend`` says
(``filters.guldas_gpu`` on the GPU: the whole run one CUDA graph; the
seconds are then device time for the filters, wall time per EM iteration
for SMC-EM); the interaction cell, one run at N = 1024, runs on the CPU.
"""

from __future__ import annotations

import math
import zlib

import numpy as np

from ...backend import cuda_device
from ...filters.adaptive import amse, run_adaptive, run_bootstrap
from ...filters.common import select_filter_backend
from ...filters.smcem import ALPHA_0, SIGMA_0, run_smcem
from ...models import BimodalModel, VolatilityModel
from ...radix import default_radix
from ...timing import cpu_name

FILTER_KINDS = ("bootstrap", "adaptive")
SMCEM_SCHEMES = ("multinomial", "butterfly")


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
    radix = {"radix": arm["radix"]} if arm["radix"] is not None else {}
    if kind == "bootstrap":
        return run_bootstrap(model, y, n, arm["method"], seed, backend=backend, **radix)
    return run_adaptive(model, y, n, arm["method"], seed, tau=tau, backend=backend, **radix)


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
    backend = select_filter_backend(backend)
    model = BimodalModel()
    truth, y = model.simulate(steps)
    arms = filter_arms(kind, n)
    shape = (len(arms), runs)
    errors, seconds, level = np.empty(shape), np.empty(shape), np.empty(shape)
    for j, run_seed in enumerate(_run_seeds(seed, f"filter-{kind}-{n}", runs)):
        for a, arm in enumerate(arms):
            result = _run(kind, arm, model, y, n, run_seed, tau, backend)
            errors[a, j] = amse(result.estimates, truth)
            seconds[a, j] = result.seconds
            level[a, j] = result.level.mean()
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
        run = run_adaptive(model, y, n, method, run_seed, tau=tau, radix=radix)
        ess.append(run.ess)
        level.append(run.level)
        if log is not None:
            log.info("%s: mean interaction level %.2f", label, run.level.mean())
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


def smcem_cell(
    n: int, *, sequences: int, length: int, iterations: int, seed: int, backend="cpu", log=None
):
    """Fig 4.12 at one N: ``alpha``, ``sigma`` (final estimates) and
    ``seconds`` (mean per EM iteration), each of shape (2 schemes, M)."""
    backend = select_filter_backend(backend)
    data = smcem_sequences(seed, sequences, length)
    shape = (len(SMCEM_SCHEMES), sequences)
    alpha, sigma, seconds = np.empty(shape), np.empty(shape), np.empty(shape)
    run_seeds = _run_seeds(seed, f"smcem-{n}", sequences)
    for m, (y, run_seed) in enumerate(zip(data, run_seeds, strict=True)):
        for s, scheme in enumerate(SMCEM_SCHEMES):
            run = run_smcem(y, n, scheme, run_seed, iterations=iterations, backend=backend)
            alpha[s, m], sigma[s, m] = run.alpha[-1], run.sigma[-1]
            seconds[s, m] = run.seconds.mean()
        if log is not None:
            log.info("SMC-EM N = %d: sequence %d of %d", n, m + 1, sequences)
    arrays = {"alpha": alpha, "sigma": sigma, "seconds": seconds}
    metadata = _metadata("SMC-EM", n, seed, backend, sequences=int(sequences), length=int(length),
                         iterations=int(iterations), schemes=list(SMCEM_SCHEMES),
                         alpha0=ALPHA_0, sigma0=SIGMA_0)  # fmt: skip
    return arrays, metadata
