#!/usr/bin/env python3
"""Where a step of the fused kernel spends its time: a copy of gpu_kernels/
whose fused.cu has block 0 read the device's clock at more points of each
step (after a __syncthreads, so that a mark is the block's progress), run
for a few N; prints the median time of each mark from the start of the step,
in microseconds. A probe for tuning fused.cu, not a benchmark.

    python bench/device/fused_probe.py 1024 16384 65536
"""

import os
import shutil
import sys
import tempfile
from pathlib import Path

W = 16  # marks a step in the probe's layout
POINTS = {  # mark index: (anchor in fused.cu, where: "before"/"after", name)
    5: ("        const float m_block = block_max(best);\n", "before", "P1 predicted"),
    6: ("        if (t == 0) atomicMax(top + k, to_ordered(m_block));\n", "after", "P1 max"),
    7: ("        const float inv_s = (float)(1.0 / s);\n", "after", "P3 s"),
    8: ("        const PhiloxKey key{inputs[2 + 2 * k]", "before", "P4 estimate"),
}
PHASES = {1: "P1 end", 2: "P2 end", 3: "P3 end", 4: "P4 end"}


def probe_kernels(folder: Path) -> None:
    repo = Path(__file__).resolve().parents[2]
    shutil.copytree(repo / "gpu_kernels", folder, dirs_exist_ok=True)
    text = (folder / "fused.cu").read_text()
    for ph in PHASES:
        text = text.replace(f"marks[{ph} + 4 * k]", f"marks[{ph} + {W} * k]")
    for idx, (anchor, where, _) in POINTS.items():
        assert text.count(anchor) == 1, anchor
        mark = f"__syncthreads(); if (marking) marks[{idx} + {W} * k] = global_ns();\n"
        text = text.replace(anchor, anchor + mark if where == "after" else mark + anchor)
    (folder / "fused.cu").write_text(text)


def main() -> None:
    folder = Path(tempfile.mkdtemp(prefix="fused-probe-"))
    probe_kernels(folder)
    os.environ["PFRESAMPLE_KERNEL_DIR"] = str(folder)
    import cupy
    import numpy as np

    from pfresample.filters import sir_fused
    from pfresample.models import GrowthModel

    model, steps = GrowthModel(), 100
    _, y = model.simulate(steps, np.random.default_rng(1))
    names = {**PHASES, **{i: v[2] for i, v in POINTS.items()}}
    for n in [int(a) for a in sys.argv[1:]] or [1024, 16384, 65536]:
        f = sir_fused.FusedRun(model, n, steps)
        f.marks = cupy.zeros(1 + W * steps + W, dtype=np.uint64)
        for s in range(3):  # the kernel marks into f.marks; run()'s stage times are not read
            f.run(y, s)
        m = f.marks.get().astype(np.int64)
        ks = np.arange(1, steps)
        rel = {i: np.median(m[i + W * ks] - m[4 + W * (ks - 1)]) / 1e3 for i in names}
        line = ", ".join(f"{names[i]} {rel[i]:.2f}" for i in sorted(names, key=rel.get))
        print(f"N={n} blocks={f.blocks} parts={f.parts} tiles={f.tiles}: {line}", flush=True)


if __name__ == "__main__":
    main()
