import pickle
import sys

sys.path.insert(0, str(__import__("pathlib").Path(__file__).parent))
from cases_common import b, bot, boty, by, g, gy, u, uy, v, vy  # noqa: E402

from pfresample.filters import run_adaptive, run_bootstrap, run_cpf, run_d3, run_sir
from pfresample.filters.smcem import expected_statistics

out = {}
for m in ["systematic", "metropolis", "uphill-ca", "rejection", "butterfly-multinomial"]:
    r = run_sir(g, gy, 256, m, 7, diagnostics=True)
    out["sir", m] = (
        r.estimates,
        r.B,
        r.resampled_estimates,
        r.distinct,
        r.lineages,
        r.resampled_cov,
    )
r = run_sir(bot, boty, 128, "systematic", 3, segment_bytes=None)
out["sir-bot"] = (r.estimates,)
r = run_sir(g, gy, 256, "metropolis-c1", 7, normalised=True, segment_bytes=128)
out["sir-norm"] = (r.estimates, r.B)
for m, rad in [("multinomial", None), ("butterfly-multinomial", (4, 64))]:
    kw = {"radix": rad} if rad else {}
    r = run_bootstrap(b, by, 256, m, 9, **kw)
    out["boot", m] = (r.estimates, r.ess, r.level, r.stages)
    r = run_adaptive(b, by, 256, m, 9, tau=0.6, **kw)
    out["adapt", m] = (r.estimates, r.ess, r.level, r.stages)
for prec, nb in [("float64", "search"), ("float32", "divide"), ("float32", "scan")]:
    r = run_cpf(g, gy, 256, 3, 11, precision=prec, neighbourhood=nb, weighted=True, diversity=True)
    out["cpf", prec, nb] = (
        r.estimates,
        r.weighted_estimates,
        r.distinct,
        r.lineages,
        r.resampled_cov,
    )
r = run_cpf(bot, boty, 128, 2, 11, weighted=True)
out["cpf-bot"] = (r.estimates, r.weighted_estimates)
for m, opts in [
    ("d3", {}),
    ("d3", {"cdf": "paper", "threads": 64}),
    ("d3", {"components": "each"}),
    ("systematic", {}),
    ("metropolis", {}),
    ("d3", {"impl": "loop"}),
]:
    r = run_d3(u, uy, 512, 13, method=m, snapshot_step=20, **opts)
    out["d3", m, str(opts)] = (r.estimates, r.resampled, r.snapshot)
r = run_d3(u, uy, 512, 13, method="systematic", ess_threshold=0.5)
out["d3-ess"] = (r.estimates, r.resampled)
r = run_d3(u, uy, 512, 13, method="d3", ess_threshold=0.5)
out["d3-ess-d3"] = (r.estimates, r.resampled)
for scheme in ["multinomial", "butterfly"]:
    for f in ["bootstrap", "adaptive"]:
        for n in [64, 1024]:
            out["em", scheme, f, n] = (expected_statistics(v, vy, n, scheme, 17, filter=f),)
pickle.dump(out, open(sys.argv[1], "wb"))
