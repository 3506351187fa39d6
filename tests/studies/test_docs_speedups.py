"""Every speed-up the docs state as "N× over ..." names what it is over (DESIGN.md,
"Speed-ups and baselines": a ratio without its baseline is no claim). The phrase after
"over" must name a baseline: the best CPU code, a number of threads, a named code or a
peer library; a planted ratio over nothing fails the same check."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
RATIO = re.compile(r"(\d[\d,.]*(?:[–-]\d[\d,.]*)?)× over ([^.;|()\n]*)")
# What a baseline is called in the docs: the headline's, the documents' kind of baseline,
# the peers', and the GPU variants a chapter compares with each other.
BASELINES = (
    "best CPU code", "thread", "CPU code", "baseline", "peer", "cuBLAS", "CuPy", "PyTorch",
    "JAX", "particles", "Megopolis", "scikit-image", "dtaidistance", "cuCollections",
    "SlabHash", "GPU_BASIC", "CPU_PH", "K40", "NumPy", "`",
)  # fmt: skip


def unnamed(text: str) -> list[str]:
    """The "N× over ..." phrases of ``text`` whose words name no baseline."""
    return [m.group(0) for m in RATIO.finditer(text) if not any(b in m[2] for b in BASELINES)]


def test_every_speedup_over_something_names_its_baseline():
    bad = {p.name: unnamed(p.read_text()) for p in PAGES}
    assert not {k: v for k, v in bad.items() if v}, bad


def test_a_ratio_over_nothing_is_caught():
    assert unnamed("GPU_PH leads by 109–169× over the five mixes and batches.") == [
        "109–169× over the five mixes and batches"
    ]
    assert unnamed("28.1× over the best CPU code on 16 cores") == []
    assert unnamed("164× over the CPU code of ref. [21]") == []
