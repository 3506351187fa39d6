"""Moazeni (2013), "Parallel Algorithms for Medical Informatics on
Data-Parallel Many-Core Processors" (UCLA PhD thesis): the fifth study.

* ``dp``, ``dp_gpu``, ``experiments``, ``tables``, ``figures``: chapter 3,
  non-serial polyadic dynamic programming;
* ``hashtable``, ``hashtable_gpu``, ``hashtable_workloads``, ``hashtable_figures``:
  chapter 4, the lock-free parallel hash table;
* ``sharedmem``, ``chanvese``: chapter 5, shared-memory reuse by colouring;
* ``tv``, ``tv_gpu``, ``tv_experiments``, ``tv_figures``: chapter 6, TV
  regularisation of diffusion tensors (and chapter 5's experiments);
* ``mddtw``, ``mddtw_gpu``, ``mddtw_experiments``, ``mddtw_figures``: chapter 7,
  multi-dimensional signal search;
* ``native``: the compiled CPU baselines; ``catalog``: the configuration's keys,
  their checks and the printed numbers;
* ``kernels/``: the CUDA sources of the GPU modules (``CUDA_SOURCES``), compiled
  through the library's cache (``pfresample.cuda.kernels``).
"""

from pathlib import Path

from pfresample.cuda import kernels

CUDA_SOURCES = Path(__file__).resolve().parent / "kernels"


def cuda_source(name: str) -> str:
    """The text NVRTC compiles of ``kernels/<name>``, its includes pasted in."""
    return kernels.source(name, root=CUDA_SOURCES)
