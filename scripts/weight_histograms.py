"""Snakemake entry point: Fig 2.3 of Dülger (2017), histograms of one weight
sequence of each gamma distribution (pfresample.figures.weight_histograms)."""

from _pipeline import run

from pfresample import figures, io


def main(snakemake, log):
    p = snakemake.params
    samples = {}
    for dist, path in zip(p.distributions, snakemake.input.weights, strict=True):
        arrays, meta = io.load_npz(path)
        samples[dist] = arrays["weights"][p.sequence]
        log.info("%s: sequence %d of %s (%d sequences)", dist, p.sequence, path, meta["sequences"])
    caption = figures.caption(
        backend=p.backend, scale=p.scale, n=p.n, detail=f"sequence {p.sequence}, {p.bins} bins"
    )
    fig = figures.weight_histograms(samples, bins=p.bins, caption=caption)
    figures.save(fig, [snakemake.output.png, snakemake.output.pdf], title="Dülger (2017) Fig 2.3")
    log.info("caption: %s", caption)


run(main, snakemake)  # noqa: F821 -- `snakemake` is injected by Snakemake
