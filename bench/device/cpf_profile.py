"""One growth-model CPF run per configuration N:r given, for Nsight Compute to
time its step kernels:
    ncu --kernel-name regex:cpf_ --metrics gpu__time_duration.sum \
        python3 bench/device/cpf_profile.py 16384:256
"""

import sys

import numpy as np

from pfresample.filters import CPF_OPTIONS, run_filter
from pfresample.models import GrowthModel

model = GrowthModel()
_, y = model.simulate(100, np.random.default_rng(0))
for arg in sys.argv[1:] or ["16384:256"]:
    n, radius = (int(v) for v in arg.split(":"))
    run_filter(model, y, n, "cellular", seed=1, backend="cuda", radius=radius, **CPF_OPTIONS)
