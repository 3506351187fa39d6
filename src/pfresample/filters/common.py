"""What the CPU and the GPU SIR filter share: the stages of Algorithm 2.4,
the result record and the seeds of one run."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

# The four stages of Algorithm 2.4, in the order of SirResult.stage_seconds's columns.
STAGES = (
    "prediction and weight update",
    "sum of weights",
    "normalisation and estimate",
    "resampling",
)
NO_B = -1  # SirResult.B for methods without a B parameter


@dataclass(frozen=True)
class SirResult:
    """The outcome of :func:`run_sir` over T time steps.

    ``estimates[k - 1]`` is x^_k (shape (T,) for a scalar state, (T, d) else).
    ``stage_seconds[k - 1, s]`` is the time of stage s + 1 at step k
    (``time.perf_counter``); ``total_seconds`` is their sum, and
    ``wall_seconds`` the separately measured time of the whole loop (it also
    holds the loop's bookkeeping, so it is slightly larger). ``B[k - 1]`` is
    the B used at step k (``NO_B`` for methods without one). ``backend`` is
    where the filter ran, "cpu" or "cuda".
    """

    method: str
    n: int
    seed: int
    estimates: np.ndarray
    stage_seconds: np.ndarray
    total_seconds: float
    wall_seconds: float
    B: np.ndarray
    backend: str = "cpu"

    @property
    def stage_totals(self) -> np.ndarray:
        """Seconds per stage, summed over the time steps (shape (4,))."""
        return self.stage_seconds.sum(axis=0)

    @property
    def stage_shares(self) -> np.ndarray:
        """Each stage's percentage of the total time (as Tables 5.1, 6.2)."""
        return 100.0 * self.stage_totals / self.total_seconds


def derive_seeds(seed: int, steps: int) -> tuple[np.random.Generator, np.ndarray]:
    """The model-noise generator and the T resampling seeds of one run.

    Both come from ``SeedSequence(seed)``, through two spawned children, so
    the noise stream and the resampling seeds are independent of each other,
    and the same ``seed`` gives the same run. The noise stream does not
    depend on the method: runs of different methods with one seed share
    their initial particles and first prediction (common random numbers).
    """
    noise, draws = np.random.SeedSequence(seed).spawn(2)
    return np.random.default_rng(noise), draws.generate_state(steps, np.uint64)
