"""Snakemake entry point: weight datasets results/weights/{dist}/{n}.npz, one per N of
``params.n`` (the outputs, in the same order).

Array ``weights``: (sequences, n) float32, row s = pfresample.weights.generate(dist, n, s, seed).
"""

import numpy as np
from _pipeline import provenance, run

from pfresample import io, weights
from pfresample.backend import BACKEND_LABELS


def main(snakemake, log):
    dist = snakemake.wildcards.dist
    sequences, seed = snakemake.params.sequences, snakemake.params.seed
    weights.parse_distribution(dist)
    for n, path in zip(snakemake.params.n, snakemake.output, strict=True):
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
            "backend": BACKEND_LABELS["cpu"],
            **provenance(snakemake),
        }
        io.save_npz(path, {"weights": data}, metadata)
        log.info(
            "%s N = %d: %d sequences, mean %.4g, max %.4g",
            dist,
            n,
            sequences,
            data.mean(),
            data.max(),
        )


run(main, snakemake)  # noqa: F821 -- `snakemake` is injected by Snakemake
