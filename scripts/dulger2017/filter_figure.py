"""Snakemake entry point: a filter figure of Dülger (2017). Figs 7.1-7.2: the
truth of a radar scenario, the measurements of trajectory 0 as x/y and one
filter estimate; Fig 6.23: the speed-up of the GPU filter over the CPU filter,
with its table (only CPU times where no GPU was measured: the caption says
why). pfresample_studies.dulger2017.filter_figures draws them."""

from pfresample.backend import BACKEND_LABELS
from pfresample.models import RadarModel
from pfresample_studies.dulger2017 import filter_figures, filter_tables
from pfresample_studies.dulger2017.trajectories import load_trajectories
from pfresample_studies.pipeline import artifacts as io
from pfresample_studies.pipeline import plots
from pfresample_studies.pipeline import tables as pipeline_tables
from pfresample_studies.pipeline.jobs import run


def trajectory(snakemake, log):
    p = snakemake.params
    arrays, _ = load_trajectories(snakemake.input.trajectories)
    cell, meta = io.load_npz(snakemake.input.cell)
    label = p.labels.get(p.spec["variant"], p.spec["variant"])
    estimate = f"{label}, N = {meta['n']:,}, trajectory 0, run 0"
    caption = plots.caption(
        backend=f"{BACKEND_LABELS.get(meta['backend'], meta['backend'])}; device: {meta['device']}",
        scale=p.scale,
        detail=f"estimate: {estimate}; measurements of trajectory 0 of "
        f"{arrays['y'].shape[0]}; truth: {meta['model_spec']['scenario'].get('description', '')}",
    )
    fig = filter_figures.trajectory_figure(
        arrays["truth"][0],
        arrays["y"][0],
        cell["estimates"],
        sensor=RadarModel().sensor,
        estimate_label=f"estimate ({estimate})",
        title=p.spec["title"],
        caption=caption,
    )
    return fig, caption


def speedup(snakemake, log):
    p = snakemake.params
    rows = {}
    for backend in ("cpu", "cuda"):
        paths = getattr(snakemake.input, backend, [])
        cells = [io.load_npz(path) for path in paths]
        rows[backend] = (
            filter_tables.filter_table(cells, {"variants": [p.spec["variant"]]}) if cells else None
        )
    frame = filter_tables.speedup_frame(rows["cpu"], rows["cuda"])
    pipeline_tables.write_csv(frame, snakemake.output.table)
    metas = [io.load_npz(path)[1] for path in snakemake.input.cpu]
    meta = metas[0]
    threads = meta["threads"] or "all"
    cpu = f"{BACKEND_LABELS['cpu']} on {meta['cpu']}, {threads} thread(s)"
    cpu += f" of {meta['cpu_count']} logical CPUs"
    parts = max(m.get("parts", 1) for m in metas)
    if parts > 1:  # runs timed beside other jobs: say how loaded the host was
        load = max(max(m.get("load_average", [0.0])) for m in metas)
        cpu += f", runs split over up to {parts} jobs side by side (load average up to {load:.0f})"
    gpu = f"GPU: {frame['gpu_device'].iloc[0]}" if p.note is None else p.note
    first = frame.iloc[0]
    caption = plots.caption(
        backend=f"{cpu}; {gpu}",
        scale=p.scale,
        detail=f"{p.spec['variant']} on {p.spec['model']}: {first['trajectories']} trajectories x "
        f"{first['runs']} runs per N, mean seconds per run",
    )
    fig = filter_figures.speedup_figure(
        frame, steps=int(meta["steps"]), title=p.spec["title"], caption=caption
    )
    return fig, caption


def main(snakemake, log):
    p = snakemake.params
    draw = trajectory if p.spec["kind"] == "trajectory" else speedup
    fig, caption = draw(snakemake, log)
    name = snakemake.output.png.rsplit("/", 1)[-1].removesuffix(".png")
    title = f"Dülger (2017) {name}: {p.spec['title']}"
    plots.save(fig, [snakemake.output.png, snakemake.output.pdf], title=title)
    log.info("caption: %s", caption)


run(main, snakemake)  # noqa: F821 -- `snakemake` is injected by Snakemake
