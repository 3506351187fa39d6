#!/usr/bin/env python3
"""The GPU SIR filter against what users write instead: a PyTorch and a JAX
bootstrap filter, in one run on one device (issue "The GPU filter against what
users write instead").

Every filter runs the growth model (thesis eqs. 2.34-2.35, ``GrowthModel``),
T = 100 steps, float32 states, systematic resampling at every step, on the
same trajectory, with the same time indices as ``pfresample.filters.run_sir``
(step k: x = f(x, k) + noise, weighted by ``y[k]``, the estimate, then
resampling). The peers are written plainly, as a user would:

* ``torch-eager``: a Python loop of PyTorch operations; the weights
  normalised as exp(log w - max) / sum (``torch.softmax`` over one row of
  N runs on a single block: 2.07 ms a step at N = 2^22 on the H200,
  docs/performance-archive.md, so a user who times it writes this);
  systematic resampling by ``torch.cumsum`` + ``torch.searchsorted``;
* ``torch-graph``: the same 100 steps captured once as a CUDA graph
  (``torch.cuda.CUDAGraph``) and replayed, the readings in a static tensor;
* ``jax``: ``jax.jit`` of a ``lax.scan`` over the steps, the same
  normalisation, ``jnp.cumsum`` + ``jnp.searchsorted``;
* ours: ``run_sir(..., backend="cuda", stage_times=False)`` for every
  method of thesis Table 6.2: Systematic as one fused kernel a run up to
  ``geometry.FUSED_DEFAULT_MAX_N`` (``filters/sir_fused.py``), the others and larger
  N as one CUDA graph a run (``filters/sir_gpu.py``); and, up to
  FUSED_DEFAULT_MAX_N, Systematic's graph too (``systematic-graph``).

Each is timed by the host's clock around a whole run (inputs in, estimates
back on the host: what a user waits for), the median of ``--repeats`` runs
after ``--warmup`` untimed ones (compilation, capture), and its RMSE against
the truth is given beside (the mean over the timed runs), so that no filter
wins by computing less. Ours also reports its device time (CUDA events, or
the fused kernel's own clock).

    python bench/gpu_filter_peers.py --csv results/bench/gpu_filter_peers.csv
"""

from __future__ import annotations

import argparse
import datetime
import math
import os
import statistics
import sys
import time
from pathlib import Path

import numpy as np

from pfresample.cuda import geometry
from pfresample.filters import SIR_OPTIONS, rmse, run_filter
from pfresample.filters.sir_gpu import run_sir_gpu
from pfresample.models import GrowthModel
from pfresample.resampling.registry import get_method

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import parse_size, write_rows  # noqa: E402 -- sibling module

STEPS = 100
OURS = ("systematic", "metropolis", "rejection", "uphill", "uphill-ca", "uphill-c1")
FIELDS = ["date", "device", "torch", "jax", "cupy", "filter", "n", "steps", "wall_ms",
          "device_ms", "rmse", "repeats"]  # fmt: skip


# --- PyTorch, as a user writes it ---------------------------------------------------


def run_sir(model, y, n, method, seed, **kw):
    """Dülger's Algorithm 2.4: ``run_filter`` with ``SIR_OPTIONS`` (the CPU unless told)."""
    kw.setdefault("backend", "cpu")
    return run_filter(model, y, n, method, seed=seed, **SIR_OPTIONS, **kw)


def torch_filter(y, n: int, model: GrowthModel):
    """One bootstrap filter run in PyTorch: the estimates (T,) on the device."""
    import torch

    dev = y.device
    x = math.sqrt(model.init_var) * torch.randn(n, device=dev)
    x = x + model.init_mean
    k = torch.arange(y.shape[0], device=dev, dtype=torch.float32)
    drift = 8.0 * torch.cos(1.2 * k)
    offsets = torch.arange(n, device=dev, dtype=torch.float32)
    est = []
    for t in range(y.shape[0]):
        v = torch.randn(n, device=dev)
        x = x / 2 + 25 * x / (1 + x * x) + drift[t] + math.sqrt(model.sigma_v2) * v
        log_w = -0.5 * (y[t] - x * x / 20) ** 2 / model.sigma_n2
        w = torch.exp(log_w - log_w.max())
        w = w / w.sum()
        est.append((w * x).sum())
        c = torch.cumsum(w, dim=0)
        u = (torch.rand(1, device=dev) + offsets) / n
        idx = torch.searchsorted(c, u * c[-1]).clamp_(max=n - 1)
        x = x[idx]
    return torch.stack(est)


def torch_runs(y_host, n: int, model, repeats: int, warmup: int, graph: bool):
    import torch

    dev = torch.device("cuda")
    torch.manual_seed(0)  # the default generator: a CUDA graph captures it without registration
    y = torch.tensor(y_host, dtype=torch.float32, device=dev)
    if graph:
        static_y = y.clone()
        stream = torch.cuda.Stream()
        stream.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(stream):
            for _ in range(2):  # warm-up on a side stream, as torch's docs ask before a capture
                torch_filter(static_y, n, model)
        torch.cuda.current_stream().wait_stream(stream)
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            static_est = torch_filter(static_y, n, model)

        def run():
            static_y.copy_(torch.from_numpy(y_host.astype(np.float32)).to(dev, non_blocking=True))
            g.replay()
            return static_est.cpu().numpy()

    else:

        def run():
            yd = torch.from_numpy(y_host.astype(np.float32)).to(dev)
            return torch_filter(yd, n, model).cpu().numpy()

    return _time(run, repeats, warmup)


# --- JAX, as a user writes it -------------------------------------------------------


def jax_runner(n: int, model: GrowthModel):
    import jax
    import jax.numpy as jnp

    sv, sn2 = math.sqrt(model.sigma_v2), model.sigma_n2

    def step(carry, inputs):
        x, key = carry
        t, yt = inputs
        key, k1, k2 = jax.random.split(key, 3)
        x = x / 2 + 25 * x / (1 + x * x) + 8.0 * jnp.cos(1.2 * t) + sv * jax.random.normal(k1, (n,))
        log_w = -0.5 * (yt - x * x / 20) ** 2 / sn2
        w = jnp.exp(log_w - jnp.max(log_w))
        w = w / jnp.sum(w)
        est = jnp.sum(w * x)
        c = jnp.cumsum(w)
        u = (jax.random.uniform(k2) + jnp.arange(n)) / n
        idx = jnp.minimum(jnp.searchsorted(c, u * c[-1]), n - 1)
        return (x[idx], key), est

    @jax.jit
    def run(y, key):
        key, k0 = jax.random.split(key)
        x = model.init_mean + math.sqrt(model.init_var) * jax.random.normal(k0, (n,))
        t = jnp.arange(y.shape[0], dtype=jnp.float32)
        _, est = jax.lax.scan(step, (x, key), (t, y))
        return est

    return run


def jax_runs(y_host, n: int, model, repeats: int, warmup: int):
    import jax
    import jax.numpy as jnp

    run = jax_runner(n, model)
    counter = iter(range(10**9))

    def once():
        y = jnp.asarray(y_host, dtype=jnp.float32)
        return np.asarray(run(y, jax.random.PRNGKey(next(counter))))

    return _time(once, repeats, warmup)


# --- timing ---------------------------------------------------------------------------


def _time(run, repeats: int, warmup: int):
    """(median ms, estimates of every timed run) of ``run()``, host clock."""
    for _ in range(warmup):
        run()
    times, outs = [], []
    for _ in range(repeats):
        start = time.perf_counter()
        outs.append(run())
        times.append(1e3 * (time.perf_counter() - start))
    return statistics.median(times), outs


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--n", type=parse_size, nargs="+", default=[2**k for k in range(10, 23, 2)])
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--warmup", type=int, default=1)
    p.add_argument("--ours", nargs="+", default=list(OURS))
    p.add_argument("--peers", nargs="+", default=["torch-eager", "torch-graph", "jax"])
    p.add_argument("--csv", type=Path, default=Path("results/bench/gpu_filter_peers.csv"))
    args = p.parse_args(argv)

    # JAX takes 75 % of the GPU's memory at start unless told not to; CuPy and PyTorch share it.
    os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
    import cupy
    import jax
    import torch

    model = GrowthModel()
    truth, y = model.simulate(STEPS, np.random.default_rng(2026))
    name = cupy.cuda.runtime.getDeviceProperties(0)["name"]
    info = {"date": datetime.date.today().isoformat(),
            "device": name.decode() if isinstance(name, bytes) else str(name),
            "torch": torch.__version__, "jax": jax.__version__, "cupy": cupy.__version__,
            "steps": STEPS, "repeats": args.repeats}  # fmt: skip
    rows = []

    def add(label, n, wall_ms, device_ms, estimates):
        err = statistics.mean(rmse(np.asarray(e, dtype=np.float64), truth[1:]) for e in estimates)
        rows.append({**info, "filter": label, "n": n, "wall_ms": f"{wall_ms:.4g}",
                     "device_ms": "" if device_ms is None else f"{device_ms:.4g}",
                     "rmse": f"{err:.4f}"})  # fmt: skip
        dev = "" if device_ms is None else f", device {device_ms:8.3f} ms"
        print(f"N={n:>9,} {label:<16} {wall_ms:9.3f} ms{dev}  RMSE {err:.4f}", flush=True)

    def ours(n, method, **kw):
        """Our runs, each timed by the host's clock around the whole call (the
        keys derived, inputs up, estimates back: what a user waits for)."""
        walls, runs = [], []
        for s in range(args.warmup + args.repeats):
            start = time.perf_counter()
            runs.append(run(n, method, s, **kw))
            walls.append(1e3 * (time.perf_counter() - start))
        return statistics.median(walls[args.warmup :]), runs[args.warmup :]

    def run(n, method, seed, fused=None):
        if fused is None:
            return run_sir(model, y, n, method, seed, backend="cuda", stage_times=False)
        return run_sir_gpu(model, y, n, get_method(method), seed, stage_times=False, fused=fused)

    for n in args.n:
        rows_ours = [(m, m, {}) for m in args.ours]
        # a tree from before FUSED_DEFAULT_MAX_N (an A/B base) takes its fused run to FUSED_MAX_N
        fused_max = getattr(geometry, "FUSED_DEFAULT_MAX_N", geometry.FUSED_MAX_N)
        if "systematic" in args.ours and n <= fused_max:
            rows_ours.append(("systematic-graph", "systematic", {"fused": False}))
        for label, method, kw in rows_ours:
            wall_ms, runs = ours(n, method, **kw)
            add(label, n, wall_ms, statistics.median(1e3 * r.total_seconds for r in runs),
                [r.estimates for r in runs])  # fmt: skip
        for peer in args.peers:
            if peer == "jax":
                ms, outs = jax_runs(y, n, model, args.repeats, args.warmup)
            else:
                ms, outs = torch_runs(y, n, model, args.repeats, args.warmup, peer == "torch-graph")
            add(peer, n, ms, None, outs)
    write_rows(args.csv, rows, FIELDS)
    print("\nSystematic against the faster peer (wall time):")
    for n in args.n:
        at = {r["filter"]: float(r["wall_ms"]) for r in rows if r["n"] == n}
        peers = [at[p] for p in args.peers if p in at]
        if "systematic" in at and peers:
            print(f"N={n:>9,}: {min(peers) / at['systematic']:6.2f}x")


if __name__ == "__main__":
    main()
