"""The GPU filters :func:`pfresample.run_filter` chooses from: each a CUDA
graph of a built-in model's device twin, run where the model, the resampler
and the options are the ones it implements.

* the cellular filter (``cellular_gpu``): resampler "cellular" on the growth
  or bearings-only model, radius <= ``cuda.geometry.CPF_MAX_RADIUS``,
  resampling every step, drawing the CPF's way (``engine.cpf_choice``:
  ``CPF_OPTIONS``, or a cellular parameter beyond the radius); with the
  default arithmetic and the radius alone the CPU draws from W, and so does
  the engine's CuPy loop;
* Das et al.'s filter (``d3_gpu``): the UUV model, resampling every step,
  joint D3 or any method with a kernel (``arithmetic="float32-w64"`` or
  resampler "d3");
* Güldaş's bootstrap and adaptive filters (``guldas_gpu``): the bimodal
  model, the estimate after resampling (``resampled_estimates``), stage 4 on
  w~;
* Dülger's SIR filter (``sir_gpu``, and its fused one-kernel run,
  ``sir_fused``): a model with a device twin (growth, radar, bearings-only),
  resampling every step, any method with a kernel.

Each runs another draw of the same algorithm (float32 states, Philox process
noise), so a GPU run agrees with the CPU's in distribution, not bit for bit
(tests/gpu/test_gpu_engine.py). Each gives the log-likelihood estimate
from what its steps keep on the device -- each step's largest log-weight
and its float64 sum of w~, and the adaptive filter the sum of the weights
it carries on (``graph.log_z_steps``) -- copied back once after the run.
"""

from __future__ import annotations

from .graph import cuda_twin

THREADS_SCOPES = ("d3", "step")


def _has(model, graph: str) -> bool:
    """Whether ``model`` has device code for the GPU graph ``graph`` (``cuda.twin``)."""
    return cuda_twin(model, graph) is not None


def _cpf_ok(model, own: dict, options: dict) -> bool:
    from ..cuda.geometry import CPF_MAX_RADIUS
    from .cellular_gpu import cpf_twin

    return (
        cpf_twin(model) is not None and int(own.get("radius", 1)) <= CPF_MAX_RADIUS
        and options["cpf_choice"]
        and options["ess_threshold"] is None and options["gate"] == "filter"
        and not options["diagnostics"] and options["snapshot_step"] is None
    )  # fmt: skip


def _d3_ok(model, m, own: dict, options: dict) -> bool:
    return (
        _has(model, "d3") and options["ess_threshold"] is None
        and own.get("components", "joint") == "joint" and own.get("impl", "table") == "table"
        and (m.output == "particles"
             or (m.gpu is not None and options["arithmetic"] == "float32-w64"))
        and not options["diagnostics"]
    )  # fmt: skip


def _guldas_ok(model, m, options: dict) -> bool:
    if not _has(model, "guldas") or options["stage4_weights"] != "unnormalised":
        return False
    if options["gate"] == "stages":
        return m.gated and options["ess_threshold"] is not None
    return options["resampled_estimates"] == "mean" and m.gpu is not None


def _sir_ok(model, m, options: dict) -> bool:
    from .sir_gpu import device_twin

    return (
        device_twin(model) is not None and m.gpu is not None and m.output == "ancestors"
        and m.name != "cellular" and options["ess_threshold"] is None
        and options["gate"] == "filter" and options["estimator"] == "normalised"
        and options["stage4_weights"] is None
        and options["resample_at"] is None and not options["diagnostics"]
        and options["resampled_estimates"] is None and options["snapshot_step"] is None
        and not options["keep_particles"]
    )  # fmt: skip


def fused_filter(model, m, n: int, kw: dict, own: dict, options: dict):
    """The GPU filter (a function of (model, y, n, m, seed, kw, own) that
    returns a ``FilterResult``) that runs these arguments, or None."""
    if m.name == "cellular":
        return _cellular if _cpf_ok(model, own, options) else None
    if _has(model, "d3"):
        return _d3(options) if _d3_ok(model, m, own, options) else None
    if _has(model, "guldas"):
        return _guldas(options) if _guldas_ok(model, m, options) else None
    return _sir(options) if _sir_ok(model, m, options) else None


def sir_graph(model, m, options: dict) -> bool:
    """Whether ``fused_filter`` runs these arguments on the SIR graph with
    stage times: the graph whose runs ``sir_batch`` puts side by side."""
    plain = m.name != "cellular" and not (_has(model, "d3") or _has(model, "guldas"))
    return plain and options["stage_times"] and _sir_ok(model, m, options)


def sir_keywords(kw: dict) -> dict:
    """The SIR graph's keywords among the method's kernel arguments."""
    return {k: kw[k] for k in ("B", "epsilon", "segment_bytes", "ssd_table") if k in kw}


def why_not(model, m, kw: dict, own: dict, options: dict) -> str:
    """Why no GPU filter runs these arguments, for backend="cuda"'s error."""
    reasons = []
    if m.output == "ancestors" and m.gpu is None:
        reasons.append(f"{m.name!r} has no CUDA kernel")
    if options["ess_threshold"] is not None and options["gate"] == "filter":
        reasons.append("the GPU filters resample every step (ess_threshold=None)")
    if (own.get("components", "joint"), own.get("impl", "table")) != ("joint", "table"):
        reasons.append("the GPU filter runs the joint D3 (components='joint', impl='table')")
    if options["diagnostics"]:
        reasons.append("diagnostics are the CPU filter's")
    why = "; ".join(reasons) or "filters/gpu.py lists what each GPU filter covers"
    return (
        f"no GPU filter runs {type(model).__name__} with {m.name!r} and these options "
        f"({why}); use backend='cpu' or 'auto'"
    )


def _cellular(model, y, n, m, seed, kw, own):
    from .cellular_gpu import run_cpf_gpu

    return run_cpf_gpu(model, y, n, int(own.get("radius", 1)), seed,
                       fast_math=bool(own.get("fast_math", False)),
                       neighbourhood=own.get("neighbourhood", "search"),
                       precision=own.get("precision", "float64"),
                       weighted=bool(own.get("weighted", True)))  # fmt: skip


def _d3(options):
    def run(model, y, n, m, seed, kw, own):
        from .d3_gpu import run_d3_gpu

        return run_d3_gpu(model, y, n, seed, m=m, noise=own.get("noise", "eq5"),
                          cdf=own.get("cdf", "prefix"), ess_threshold=None,
                          snapshot_step=options["snapshot_step"], threads=own.get("threads"),
                          threads_scope=own.get("threads_scope", "d3"))  # fmt: skip

    return run


def _guldas(options):
    staged = options["gate"] == "stages"

    def run(model, y, n, m, seed, kw, own):
        from .guldas_gpu import run_adaptive_gpu, run_bootstrap_gpu

        if staged:
            params = {k: v for k, v in kw.items() if k != "radix"}
            return run_adaptive_gpu(model, y, n, m, seed, tau=options["ess_threshold"],
                                    radix=kw.get("radix"), **params)  # fmt: skip
        return run_bootstrap_gpu(model, y, n, m, seed, **kw)

    return run


def _sir(options):
    def run(model, y, n, m, seed, kw, own):
        from .sir_gpu import run_sir_gpu

        keywords = sir_keywords(kw)
        return run_sir_gpu(model, y, n, m, seed, stage_times=options["stage_times"], **keywords)

    return run
