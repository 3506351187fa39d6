"""What the models' CUDA twins share: the launch of a ``models.cu`` kernel
and the protocol the GPU graphs read.

A built-in model names its device code beside its NumPy methods: the class
attribute ``cuda_twins``, a mapping from a GPU graph's name to the twin's
class, made as ``twin_class(model, **options)``:

* ``"sir"``: the SIR graph (``filters.sir_gpu``) and the Güldaş graphs
  (``filters.guldas_gpu``): ``rows``, ``measurement_size``, ``init(x, key)``,
  ``predict(x, log_w, k, z, key, top)``, optionally ``predict_through``,
  and ``log_likelihood_constant()`` (what the kernel's log g leaves out of
  the model's); ``fused`` True where ``filters.sir_fused`` runs the model;
* ``"cpf"``: the cellular filter's graph (``filters.cellular_gpu``):
  ``rows``, ``prefix``, ``drift(k)``, ``init_args()``, ``step_args()``;
* ``"d3"``: Das et al.'s filter (``filters.d3_gpu``), which reads the
  model's parameters itself;
* ``"guldas"``: Güldaş's bootstrap and adaptive graphs.

``filters.graph.cuda_twin`` asks a model for one; a model without the
attribute (a user's) has none, and runs on the engine's CuPy loop or the CPU.
"""

from __future__ import annotations

import numpy as np

from . import geometry, kernels

THREADS = geometry.REDUCE_THREADS  # every kernel of models.cu and filter.cu (block reductions)


def launch(module: str, name: str, lanes: int, args: tuple, grid: int | None = None) -> None:
    """``module``'s kernel ``name`` with THREADS a block: one thread per
    lane, or ``grid`` blocks."""
    grid = geometry.blocks(lanes, THREADS) if grid is None else grid
    kernels.kernel(module, name)((grid,), (THREADS,), args)


def rows4_init(x, key, means, sds) -> None:
    """The four state rows of ``x`` (4, N) from N(means, diag(sds^2))
    (models.cu, rows4_init): the radar and bearings-only priors."""
    n = x.shape[-1]
    f32 = [np.float32(v) for v in (*means, *sds)]
    launch("models.cu", "rows4_init", n, (x, np.uint32(n), key, *f32))
