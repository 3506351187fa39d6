#!/usr/bin/env bash
# On a CUDA host, in the checkout:
# the GPU test suite against the checkout, then the wheel built from it,
# installed into a fresh virtual environment and used from another directory
# to resample on the GPU. Output lines start with "==" per step.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
repo=$PWD
echo "== pytest -m gpu (an editable install of the checkout)"
python3 -m pip install -q --no-deps --no-build-isolation -e "$repo" 2>&1 | tail -2
python3 -m pytest -m gpu -q -p no:cacheprovider "$@" 2>&1 | tail -4
python3 -m pip uninstall -q -y pfresample
echo "== wheel"
# python3 there is a virtual environment holding CuPy: the wheel goes into a
# folder of its own on PYTHONPATH, and runs from outside the checkout.
rm -rf /tmp/pfr-wheel /tmp/pfr-site
python3 -m pip wheel -q --no-deps --no-build-isolation -w /tmp/pfr-wheel "$repo" 2>&1 | tail -2
python3 -m pip install -q --no-deps --no-index --target /tmp/pfr-site /tmp/pfr-wheel/*.whl
cd /tmp && PYTHONPATH=/tmp/pfr-site python3 - "$repo" <<'PY'
import sys
from pathlib import Path

import cupy
import numpy as np

import pfresample as pr
from pfresample.cuda.kernels import kernel_dir

repo = Path(sys.argv[1])
print("installed at", Path(pr.__file__).parent, "kernels at", kernel_dir())
assert repo not in Path(pr.__file__).parents, "imported the checkout, not the wheel"
for src in sorted((repo / "gpu_kernels").glob("*.cu*")):
    assert (kernel_dir() / src.name).read_bytes() == src.read_bytes(), src.name
w = cupy.asarray(np.random.default_rng(1).gamma(2.0, 2.0, 1 << 20).astype(np.float32))
for method in ("systematic", "metropolis", "uphill-ca", "rejection"):
    anc = pr.resample(w, method, seed=7, backend="cuda")
    same = bool((anc.get() == pr.resample(w.get(), method, seed=7, backend="cpu")).all())
    print(f"wheel on {cupy.cuda.runtime.getDeviceProperties(0)['name'].decode()}: {method} "
          f"N = {w.size}: {type(anc).__module__}.{type(anc).__name__} {anc.dtype}, "
          f"same ancestors as the CPU: {same}")
PY
