import pickle
import sys

sys.path.insert(0, str(__import__("pathlib").Path(__file__).parent))
from cases_common import b, bot, boty, by, g, gy, u, uy, v, vy  # noqa: E402

from pfresample.filters import (
    ADAPTIVE_OPTIONS,
    BOOTSTRAP_OPTIONS,
    CPF_OPTIONS,
    D3_OPTIONS,
    SIR_OPTIONS,
    interaction_level,
    run_filter,
)
from pfresample.filters.smcem import expected_statistics

out = {}
C = dict(backend="cpu")
for m in ["systematic", "metropolis", "uphill-ca", "rejection", "butterfly-multinomial"]:
    r = run_filter(g, gy, 256, m, seed=7, diagnostics=True, **SIR_OPTIONS, **C)
    out["sir", m] = (
        r.estimates,
        r.B,
        r.resampled_estimates,
        r.distinct,
        r.lineages,
        r.resampled_cov,
    )
r = run_filter(bot, boty, 128, "systematic", seed=3, **SIR_OPTIONS, **C)
out["sir-bot"] = (r.estimates,)
r = run_filter(
    g,
    gy,
    256,
    "metropolis-c1",
    seed=7,
    stage4_weights="normalised",
    segment_bytes=128,
    **SIR_OPTIONS,
    **C,
)
out["sir-norm"] = (r.estimates, r.B)
for m, rad in [("multinomial", None), ("butterfly-multinomial", (4, 64))]:
    kw = {"radix": rad} if rad else {}
    r = run_filter(b, by, 256, m, seed=9, **BOOTSTRAP_OPTIONS, **kw, **C)
    out["boot", m] = (
        r.resampled_estimates,
        r.ess,
        interaction_level(r.stages, rad or (256,)),
        r.stages,
    )
    r = run_filter(b, by, 256, m, seed=9, ess_threshold=0.6, **ADAPTIVE_OPTIONS, **kw, **C)
    out["adapt", m] = (
        r.resampled_estimates,
        r.ess,
        interaction_level(r.stages, rad or (256,)),
        r.stages,
    )
for prec, nb in [("float64", "search"), ("float32", "divide"), ("float32", "scan")]:
    r = run_filter(
        g,
        gy,
        256,
        "cellular",
        seed=11,
        radius=3,
        precision=prec,
        neighbourhood=nb,
        diagnostics=True,
        **CPF_OPTIONS,
        **C,
    )
    out["cpf", prec, nb] = (
        r.resampled_estimates,
        r.estimates,
        r.distinct,
        r.lineages,
        r.resampled_cov,
    )
r = run_filter(bot, boty, 128, "cellular", seed=11, radius=2, **CPF_OPTIONS, **C)
out["cpf-bot"] = (r.resampled_estimates, r.estimates)
for m, opts in [
    ("d3", {}),
    ("d3", {"cdf": "paper", "threads": 64}),
    ("d3", {"components": "each"}),
    ("systematic", {}),
    ("metropolis", {}),
    ("d3", {"impl": "loop"}),
]:
    r = run_filter(u, uy, 512, m, seed=13, snapshot_step=20, **D3_OPTIONS, **opts, **C)
    out["d3", m, str(opts)] = (r.estimates, int(r.resampled.sum()), r.snapshot)
r = run_filter(u, uy, 512, "systematic", seed=13, ess_threshold=0.5, **D3_OPTIONS, **C)
out["d3-ess"] = (r.estimates, int(r.resampled.sum()))
r = run_filter(u, uy, 512, "d3", seed=13, ess_threshold=0.5, **D3_OPTIONS, **C)
out["d3-ess-d3"] = (r.estimates, int(r.resampled.sum()))
for scheme in ["multinomial", "butterfly"]:
    for f in ["bootstrap", "adaptive"]:
        for n in [64, 1024]:
            out["em", scheme, f, n] = (expected_statistics(v, vy, n, scheme, 17, filter=f),)
pickle.dump(out, open(sys.argv[1], "wb"))
