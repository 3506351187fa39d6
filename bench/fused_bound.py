#!/usr/bin/env python3
"""The bound of the GPU SIR filter's time (growth model, Systematic, T = 100)
against a PyTorch CUDA-graph filter, measured in one short run on one GPU.

1. ``barrier``: one grid barrier of the fused run (``gpu_kernels/fused.cu``'s
   ``grid_barrier``) at the run's grid for each N (``geometry.fused_blocks``),
   and at a sweep of grid sizes; a cooperative kernel doing K barriers alone
   (``bench/fused_bound.cu``).
2. ``latency``: one thread's dependent L2 round trip (``__ldcg``) and acq_rel
   atomic; ``skeleton``: the fused run's structure with none of its
   arithmetic -- the same grid, virtual blocks, loads through L2, block
   reductions and four barriers a step -- its time a step and a phase: the
   floor its data dependencies set; ``fused``: the fused run's own phase
   times (its device clock), the default grid and the sweep.
3. ``bytes``: with ``--ncu-csv`` (Nsight Compute's ``--csv`` output of a
   run made by ``--ncu-run``), the DRAM and L2 bytes each kernel of a step
   of the graph at N = 2^22 moves, and the step's floor at ``--peak-tbs``.
4. ``host``: the host's part of a fused run at ``--host-n``, split by the
   host's clock: the inputs (``graph_inputs``), their copy into pinned
   memory, the launch (the captured graph's, or the copies and the kernel
   enqueued afresh, or the way before pinned buffers: ``set``, memset,
   launch, ``get``), the wait, the result; and the engine's whole call
   (``run_filter``) around it.

From these (``summary.csv``): for each N the floor of our wall time (the
skeleton's step times T; at 2^22 the DRAM floor of a step's bytes times T;
plus the host's part of a replayed run at ``--host-n``: inputs, pinned copy,
launch, result, and the wait beyond the kernel's own clock) and, with ``--peers`` (a
``bench/gpu_filter_peers.py`` CSV of the same device), the largest lead
over the PyTorch CUDA-graph filter that floor allows.

    python bench/fused_bound.py --out OUT [--peers peers.csv] [--ncu-csv ncu.csv]
    python bench/fused_bound.py --ncu-run          # the run Nsight Compute profiles
"""

from __future__ import annotations

import argparse
import csv
import io
import statistics
import sys
import time
from pathlib import Path

import numpy as np

from pfresample.cuda import geometry, kernels
from pfresample.filters import SIR_OPTIONS, run_filter, sir_fused
from pfresample.filters.common import graph_inputs
from pfresample.models import GrowthModel

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from _common import cuda_device_info, parse_size, write_rows  # noqa: E402 -- sibling module

STEPS = 100
FIELDS = ["device", "quantity", "n", "blocks", "value", "unit", "note"]
SUMMARY_FIELDS = ["n", "blocks", "barrier_us", "skeleton_step_us", "fused_step_us",
                  "host_us", "floor_ms", "ours_ms", "torch_graph_ms", "lead_now",
                  "lead_ceiling"]  # fmt: skip


CLUSTER_BARRIERS = [f"cluster_barrier_only<{c}>" for c in geometry.FUSED_CLUSTERS]


def bound_module():
    """fused.cu's text with this folder's kernels after it (one module)."""
    code = kernels.source("fused.cu") + "\n" + (HERE / "fused_bound.cu").read_text()
    return kernels.Module(code, name_expressions=CLUSTER_BARRIERS)


def cooperative(function, grid: int, args) -> None:
    function((grid,), (geometry.FUSED_THREADS,), args, enable_cooperative_groups=True)


def barrier_ns(module, grid: int, rounds: int, repeats: int) -> float:
    """Median ns of one grid barrier on ``grid`` blocks (``rounds`` a launch)."""
    import cupy

    bar, ns = cupy.zeros(1, dtype=np.uint32), cupy.zeros(2, dtype=np.uint64)
    f = module.get_function("barrier_only")
    values = []
    for _ in range(repeats + 1):
        bar.fill(0)
        cooperative(f, grid, (bar, np.int32(rounds), ns))
        t = ns.get()
        values.append((int(t[1]) - int(t[0])) / rounds)
    return statistics.median(values[1:])


def cluster_barrier_ns(module, cluster: int, rounds: int, repeats: int) -> float:
    """Median ns of one cluster barrier on a grid of one cluster of ``cluster`` blocks."""
    import cupy

    ns = cupy.zeros(2, dtype=np.uint64)
    f = module.get_function(f"cluster_barrier_only<{cluster}>")
    sir_fused.allow_cluster(f, cluster)
    values = []
    for _ in range(repeats + 1):
        f((cluster,), (geometry.FUSED_THREADS,), (ns, np.int32(rounds), ns))
        t = ns.get()
        values.append((int(t[1]) - int(t[0])) / rounds)
    return statistics.median(values[1:])


def chase_ns(module, hops: int) -> tuple[float, float]:
    """(ns of one dependent L2 load, ns of one dependent acq_rel atomic), one thread."""
    import cupy

    rng = np.random.default_rng(0)
    words = 1 << 20  # 4 MiB: past L1, inside L2
    order = rng.permutation(words).astype(np.uint32)
    nxt = np.empty(words, dtype=np.uint32)
    nxt[order] = np.roll(order, -1)  # one cycle through every word
    nxt_d, sink = cupy.asarray(nxt), cupy.zeros(1, dtype=np.uint32)
    ns = cupy.zeros(2, dtype=np.uint64)
    f = module.get_function("l2_chase")
    loads = []
    for _ in range(3):  # the first pass brings the cycle into L2
        f((1,), (1,), (nxt_d, np.int32(hops), sink, ns))
        t = ns.get()
        loads.append((int(t[1]) - int(t[0])) / hops)
    word = cupy.zeros(2, dtype=np.uint32)
    g = module.get_function("atomic_chase")
    atomics = []
    for _ in range(3):
        g((1,), (1,), (word, np.int32(hops), ns))
        t = ns.get()
        atomics.append((int(t[1]) - int(t[0])) / hops)
    return min(loads[1:]), min(atomics[1:])


def skeleton_phases(module, n: int, grid: int, repeats: int) -> np.ndarray:
    """Median over runs of the mean µs of each of the skeleton's four phases a
    step (N, grid)."""
    import cupy

    parts, tiles = geometry.sum_parts(n), geometry.scan_tiles(n)
    x = cupy.zeros((2, n), dtype=np.float32)
    log_w, w_tilde = cupy.zeros(n, np.float32), cupy.zeros(n, np.float32)
    anc = cupy.zeros(n, np.int32)
    part_sums, tile_sum = cupy.zeros(parts, np.float64), cupy.zeros(tiles, np.float32)
    bar, top = cupy.zeros(1, np.uint32), cupy.zeros(STEPS, np.uint32)
    marks = cupy.zeros(1 + 4 * STEPS, np.uint64)
    f = module.get_function("skeleton_run")
    runs = []
    for _ in range(repeats + 1):
        bar.fill(0)
        args = (x, log_w, w_tilde, anc, np.uint32(n), np.int32(STEPS), np.int32(parts),
                np.int32(tiles), part_sums, tile_sum, bar, top, marks)  # fmt: skip
        cooperative(f, grid, args)
        # Step 0's first phase holds the start (initial particles): steps 1 ... T - 1.
        runs.append(1e-3 * np.diff(marks.get().astype(np.int64)).reshape(STEPS, 4)[1:])
    return np.median(np.stack(runs[1:]).mean(axis=1), axis=0)


def fused_phases(model, y, n: int, grid: int | None, repeats: int, cluster: int = 0):
    """(median µs of each phase a step, median wall ms) of the fused run."""
    run = sir_fused.FusedRun(model, n, STEPS, blocks=grid, cluster=cluster)
    phases, walls = [], []
    for seed in range(repeats + 1):
        r = run.run(y, seed)
        phases.append(1e6 * r.stage_seconds[1:].mean(axis=0))  # as the skeleton's
        walls.append(1e3 * r.wall_seconds)
    return np.median(np.stack(phases[1:]), axis=0), statistics.median(walls[1:]), run


def host_split(model, y, n: int, repeats: int) -> list[tuple[str, float, str]]:
    """The host's part of a fused run at N, µs (median of ``repeats``)."""
    import cupy

    rows = []
    for replay in (True, False):
        run = sir_fused.FusedRun(model, n, STEPS, replay=replay)
        label = "graph" if run.graph is not None else "enqueue"
        keys = ("inputs", "pinned", "launch", "wait", "result", "device", "latency")
        split = {k: [] for k in keys}
        for seed in range(repeats + 2):
            t0 = time.perf_counter()
            host = graph_inputs(y, seed, STEPS)
            t1 = time.perf_counter()
            run.host_in[: run.words] = host
            t2 = time.perf_counter()
            if run.graph is not None:
                run.graph.launch(run.stream)
            else:
                run._enqueue()
            t3 = time.perf_counter()
            run.stream.synchronize()
            t4 = time.perf_counter()
            result = run.result(seed, t4 - t2)  # what FusedRun.run does after its wait
            t5 = time.perf_counter()
            device = result.total_seconds  # the kernel's own clock; the wait's rest is latency
            times = (t1 - t0, t2 - t1, t3 - t2, t4 - t3, t5 - t4, device, t4 - t3 - device)
            for k, v in zip(split, times, strict=True):
                split[k].append(1e6 * v)
        for k, v in split.items():
            rows.append((f"host_{k}", statistics.median(v[2:]), label))
    # The way before the pinned buffers: pageable set, memset, launch, wait, get.
    run = sir_fused.FusedRun(model, n, STEPS, replay=False)
    old = {k: [] for k in ("upload", "memset", "launch", "wait", "get")}
    for seed in range(repeats + 2):
        host = graph_inputs(y, seed, STEPS)
        t0 = time.perf_counter()
        run.inputs[: run.words].set(host, stream=run.stream)
        t1 = time.perf_counter()
        cupy.cuda.runtime.memsetAsync(run.bar.data.ptr, 0, run.bar.nbytes, run.stream.ptr)
        t2 = time.perf_counter()
        run._launch()
        t3 = time.perf_counter()
        run.stream.synchronize()
        t4 = time.perf_counter()
        run.out.get(stream=run.stream)
        t5 = time.perf_counter()
        for k, v in zip(old, (t1 - t0, t2 - t1, t3 - t2, t4 - t3, t5 - t4), strict=True):
            old[k].append(1e6 * v)
    for k, v in old.items():
        rows.append((f"host_{k}", statistics.median(v[2:]), "pageable"))
    # The engine's whole call less the kernel's own clock (the host's part of a call).
    calls = []
    for seed in range(repeats + 2):
        t0 = time.perf_counter()
        r = run_filter(model, y, n, "systematic", seed=seed, backend="cuda", stage_times=False,
                       **SIR_OPTIONS)  # fmt: skip
        calls.append(1e6 * (time.perf_counter() - t0 - r.total_seconds))
    rows.append(("host_run_filter_less_device", statistics.median(calls[2:]), "whole call"))
    return rows


MARKER = "ncu_marker"  # a kernel launched between the warm-up call and the profiled run


def ncu_run() -> None:
    """A warm-up call, a marker kernel, then one 10-step run of the graph at
    N = 2^22 for Nsight Compute (:func:`ncu_bytes` counts what follows the
    marker)."""
    import cupy

    model = GrowthModel()
    _, y = model.simulate(10, np.random.default_rng(2026))
    for seed in (0, 1):
        run_filter(model, y, 2**22, "systematic", seed=seed, backend="cuda", stage_times=False,
                   **SIR_OPTIONS)  # fmt: skip
        if seed == 0:
            cupy.RawKernel(f'extern "C" __global__ void {MARKER}() {{}}', MARKER)((1,), (1,), ())
            cupy.cuda.Device().synchronize()


def ncu_bytes(path: Path, steps: int, peak_tbs: float) -> list[tuple]:
    """Per kernel of a step (its launches after the marker kernel, the last
    run's, over ``steps``), DRAM and L2 bytes and its time; then the step's
    totals and its floor at ``peak_tbs`` TB/s."""
    text = path.read_text().splitlines()
    start = next((i for i, line in enumerate(text) if line.startswith('"ID"')), None)
    if start is None:  # ncu ran nothing (no counters allowed, or no kernel profiled)
        return [("ncu_no_data", 0.0, text[-1][:200] if text else "empty file")]
    per, marker = {}, -1
    for row in csv.DictReader(io.StringIO("\n".join(text[start:]))):
        name = row["Kernel Name"].split("(")[0].strip()
        if name.endswith(MARKER):
            marker = max(marker, int(row["ID"]))
            continue
        value = float(row["Metric Value"].replace(",", "") or 0)
        if row["Metric Name"] == "lts__t_sectors.sum":
            value *= 32  # bytes a sector
        launch = per.setdefault(name, {}).setdefault(int(row["ID"]), {})
        launch[row["Metric Name"]] = value
    rows, totals = [], {"dram": 0.0, "l2": 0.0, "ns": 0.0}
    for name, launches in per.items():
        last = [m for i, m in launches.items() if i > marker]
        if not last:
            continue

        def total(metric, last=last):
            return sum(m.get(metric, 0.0) for m in last) / steps

        dram = total("dram__bytes_read.sum") + total("dram__bytes_write.sum")
        l2, ns = total("lts__t_sectors.sum"), total("gpu__time_duration.sum")
        totals["dram"] += dram
        totals["l2"] += l2
        totals["ns"] += ns
        note = f"{name} ({len(last)} launches in the run)"
        rows += [("bytes_dram", dram, note), ("bytes_l2", l2, name), ("kernel_ns", ns, name)]
    rows.append(("bytes_dram_step", totals["dram"], "all kernels of a step"))
    rows.append(("bytes_l2_step", totals["l2"], "all kernels of a step"))
    rows.append(("kernels_ns_step", totals["ns"], "the kernels' own time a step under ncu"))
    floor = 1e-6 * totals["dram"] / peak_tbs
    rows.append(("dram_floor_step_us", floor, f"at {peak_tbs} TB/s"))
    return rows


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--out", type=Path)
    p.add_argument("--n", type=parse_size, nargs="+", default=[2**14, 2**16, 2**18, 2**20])
    p.add_argument("--grids", type=int, nargs="+", default=[1, 8, 16, 32, 68, 132, 264])
    p.add_argument("--rounds", type=int, default=2000, help="barriers a launch")
    p.add_argument("--repeats", type=int, default=7)
    p.add_argument("--host-n", type=parse_size, default=2**14)
    p.add_argument(
        "--peers",
        type=Path,
        nargs="*",
        default=[],
        help="gpu_filter_peers.py CSVs (ours and torch-graph, medians taken)",
    )
    p.add_argument("--ncu-csv", type=Path)
    p.add_argument("--peak-tbs", type=float, default=4.8, help="the device's DRAM peak, TB/s")
    p.add_argument("--ncu-run", action="store_true", help="only the run ncu profiles")
    args = p.parse_args(argv)
    if args.ncu_run:
        ncu_run()
        return
    if args.out is None:
        p.error("--out is needed (or --ncu-run)")
    args.out.mkdir(parents=True, exist_ok=True)
    info = cuda_device_info()
    device = info["device"]
    rows = []

    def add(quantity, n, blocks, value, unit, note=""):
        rows.append({"device": device, "quantity": quantity, "n": n, "blocks": blocks,
                     "value": f"{value:.6g}", "unit": unit, "note": note})  # fmt: skip
        print(f"{quantity:<28} N={n:<9} G={blocks:<5} {value:12.4f} {unit}  {note}", flush=True)

    import cupy

    module = bound_module()
    resident = sir_fused.resident_blocks()
    sms = cupy.cuda.Device().attributes["MultiProcessorCount"]
    add("resident_blocks", "", "", resident, "blocks", f"{sms} SMs")
    load_ns, atomic_ns = chase_ns(module, 20000)
    add("l2_round_trip", "", 1, load_ns, "ns", "one thread, dependent __ldcg, 4 MiB cycle")
    add("atomic_round_trip", "", 1, atomic_ns, "ns", "one thread, dependent atom.acq_rel.gpu")
    for g in sorted({g for g in args.grids if g <= resident}):
        add("barrier", "", g, barrier_ns(module, g, args.rounds, args.repeats), "ns", "sweep")
    if int(cupy.cuda.Device().compute_capability) >= 90:
        for c in geometry.FUSED_CLUSTERS:
            value = cluster_barrier_ns(module, c, args.rounds, args.repeats)
            add("cluster_barrier", "", c, value, "ns", "one cluster")
    model = GrowthModel()
    _, y = model.simulate(STEPS, np.random.default_rng(2026))
    summary = {}
    for n in args.n:
        g = sir_fused.default_blocks(n)
        b = barrier_ns(module, g, args.rounds, args.repeats)
        add("barrier", n, g, b, "ns", "the run's grid")
        sk = skeleton_phases(module, n, g, args.repeats)
        for k, v in enumerate(sk):
            add(f"skeleton_phase{k + 1}", n, g, v, "us", "a step")
        add("skeleton_step", n, g, sk.sum(), "us", "a step")
        ph, wall, run = fused_phases(model, y, n, None, args.repeats)
        for k, v in enumerate(ph):
            add(f"fused_phase{k + 1}", n, g, v, "us", "a step")
        add("fused_step", n, g, ph.sum(), "us", "a step")
        add("fused_wall", n, g, wall, "ms", "captured" if run.graph is not None else "enqueued")
        cluster = sir_fused.default_cluster(n)
        if cluster:  # run_filter's default grid at this N: one cluster
            ph_c, wall_c, _ = fused_phases(model, y, n, None, args.repeats, cluster)
            for k, v in enumerate(ph_c):
                add(f"fused_phase{k + 1}", n, cluster, v, "us", "one cluster, a step")
            add("fused_step", n, cluster, ph_c.sum(), "us", "one cluster, a step")
            add("fused_wall", n, cluster, wall_c, "ms", "one cluster")
        for grid in sorted({max(1, g // 4), max(1, g // 2), min(resident, 2 * g)} - {g}):
            ph2, wall2, _ = fused_phases(model, y, n, grid, args.repeats)
            add("fused_step", n, grid, ph2.sum(), "us", "grid sweep, a step")
            add("skeleton_step", n, grid, skeleton_phases(module, n, grid, 3).sum(), "us",
                "grid sweep, a step")  # fmt: skip
        write_rows(
            args.out / "bound.csv", rows, FIELDS, announce=False
        )  # a run cut short keeps them
        summary[n] = {"n": n, "blocks": g, "barrier_us": b / 1e3,
                      "skeleton_step_us": sk.sum(), "fused_step_us": ph.sum()}  # fmt: skip
    host = host_split(model, y, args.host_n, max(args.repeats, 15))
    for quantity, value, note in host:
        add(quantity, args.host_n, "", value, "us", note)
    if args.ncu_csv is not None and args.ncu_csv.is_file():
        for quantity, value, note in ncu_bytes(args.ncu_csv, 10, args.peak_tbs):
            unit = "us" if quantity.endswith("_us") else "ns" if "ns" in quantity else "bytes"
            add(quantity, 2**22, "", value, unit, note)
            if quantity == "dram_floor_step_us":  # the graph's step at 2^22: its bytes' floor
                nan = float("nan")
                summary[2**22] = {"n": 2**22, "blocks": "", "barrier_us": nan,
                                  "skeleton_step_us": value, "fused_step_us": nan}  # fmt: skip
    write_rows(args.out / "bound.csv", rows, FIELDS)

    # The floor of our wall: the skeleton's steps plus the host's part of a
    # captured run (inputs, pinned copy, launch, result); the lead it allows.
    split = {}  # the first FusedRun's (replayed where captured)
    for q, v, note in host:
        if note in ("graph", "enqueue"):
            split.setdefault(q, v)
    parts = ("inputs", "pinned", "launch", "result", "latency")
    host_us = sum(split.get(f"host_{k}", 0.0) for k in parts)
    peers = {}
    for path in args.peers:
        with open(path) as f:
            for r in csv.DictReader(f):
                peers.setdefault((r["filter"], int(r["n"])), []).append(float(r["wall_ms"]))
    out = []
    for n, s in summary.items():
        floor = 1e-3 * (STEPS * s["skeleton_step_us"] + host_us)
        ours = peers.get(("systematic", n))
        torch = peers.get(("torch-graph", n))
        row = {**s, "host_us": f"{host_us:.1f}", "floor_ms": f"{floor:.4g}",
               "ours_ms": f"{statistics.median(ours):.4g}" if ours else "",
               "torch_graph_ms": f"{statistics.median(torch):.4g}" if torch else "",
               "lead_now": f"{statistics.median(torch) / statistics.median(ours):.3g}"
               if ours and torch else "",
               "lead_ceiling": f"{statistics.median(torch) / floor:.3g}"
               if torch else ""}  # fmt: skip
        for k in ("barrier_us", "skeleton_step_us", "fused_step_us"):
            row[k] = f"{row[k]:.4g}"
        out.append(row)
    write_rows(args.out / "summary.csv", out, SUMMARY_FIELDS)


if __name__ == "__main__":
    main()
