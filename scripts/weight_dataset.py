"""Snakemake entry point: one weight dataset, results/weights/{dist}/{n}.npz.

Array ``weights``: (sequences, n) float32, row s = pfresample.weights.generate(dist, n, s, seed).
"""

import numpy as np
from _pipeline import provenance, run

from pfresample import io, weights


def main(snakemake, log):
    dist, n = snakemake.wildcards.dist, int(snakemake.wildcards.n)
    sequences, seed = snakemake.params.sequences, snakemake.params.seed
    weights.parse_distribution(dist)
    data = np.empty((sequences, n), dtype=np.float32)
    for s in range(sequences):
        data[s] = weights.generate(dist, n, s, seed, dtype=np.float32)
    metadata = {
        "what": "weight sequences",
        "distribution": dist,
        "n": n,
        "sequences": sequences,
        "seed": seed,
        "dtype": "float32",
        "backend": "CPU (NumPy)",
        **provenance(snakemake),
    }
    io.save_npz(snakemake.output[0], {"weights": data}, metadata)
    log.info(
        "%s: %d x %d weights, mean %.4g, max %.4g", dist, sequences, n, data.mean(), data.max()
    )


run(main, snakemake)  # noqa: F821 -- `snakemake` is injected by Snakemake
