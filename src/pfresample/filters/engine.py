"""One particle filter for any resampler and any model: :func:`run_filter`.

The bootstrap filter (Gordon et al. 1993; Dülger Algorithm 2.4, Güldaş Figs
1.2-1.3) with the model's transition as the proposal. One step k = 1 ... T,
with log-weights log W_{k-1} carried from the step before (log W_0 = -log N):

1. x_k^i ~ p(x_k | x_{k-1}^i) (the model's ``transition``) and
   l^i = log W_{k-1}^i + log g(z_k | x_k^i) (its ``log_likelihood``);
2. the increment log Z_k = log SUM_i exp(l^i) - log SUM_i W_{k-1}^i, computed
   as m + log SUM exp(l^i - m) with m = max l^i, so that no weight underflows;
3. W_k^i = exp(l^i - m) / SUM, the estimate SUM_i W_k^i x_k^i and
   ESS_k = 1 / SUM_i (W_k^i)^2 (Güldaş eq. 1.11);
4. when ``ess_threshold`` is None, or ESS_k < tau N: resample with the
   registry method (x_k <- x_k[ancestors], even weights), or move the
   particles with D3 (Das et al. 2014); with ``gate="stages"`` an adaptive
   resampler (the butterflies; Güldaş Fig 3.7) decides stage by stage.

log p(z_1:T) is estimated by SUM_k log Z_k: the standard estimator, whose
exponent is unbiased for p(z_1:T) when the resampler is unbiased (each
particle's expected number of offspring N W^i: the cumulative methods,
Rejection, the butterflies; Del Moral 2004, Prop. 7.4.1); Metropolis and
Uphill with a finite B, cellular's local selection and D3's moves are not,
and the estimate then carries their bias (the design-space map measures it).
It is of the density the model's ``log_likelihood`` returns: a model that
drops constants (the built-in ones do, except ``LinearGaussianModel``) gets
log p(z_1:T) less T times them.

Stage 4's weights follow §6.9 of Dülger (2017): the comparison-based methods
(Metropolis, Rejection, Uphill) get w~ = exp(l - m) (largest weight 1), the
cumulative ones the normalised W (``stage4_weights`` overrides it). The
model protocol is the one ``pfresample.models`` documents; docs/library.md
("Your own model") shows a user's model.

Arithmetic. The source documents' filters fix how stages 2-3 round, and
their studies' tables rest on those bits; ``arithmetic`` names the
convention (:data:`ARITHMETIC`):

* ``"float64"`` (the default): w~ in float64, the carried log-weights
  normalised (log W), the estimate and the ESS as NumPy sums;
* ``"float64-raw"``: the same weights, the log-weights carried unnormalised
  (0 after a resampling): the cellular filter of Gelencsér-Horváth et al.
  (2013), whose resampler reads them;
* ``"float32"``: Dülger's single precision (§2.4): w~ = float32 exp(l - m),
  their sum in float64, W = w~ / float32(sum), x^ = W @ x, and eq. 1.11's ESS
  as sequential float64 sums over w~ (Güldaş; ``resampling.butterfly``);
* ``"float32-w64"``: Das et al.'s filter: float32 w~, W = w~ / sum in
  float64, x^ = W @ x, ESS = 1 / (W @ W).

``estimator="ratio"`` computes the estimate as SUM w~ x / SUM w~ in float64
(the cellular filter's weighted mean, SMC-EM's E-step).
"""

from __future__ import annotations

import hashlib
import inspect
import math
from dataclasses import dataclass

import numpy as np

from ..api import choose_B, resample, resample_d3
from ..backend import resolve_backend
from ..constants import EPSILON_FILTER
from ..radix import check_radix, default_radix
from ..resampling.cellular import cellular_log
from ..resampling.d3 import COMPONENTS
from ..resampling.registry import get_method
from ..rng import seed_keys
from ..validation import check_int, check_radius
from .common import FilterResult, check_kernel
from .d3 import prior_log_weights, weights_of_columns
from .graph import GRAPHS, PLAN
from .loop import ARITHMETIC, NUMPY, StepPlan, run_loop

PROTOCOL = ("init_particles", "transition", "log_likelihood")
# D3's options (resample_d3's), beside the registry's method parameters
D3_PARAMS = ("noise", "cdf", "precision", "threads", "impl", "components", "threads_scope")
CELLULAR_PARAMS = ("radius", "precision", "neighbourhood", "fast_math", "weighted")
GATES = ("filter", "stages")
ESTIMATORS = ("normalised", "ratio")
RESAMPLED_ESTIMATES = ("mean", "weighted")
STAGE4_WEIGHTS = ("normalised", "unnormalised")
# tau above 1 runs every stage an adaptive resampler is allowed (ESS <= N)
ALWAYS = 2.0


def cpf_choice(arithmetic: str, own: dict) -> bool:
    """Whether the cellular resampler draws as the CPF does
    (``resampling.cellular.cellular_log``: from the log-likelihoods, each
    neighbourhood shifted by its own maximum) rather than as the registry's
    resampler on the normalised W: with an arithmetic that carries the
    log-weights unnormalised (``CPF_OPTIONS``), or any cellular parameter
    beyond ``radius``. The two differ where a whole neighbourhood underflows in
    W (the bearings-only model's first steps): there the registry's takes the
    nearest particle with weight beyond it. The GPU's CPF graph draws the
    CPF's way, so the engine runs it only where this holds (``filters.gpu``)."""
    beyond = set(own) - {"radius", "weighted"}  # weighted: what the GPU kernel also writes
    return not (ARITHMETIC[arithmetic].carry_normalised and not beyond)


def check_model(model) -> None:
    """TypeError naming the methods of the protocol ``model`` lacks."""
    missing = [name for name in PROTOCOL if not callable(getattr(model, name, None))]
    if missing:
        raise TypeError(
            f"the model lacks {', '.join(missing)}: a model needs init_particles(n, rng), "
            "transition(x, k, rng) and log_likelihood(y, x) (docs/library.md, 'Your own model')"
        )


def _split_params(m, params: dict) -> tuple[dict, dict]:
    """(the resampler's keyword arguments, D3's or the cellular filter's),
    an unknown name a TypeError."""
    if m.output == "particles":
        unknown = sorted(set(params) - set(D3_PARAMS))
        if unknown:
            raise TypeError(f"d3 takes {D3_PARAMS}, not {unknown}")
        return {}, params
    if m.name == "cellular":
        unknown = sorted(set(params) - set(CELLULAR_PARAMS))
        if unknown:
            raise TypeError(f"cellular takes {CELLULAR_PARAMS}, not {unknown}")
        return {}, params
    allowed = (
        set(m.params)
        | ({"B", "epsilon", "ssd_table"} if m.B_rule else set())
        | ({"segment_bytes"} if m.segmented else set())
        | ({"radix", "max_stages"} if m.adaptive is not None else set())
    )
    unknown = sorted(set(params) - allowed)
    if unknown:
        raise TypeError(f"method {m.name!r} takes {sorted(allowed)}, not {unknown}")
    kw = dict(params)
    if m.B_rule == "metropolis" and kw.get("B") is None:
        kw.setdefault("epsilon", EPSILON_FILTER)  # the filters' epsilon (Dülger §5.4)
    return kw, {}


def _choose_B(m, w, kw: dict) -> int | None:
    """The B of this step: the fixed one when given, Murray's rule with the
    filter's epsilon for the Metropolis family, the SSD rule for Uphill."""
    if m.B_rule is None:
        return None
    if kw.get("B") is not None:
        return int(kw["B"])
    if m.B_rule == "metropolis":
        return choose_B(w, m, epsilon=kw["epsilon"])
    return choose_B(w, m, ssd_table=kw.get("ssd_table"))


def run_filter(
    model, y, n: int, resampler: str, *, seed: int, backend: str = "auto",
    ess_threshold: float | None = None, arithmetic: str = "float64",
    estimator: str = "normalised", stage4_weights: str | None = None, gate: str = "filter",
    resample_at=None, permutation=None, seed_offset: int = 0,
    resampled_estimates: str | None = None, diagnostics: bool = False,
    snapshot_step: int | None = None, keep_particles: bool = False, stage_times: bool = True,
    capture: bool | str = False, **params,
) -> FilterResult:  # fmt: skip
    """Run the bootstrap particle filter of the module docstring with ``n``
    particles over the measurements ``y`` (``y[k - 1]`` = z_k) and the
    registry method ``resampler`` (``pfresample.methods()``; "d3" moves the
    particles, and needs the model's ``mean_transition``).

    ``seed`` fixes every draw (the model's through a NumPy Generator, the
    resampler's through its Philox seeds: step k's is the (k +
    ``seed_offset``)-th of ``filters.common.derive_seeds``). ``ess_threshold``
    tau >= 0: resample only when ESS < tau N (the adaptive filter; above 1:
    every step, as ESS <= N); None: every step. ``params``: the resampler's (``radix``, ``radius``,
    ``B``, ``epsilon``, ``ssd_table``, ``segment_bytes``, ``precision``,
    ``neighbourhood``, the cellular GPU kernel's ``fast_math`` and
    ``weighted`` (``filters.cellular``), D3's ``noise``, ``cdf``, ``threads``,
    ``components``, ``impl``, ...).

    The source documents' conventions (their studies use them; the defaults
    are the library's): ``arithmetic`` and ``estimator`` (module docstring);
    ``stage4_weights`` "normalised" or "unnormalised" replaces §6.9's choice
    of the weights handed to the resampler; ``gate="stages"``: an adaptive
    resampler (Güldaş Fig 3.7) runs its stages while ESS < tau N, a
    standard one resamples all N then, and the weights it leaves are carried
    (with ``ess_threshold`` None: every stage, or ``max_stages`` of them);
    ``resample_at`` (T booleans): the steps that may resample (SMC-EM's
    schedule); ``permutation``: applied to the particles and their weights
    after each staged resampling (SMC-EM's transpose); ``resampled_estimates``
    "mean" or "weighted" also records the estimate after resampling;
    ``diagnostics``, ``snapshot_step``, ``keep_particles``:
    :class:`FilterResult`. ``stage_times=False`` leaves out the GPU SIR
    filter's timing marks between the stages (the CPU always times them).
    ``capture`` (the CuPy loop's, ``filters.capture``): False (the default)
    runs the loop; "auto" captures the T steps of an array-generic model with
    its resampler as one CUDA graph where they can be, and runs the loop with
    a warning where they cannot; True the graph or an error saying why not.

    ``backend``: "cpu", "cuda" or "auto" (``backend.resolve_backend``): on
    the GPU the engine runs the fused filter that implements this model,
    resampler and options (``filters.gpu``); else, for a model written
    against the array module it is handed (``array_generic = True``, or any
    model with "cuda"), this loop on CuPy arrays (``filters.device``); else
    the CPU ("auto"), or, with "cuda", an error naming what is missing.

    The method is looked up once a call (``registry.get_method``) and its
    record handed down. A GPU call's resolution -- the record, the checked
    arguments, the filter bound to its graph -- is kept in the graph cache
    (``graph.GRAPHS``, kind "plan") under every argument but ``seed`` and the
    measurements' values, so that a repeated call replays the graph and does
    no other host work; ``filters.clear_graphs()`` forgets it."""
    y = np.asarray(y, dtype=np.float64)
    key = None
    if backend != "cpu":
        key = _plan_key(
            model, y.shape, n, resampler, backend, params, ess_threshold, arithmetic, estimator,
            stage4_weights, gate, resample_at, permutation, seed_offset, resampled_estimates,
            diagnostics, snapshot_step, keep_particles, stage_times, capture,
        )  # fmt: skip
        plan = None if key is None else GRAPHS.find(PLAN, key)
        if plan is not None and plan.device == _device_id():
            return plan.run(y, seed)
    check_model(model)
    m = get_method(resampler)
    kw, own = _split_params(m, params)
    if m.output == "particles" and not callable(getattr(model, "mean_transition", None)):
        raise TypeError("resampler 'd3' needs the model's mean_transition(x, k): its prior weights")
    n = check_int(n, "n", minimum=1)
    if ess_threshold is not None and not 0 <= ess_threshold < math.inf:
        raise ValueError(f"ess_threshold must be a number >= 0 or None, got {ess_threshold!r}")
    for name, value, allowed in (
        ("arithmetic", arithmetic, tuple(ARITHMETIC)), ("estimator", estimator, ESTIMATORS),
        ("gate", gate, GATES), ("stage4_weights", stage4_weights, (None, *STAGE4_WEIGHTS)),
        ("resampled_estimates", resampled_estimates, (None, *RESAMPLED_ESTIMATES)),
    ):  # fmt: skip
        if value not in allowed:
            raise ValueError(f"{name} must be one of {allowed}, got {value!r}")
    if gate == "stages" and m.output != "ancestors":
        raise ValueError("gate='stages' needs a resampler that returns ancestors")
    if y.ndim == 0 or y.shape[0] == 0:
        raise ValueError(f"y must hold at least one measurement, got shape {y.shape}")
    steps = y.shape[0]
    if snapshot_step is not None and not 1 <= snapshot_step <= steps:
        raise ValueError(f"snapshot_step must be in 1 ... {steps}, got {snapshot_step}")
    if resample_at is not None:
        resample_at = np.asarray(resample_at, dtype=bool)
        if resample_at.shape != (steps,):
            raise ValueError(f"resample_at must hold {steps} booleans, got {resample_at.shape}")
    options = dict(
        ess_threshold=ess_threshold, arithmetic=arithmetic, estimator=estimator,
        stage4_weights=stage4_weights, gate=gate, resample_at=resample_at,
        permutation=permutation, seed_offset=seed_offset,
        resampled_estimates=resampled_estimates, diagnostics=diagnostics,
        snapshot_step=snapshot_step, keep_particles=keep_particles,
    )  # fmt: skip
    if backend != "cpu":
        if capture not in CAPTURES:
            raise ValueError(f"capture must be one of {CAPTURES}, got {capture!r}")
        # what only the GPU filters' choice reads (filters.gpu)
        gpu_only = dict(stage_times=stage_times, cpf_choice=cpf_choice(arithmetic, own),
                        capture=capture)  # fmt: skip
        options.update(gpu_only)
        from . import device, gpu

        runner = gpu.fused_filter(model, m, n, kw, own, options)
        generic = backend == "cuda" or getattr(model, "array_generic", False)
        if runner is None and generic and device.applies(model, m, own, options):
            runner = device.runner(options)
        if resolve_backend(backend, runner is not None or backend == "cuda") == "cuda":
            if runner is None:
                raise NotImplementedError(gpu.why_not(model, m, kw, own, options))
            bound = _bind(runner, model, y.shape[0], n, m, kw, own)
            if key is not None:
                GRAPHS.get(PLAN, key, lambda: Plan(_device_id(), bound), PLANS_KEPT)
            return bound(y, seed)
        for name in gpu_only:
            del options[name]
    return _run_cpu(model, y, n, m, int(seed), kw, own, **options)


@dataclass(frozen=True)
class Plan:
    """A GPU call of :func:`run_filter` resolved: the device it was made on
    and ``run(y, seed)``, its filter bound to the graph it replays."""

    device: int
    run: object


PLANS_KEPT = 8  # each holds its filter, and so the filter's graph and buffers
CAPTURES = ("auto", True, False)


def _device_id() -> int:
    import cupy

    return cupy.cuda.Device().id


def _bind(runner, model, steps: int, n: int, m, kw: dict, own: dict):
    """``runner`` (a GPU filter of ``filters.gpu`` or ``filters.device``) as
    ``run(y, seed)``: its own ``prepare`` where it has one (the filter and
    its graph made once, the call a replay), else the call as it is."""
    prepare = getattr(runner, "prepare", None)
    if prepare is not None:
        return prepare(model, steps, n, m, kw, own)
    return lambda y, seed: runner(model, y, n, m, seed, kw, own)


def _frozen(value):
    """``value`` as a hashable key part: arrays by their dtype, shape and a
    digest of their bytes, sequences as tuples."""
    if isinstance(value, np.ndarray):
        digest = hashlib.sha1(np.ascontiguousarray(value).tobytes()).hexdigest()
        return ("array", value.dtype.str, value.shape, digest)
    if isinstance(value, (list, tuple)):
        return tuple(_frozen(v) for v in value)
    return value


def _plan_key(model, shape, n, resampler, backend, params, *options):
    """The plan cache's key of a GPU call (every argument but the seed and
    the measurements' values), or None where an argument cannot be a key
    (an unhashable model: such a call is resolved afresh each time)."""
    key = (model, shape, n, resampler, backend, _frozen(options),
           tuple(sorted((k, _frozen(v)) for k, v in params.items())))  # fmt: skip
    try:
        hash(key)
    except TypeError:
        return None
    return key


def run_filters(model, ys, n: int, resampler: str, *, seeds, backend: str = "auto", **kwargs):
    """Independent runs of :func:`run_filter`: run i on the measurements
    ``ys[i]`` with ``seed=seeds[i]``, every other argument run_filter's; a
    list of :class:`FilterResult`, one a run, each equal to run_filter's bit
    for bit.

    The engine batches the runs where that pays: on the GPU SIR graph with
    stage times (``filters.gpu.sir_graph``) and N small enough that several
    runs fit the GPU side by side (``cuda.geometry.batch_width``), the runs
    after the first run K at a time as branches of one CUDA graph
    (``filters.sir_batch``). Those runs share the GPU, so their times are
    NaN; the first run is made alone and keeps its times. Elsewhere the runs
    are made one by one."""
    seeds = [int(s) for s in seeds]
    ys = list(ys)
    if len(ys) != len(seeds):
        raise ValueError(f"{len(seeds)} seeds for {len(ys)} measurement sets: one of each a run")
    if not seeds:
        return []
    first = run_filter(model, ys[0], n, resampler, seed=seeds[0], backend=backend, **kwargs)
    # a batch replays one graph of T steps: runs of other lengths go one by one
    same = all(np.shape(y) == np.shape(ys[0]) for y in ys)
    batch = (
        _batch(model, n, resampler, len(seeds) - 1, kwargs)
        if first.backend == "cuda" and same
        else None
    )
    if batch is None:
        rest = [
            run_filter(model, y, n, resampler, seed=s, backend=backend, **kwargs)
            for y, s in zip(ys[1:], seeds[1:], strict=True)
        ]
        return [first, *rest]
    from .sir_batch import run_sir_batch

    m, keywords = batch
    return [first, *run_sir_batch(model, ys[1:], n, m, seeds[1:], **keywords)]


def _batch(model, n: int, resampler: str, runs: int, kwargs: dict):
    """``(m, keywords)`` of ``sir_batch.run_sir_batch`` where run_filters
    batches ``runs`` GPU runs of these arguments, else None."""
    from ..cuda.geometry import batch_width
    from . import gpu

    options = {k: kwargs.get(k, v) for k, v in _OPTION_DEFAULTS.items()}
    m = get_method(resampler)
    kw, _ = _split_params(m, {k: v for k, v in kwargs.items() if k not in options})
    if runs < 1 or batch_width(n, runs) == 1 or not gpu.sir_graph(model, m, options):
        return None
    return m, gpu.sir_keywords(kw)


def _d3_move(model, m, n, own, components):
    d3_kw = {k: v for k, v in own.items() if k not in ("components", "threads_scope")}

    def move(k, x, w, w_in, lw, previous, y_k, seed):
        mu = model.mean_transition(previous, k)
        cols = x.reshape(n, -1)  # eqs. 2-4 over the state's components
        prior = prior_log_weights(cols, np.reshape(mu, (-1, cols.shape[1])), components)
        w_d3 = w
        if components == "each":  # each component's own reading (Fig 9)
            w_d3 = weights_of_columns(model.log_likelihood_components(y_k, x))
        x = resample_d3(x, w_d3, prior, seed=seed, backend="cpu", components=components,
                        **d3_kw)  # fmt: skip
        return x, None, None

    return move


def _cpf_move(radius, precision, neighbourhood):
    # the CPF's own resampling from the log-likelihoods (Gelencser-Horvath et
    # al., Fig 6; resampling.cellular.cellular_log); the engine's default
    # arithmetic hands the registry's cellular resampler W, as any method
    def move(k, x, w, w_in, lw, previous, y_k, seed):
        k0, k1 = seed_keys([seed])
        ancestors = cellular_log(lw, (k0[0], k1[0]), radius, dtype=np.dtype(precision),
                                 divide=neighbourhood == "divide")  # fmt: skip
        return x[ancestors], ancestors, None

    return move


def _registry_move(m, kw):
    call = {key: v for key, v in kw.items() if key not in ("B", "epsilon", "ssd_table")}

    def move(k, x, w, w_in, lw, previous, y_k, seed):
        b = _choose_B(m, w_in, kw)
        ancestors = resample(w_in, m, seed=seed, B=b, backend="cpu", **call)
        return x[ancestors], ancestors, b

    return move


def cpu_plan(model, m, n, kw, own, arithmetic, ess_threshold, gate) -> StepPlan:
    """The :class:`StepPlan` of these arguments, their CPU-only checks made."""
    kw = dict(kw)
    components = own.get("components", "joint") if m.output == "particles" else "joint"
    if components not in COMPONENTS:
        raise ValueError(f"components must be one of {', '.join(COMPONENTS)}, got {components!r}")
    if components == "each" and ess_threshold is not None:
        raise ValueError("components='each' resamples every step (ess_threshold=None)")
    if m.name == "cellular":
        radius = check_radius(own.get("radius", 1), n)
        precision = own.get("precision", "float64")
        neighbourhood = own.get("neighbourhood", "search")
        check_kernel(precision, neighbourhood)
        if own.get("fast_math"):
            raise ValueError("fast_math is an option of the GPU kernels; the CPU has none")
        if cpf_choice(arithmetic, own):
            move = _cpf_move(radius, precision, neighbourhood)
        else:
            move = _registry_move(m, {"radius": radius})
    elif m.output == "particles":
        move = _d3_move(model, m, n, own, components)
    else:
        move = None  # made below, from the arguments the staged gate leaves
    plan = StepPlan(move, 1, kw)
    if gate == "stages":
        radix = kw.pop("radix", None)
        plan.max_stages = kw.pop("max_stages", None)
        if m.adaptive is None:  # a standard method: one stage over all N
            if radix is not None:
                raise TypeError(f"method {m.name!r} takes no radix")
            radix = (n,)
        else:
            radix = check_radix(radix, n) if radix is not None else default_radix(n)
        plan.radix = radix
        plan.tau = ALWAYS if ess_threshold is None else ess_threshold
    elif m.adaptive is not None:
        kw.pop("max_stages", None)
        radix_kw = kw.get("radix")  # the butterflies' stages of a full resampling
        plan.depth = len(check_radix(radix_kw, n) if radix_kw is not None else default_radix(n))
    if plan.move is None:
        plan.move = _registry_move(m, kw)
    return plan


def _run_cpu(model, y, n, m, seed, kw, own, **options) -> FilterResult:
    """:func:`run_filter` on the CPU (NumPy), its options checked: the loop
    (:func:`run_loop`) over NumPy with the CPU's stage 4 (:func:`cpu_plan`)."""
    check_int(options["seed_offset"], "seed_offset", minimum=0)
    plan = cpu_plan(model, m, n, kw, own, options["arithmetic"], options["ess_threshold"],
                    options["gate"])  # fmt: skip
    return run_loop(model, y, n, m, seed, plan, NUMPY, **options)


# run_filter's options (its keyword-only arguments other than the seed and
# the backend) and their defaults: what run_filters sets apart from the
# resampler's parameters.
_OPTION_DEFAULTS = {
    name: p.default
    for name, p in inspect.signature(run_filter).parameters.items()
    if p.kind is inspect.Parameter.KEYWORD_ONLY and name not in ("seed", "backend")
}
