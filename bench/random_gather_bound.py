"""The GPU's rate of random 4-byte reads from an array of N weights: the bound
of the Metropolis and Rejection kernels at large N, whose every iteration
reads the weight of a random candidate.

    python bench/random_gather_bound.py --out DIR

One thread a particle, ``iterations`` iterations each; iteration m reads
w[h(i, m) mod N] for a cheap integer hash h (no Philox: the kernel is the
reads and nothing else) and adds it to a register, whose sum is written once
so that no read is optimised away. Reads are independent of each other, as a
Metropolis chain's candidate reads are (the candidate's index is a draw, not
a function of the last read), so the rate is the memory system's throughput
for random sectors, not its latency. At N = 2^22 the 16 MB array sits in the
H100's 50 MB L2. Median of 9 timed launches after a warm-up, CUDA events.

Beside it, in the same run, the library's Metropolis (``pr.resample(w,
"metropolis", B=iterations)``, the kernel alone, timed the same way) on the
same weights: its candidate reads a second and their share of the bound.

Writes DIR/random_gather.csv: N, iterations, reads a second (median, min,
max), Metropolis's reads a second and its share of the bound, the device.
"""

from __future__ import annotations

import argparse
import statistics
from pathlib import Path

import numpy as np

SOURCE = r"""
extern "C" __global__ void gather(const float* __restrict__ w, unsigned int n,
                                  unsigned int mask, int iterations, float* __restrict__ out) {
    const unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float acc = 0.0f;
    unsigned int h = i * 0x9E3779B9u;
    for (int m = 0; m < iterations; ++m) {
        h ^= h >> 15; h *= 0x2C1B3C6Du; h ^= h >> 12; h += 0x297A2D39u * (m + 1);
        acc += w[(h ^ (h >> 16)) & mask];
    }
    out[i] = acc;
}
"""


def _event_times(launch, repeats: int = 9) -> list[float]:
    """Seconds of ``repeats`` launches after one untimed, by CUDA events."""
    import cupy

    launch()
    times = []
    for _ in range(repeats):
        start, stop = cupy.cuda.Event(), cupy.cuda.Event()
        start.record()
        launch()
        stop.record()
        stop.synchronize()
        times.append(cupy.cuda.get_elapsed_time(start, stop) * 1e-3)
    return times


def main():
    import cupy

    import pfresample as pr

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True)
    parser.add_argument("--log2-n", type=int, nargs="+", default=[18, 20, 22, 24])
    parser.add_argument("--iterations", type=int, default=50)
    args = parser.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    kernel = cupy.RawKernel(SOURCE, "gather")
    device = cupy.cuda.runtime.getDeviceProperties(0)["name"].decode()
    rows = []
    for e in args.log2_n:
        n = 2**e
        w = cupy.random.default_rng(1).random(n, dtype=np.float32)
        result = cupy.empty(n, dtype=np.float32)
        blocks, words = ((n + 255) // 256,), (np.uint32(n), np.uint32(n - 1))
        arguments = (w, *words, np.int32(args.iterations), result)

        def launch(arguments=arguments, blocks=blocks):
            kernel(blocks, (256,), arguments)

        def metropolis_call(w=w):
            pr.resample(w, "metropolis", seed=3, B=args.iterations)

        reads = n * args.iterations
        rates = sorted(reads / t for t in _event_times(launch))
        metropolis = sorted(reads / t for t in _event_times(metropolis_call))
        rows.append(
            {
                "n": n,
                "iterations": args.iterations,
                "reads_per_s": statistics.median(rates),
                "min": rates[0],
                "max": rates[-1],
                "metropolis_reads_per_s": statistics.median(metropolis),
                "metropolis_share": statistics.median(metropolis) / statistics.median(rates),
                "device": device,
            }  # fmt: skip
        )
        print(
            f"N = 2^{e}: {rows[-1]['reads_per_s']:.3e} random reads/s; Metropolis "
            f"{rows[-1]['metropolis_reads_per_s']:.3e} ({rows[-1]['metropolis_share']:.2f})",
            flush=True,
        )
    import pandas as pd

    pd.DataFrame(rows).to_csv(out / "random_gather.csv", index=False)


if __name__ == "__main__":
    main()
