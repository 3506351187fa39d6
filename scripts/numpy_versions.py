"""Digest of the library's CPU outputs over a grid of calls, to compare NumPy versions bit for
bit (docs/library.md, "Install"). Run it with each NumPy in a throwaway environment:

    python3 -m venv /tmp/npX && /tmp/npX/bin/pip install 'numpy==X' .
    cd /tmp && /tmp/npX/bin/python /path/to/scripts/numpy_versions.py [OUT.json]

It prints the NumPy version, the number of calls and one digest of them all; OUT.json, if
given, gets one digest per call, to name the calls that differ between two versions."""

import hashlib
import json
import sys

import numpy as np

import pfresample as pr
from pfresample import models

h = hashlib.sha256()
n_calls = 0
per = {}
errors = []


def add(tag, x):
    global n_calls
    n_calls += 1
    a = np.ascontiguousarray(np.asarray(x))
    h.update(f"{tag}|{a.dtype.str}|{a.shape}".encode())
    h.update(a.tobytes())
    per[tag] = hashlib.sha256(f"{a.dtype.str}|{a.shape}".encode() + a.tobytes()).hexdigest()[:12]


g = np.random.default_rng(2024)
weights = {
    "gamma32": g.gamma(1.0, 2.0, 8192).astype(np.float32),
    "gamma64": g.gamma(1.0, 2.0, 8192),
    "huge32": (g.random(4096) * 3e38).astype(np.float32),
    "tiny64": g.random(4096) * 1e-310,
    "zeros32": np.where(g.random(4096) < 0.5, 0, g.random(4096)).astype(np.float32),
    "spike64": np.r_[np.full(4095, 1e-6), 1e6],
}
for wn, w in weights.items():
    for m in pr.methods():
        for seed in (1, 7):
            try:
                add(f"{wn}/{m}/{seed}", pr.resample(w, m, seed=seed))
            except Exception as e:
                errors.append(1) or add(
                    f"{wn}/{m}/{seed}/err", np.frombuffer(repr(e).encode(), np.uint8)
                )
    lw = np.log(np.maximum(w.astype(np.float64), 1e-300)).astype(w.dtype)
    for m in pr.methods():
        try:
            add(f"log/{wn}/{m}", pr.resample(lw, m, seed=3, log=True))
        except Exception as e:
            errors.append(1) or add(f"log/{wn}/{m}/err", np.frombuffer(repr(e).encode(), np.uint8))
w = weights["gamma32"]
add("many", pr.resample_many(w, "systematic", seeds=range(8)))
add("eachB", np.stack(pr.resample_each_B(w, "metropolis", seeds=range(3), Bs=[8, 32])))
for name in ("metropolis", "uphill"):
    add(f"B/{name}", np.array([pr.choose_B(w, name)]))
lg = models.LinearGaussianModel()
truth, y = lg.simulate(steps=40, seed=7)
for m in list(pr.methods()) + ["d3"]:
    for tau in (None, 0.5):
        try:
            run = pr.run_filter(lg, y, 512, m, seed=1, ess_threshold=tau)
            add(f"filter/{m}/{tau}", np.r_[run.estimates.ravel(), run.log_likelihood])
        except Exception as e:
            errors.append(1) or add(
                f"filter/{m}/{tau}/err", np.frombuffer(repr(e).encode(), np.uint8)
            )
for Model in (models.GrowthModel, models.BearingsOnlyModel, models.UuvModel):
    model = Model()
    if Model is models.UuvModel:
        yy = model.simulate(seed=1)[1][:30]
    else:
        yy = model.simulate(30, np.random.default_rng(1))[1]
    for m in ("systematic", "metropolis", "cellular"):
        try:
            run = pr.run_filter(model, yy, 512, m, seed=2)
            add(
                f"{Model.__name__}/{m}",
                np.r_[np.asarray(run.estimates).ravel(), run.log_likelihood],
            )
        except Exception as e:
            errors.append(1) or add(
                f"{Model.__name__}/{m}/err", np.frombuffer(repr(e).encode(), np.uint8)
            )
if len(sys.argv) > 1:
    with open(sys.argv[1], "w") as f:
        json.dump(per, f, indent=0)
print(
    json.dumps(
        {
            "numpy": np.__version__,
            "calls": n_calls,
            "errors": len(errors),
            "digest": h.hexdigest()[:24],
        }
    )
)
