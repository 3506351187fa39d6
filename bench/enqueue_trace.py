"""What the GPU filters enqueue, traced on a host without a GPU: every kernel
launch (module, kernel, grid, block, each argument as the buffer it points
into -- named by the source line that made it -- its offset, shape, dtype
and strides), memset, upload, capture, replay, event and timing mark of the
SIR graph (timed and not), Güldaş's bootstrap and adaptive graphs, SMC-EM's
E-step, the D3 graph (eager, and in chunks, with a snapshot), the CPF and the
batch, over a stand-in CuPy (NumPy arrays) with the resamplers' and D3's
launchers stubbed. Two source trees' traces compared launch for launch show
whether a restructuring of the Python around the kernels kept every kernel
and argument (stream names and graph ids are numbered afresh per scenario).

    PYTHONPATH=TREE/src python bench/enqueue_trace.py trace OUT.json
    python bench/enqueue_trace.py compare OLD.json NEW.json ["OLD LINE=>NEW LINE" ...]

(the optional pairs: a buffer's source line renamed between the trees).
"""

import difflib
import json
import re
import sys
import traceback
import types

import numpy as np

TRACE = []
ADDR = []  # (start, end, label, root)


def site():
    for f in reversed(traceback.extract_stack()[:-2]):
        if "pfresample" in f.filename and "trace.py" not in f.filename:
            return (f.line or "").strip()
    return "?"


class FakeArray(np.ndarray):
    def get(self, stream=None):
        return np.asarray(self).copy()

    def set(self, host, stream=None):
        TRACE.append(("set", describe(self), stream_label(stream)))
        np.asarray(self)[...] = np.asarray(host).reshape(self.shape)

    @property
    def data(self):
        return types.SimpleNamespace(ptr=self.__array_interface__["data"][0])

    def fill(self, v):
        TRACE.append(("fill", describe(self), float(v)))
        np.asarray(self).fill(v)

    def __setitem__(self, key, value):
        if isinstance(value, FakeArray):
            TRACE.append(("setitem", describe(self), str(key), describe(value)))
        super().__setitem__(key, value)


def alloc(arr):
    a = np.ascontiguousarray(arr).view(FakeArray)
    a = a.copy().view(FakeArray)
    label = site()
    start = a.__array_interface__["data"][0]
    ADDR.append((start, start + max(a.nbytes, 1), label, a))
    return a


def describe(v):
    if isinstance(v, np.ndarray):
        p = v.__array_interface__["data"][0]
        for s, e, label, _root in reversed(ADDR):
            if s <= p < e or (p == s):
                return ["arr", label, p - s, list(v.shape), str(v.dtype), list(v.strides)]
        return ["arr?", list(v.shape), str(v.dtype)]
    if isinstance(v, (np.generic,)):
        return [type(v).__name__, v.item()]
    if isinstance(v, (tuple, list)):
        return [describe(x) for x in v]
    if isinstance(v, (int, float, str, bool)) or v is None:
        return v
    return type(v).__name__


CURRENT = [None]
STREAMS = [0]  # streams made so far


def stream_label(s):
    if s is None:
        s = CURRENT[-1]
    return getattr(s, "label", "default")


class FakeGraph:
    n = 0

    def __init__(self):
        FakeGraph.n += 1
        self.id = FakeGraph.n

    def upload(self, stream):
        TRACE.append(("upload", self.id))

    def launch(self, stream):
        TRACE.append(("launch", self.id, stream_label(stream)))


class FakeStream:
    def __init__(self, non_blocking=False, null=False):
        STREAMS[0] += 1
        self.label = f"s{STREAMS[0]}"  # on the stream: an id() is reused once one is freed
        self.ptr = 1000 + STREAMS[0]

    def __enter__(self):
        CURRENT.append(self)
        return self

    def __exit__(self, *a):
        CURRENT.pop()

    def synchronize(self):
        TRACE.append(("sync", stream_label(self)))

    def begin_capture(self, mode=None):
        TRACE.append(("begin_capture", stream_label(self)))

    def end_capture(self):
        TRACE.append(("end_capture", stream_label(self)))
        return FakeGraph()

    def wait_event(self, e):
        TRACE.append(("wait_event", stream_label(self)))


class FakeEvent:
    def __init__(self, disable_timing=False, **k):
        pass

    def record(self, stream=None):
        TRACE.append(("event", stream_label(stream)))

    def synchronize(self):
        pass


def memcpy(dst, src, nbytes, kind, sptr):
    """A copy between the device and page-locked host memory (the runner's
    upload and read-backs, inside a whole-run graph): the device side named."""
    device = dst if kind == 1 else src
    for s, e, label, _root in reversed(ADDR):
        if s <= device < e:
            TRACE.append(("memcpy", "up" if kind == 1 else "down", label, device - s, nbytes))
            return
    TRACE.append(("memcpy?", kind, nbytes))


def memset(ptr, val, nbytes, sptr):
    for s, e, label, _root in reversed(ADDR):
        if s <= ptr < e:
            TRACE.append(("memset", label, ptr - s, nbytes))
            return
    TRACE.append(("memset?", nbytes))


def mean(x, axis=None, dtype=None, out=None):
    TRACE.append(("mean", describe(x), describe(out)))
    return np.mean(
        np.asarray(x), axis=axis, dtype=dtype, out=None if out is None else np.asarray(out)
    )


cuda = types.SimpleNamespace(
    Stream=FakeStream,
    Event=FakeEvent,
    Device=lambda *a: types.SimpleNamespace(id=0, attributes={"MultiProcessorCount": 132}),
    runtime=types.SimpleNamespace(
        memsetAsync=memset, memcpyAsync=memcpy, memcpyHostToDevice=1, memcpyDeviceToHost=2
    ),
    alloc_pinned_memory=bytearray,
    get_elapsed_time=lambda a, b: 1.0,
    get_current_stream=lambda: CURRENT[-1],
)
fake = types.ModuleType("cupy")
fake.cuda = cuda
fake.empty = lambda shape, dtype=np.float64: alloc(np.zeros(shape, dtype=dtype))
fake.zeros = lambda shape, dtype=np.float64: alloc(np.zeros(shape, dtype=dtype))
fake.full = lambda shape, v, dtype=None: alloc(np.full(shape, v, dtype=dtype))
fake.asarray = lambda a, dtype=None: (
    a if isinstance(a, FakeArray) and dtype is None else alloc(np.asarray(a, dtype=dtype))
)
fake.mean = mean
fake.ndarray = FakeArray


def trace(path):
    """Every scenario's trace, written to ``path`` (JSON)."""
    sys.modules["cupy"] = fake
    out = {}
    import pfresample  # noqa
    from pfresample.cuda import kernels as K

    ORIG = K.kernel

    def fake_kernel(module, name, *a, **k):
        def launch(grid, block, args, **kw):
            TRACE.append(
                (
                    "kernel",
                    module,
                    name,
                    list(a),
                    describe(grid),
                    describe(block),
                    describe(args),
                    describe(kw.get("shared_mem")),
                    stream_label(kw.get("stream")),
                )
            )

        return launch

    def patch_all():
        for mod in list(sys.modules.values()):
            if mod and getattr(mod, "__name__", "").startswith("pfresample"):
                if getattr(mod, "kernel", None) is ORIG:
                    mod.kernel = fake_kernel
        K.kernel = fake_kernel

    from pfresample.filters import sir_gpu, guldas_gpu, d3_gpu, cellular_gpu, sir_batch, graph  # noqa
    import pfresample.cuda.d3 as cd3  # noqa

    patch_all()

    def fake_resample(call, m, kw, params, **extra):
        TRACE.append(
            (
                "resample",
                m.name,
                describe(call.weights) if hasattr(call, "weights") else "?",
                describe(getattr(call, "keys", None)),
                sorted(extra),
            )
        )
        return [(alloc(np.zeros(4)), 1)]

    sir_gpu.enqueue_resampler = fake_resample
    d3_gpu.enqueue_resampler = fake_resample
    guldas_gpu.ess_gate = lambda *a, **k: TRACE.append(
        ("ess_gate", describe(a), describe(sorted(k.items())))
    )

    class FakeGates:
        def __init__(self, *a, **k):
            TRACE.append(("gates", describe(a), describe(sorted(k.items()))))

    guldas_gpu.Gates = FakeGates
    cd3.d3 = lambda call, x, lpw, **k: TRACE.append(
        ("d3", describe(x), describe(lpw), describe(sorted(k.items())))
    )
    for mod in (graph, sir_gpu):
        if hasattr(mod, "_timing_record"):
            mod._timing_record = lambda event, stream: TRACE.append(("mark", stream_label(stream)))

    from pfresample.models import GrowthModel, BimodalModel, UuvModel  # noqa
    from pfresample.resampling.registry import get_method  # noqa

    def scenario(name, fn):
        TRACE.clear()
        try:
            r = fn()
            TRACE.append(("result", str(type(r).__name__)))
        except Exception as e:
            TRACE.append(("ERROR", type(e).__name__, str(e)[:200], traceback.format_exc()[-800:]))
        out[name] = json.loads(json.dumps(TRACE, default=str))

    rng = np.random.default_rng(0)
    growth = GrowthModel()
    for method in ("systematic", "metropolis"):
        for timed in (True, False):
            m = get_method(method)
            kw, params = sir_gpu.sir_arguments(m, 1024)
            y = rng.normal(size=3)

            def sir(m=m, kw=kw, params=params, timed=timed, y=y):
                g = sir_gpu.filter_graph(growth, m, 1024, 3, kw, params, timed)
                g.run(y, 1)
                return g.run(y, 2)

            scenario(f"sir|{method}|{timed}", sir)
    bim = BimodalModel() if callable(BimodalModel) else None
    yb = rng.normal(size=4)
    for method in ("systematic", "butterfly-systematic"):
        scenario(
            f"boot|{method}",
            lambda method=method: [
                guldas_gpu.run_bootstrap_gpu(bim, yb, 1024, method, s) for s in (1, 2)
            ][-1],
        )
    for method, radix in (("butterfly-systematic", (32, 32)), ("multinomial", None)):
        scenario(
            f"adapt|{method}",
            lambda method=method, radix=radix: [
                guldas_gpu.run_adaptive_gpu(bim, yb, 1024, method, s, tau=0.5, radix=radix)
                for s in (1, 2)
            ][-1],
        )
    from pfresample.filters.common import resampling_period, MAX_RADIX  # noqa
    from pfresample.radix import default_radix  # noqa

    yv = rng.normal(size=9)
    for scheme in ("multinomial", "butterfly"):

        def em(scheme=scheme):
            n = 1024
            r1 = default_radix(n, MAX_RADIX)[0]
            period = resampling_period(n)
            m = get_method("butterfly-multinomial" if scheme == "butterfly" else "multinomial")
            kw, params = guldas_gpu._arguments(m, n, {})
            if scheme == "butterfly":
                kw["radix"] = (r1,)
            g = guldas_gpu._graph(
                guldas_gpu.SmcemGraph, None, m, n, yv.size, kw, params, scheme, r1, period
            )
            g.expected_statistics(yv, 1, 0.8, 0.3, 0.6)
            return g.expected_statistics(yv, 2, 0.7, 0.3, 0.6)

        scenario(f"smcem|{scheme}", em)
    uuv = UuvModel(duration=20.0)
    for T in (5, 103, 205):
        yu = rng.normal(size=(T, 2))
        for method in ("d3", "systematic"):
            for snap in (None, 3):

                def d3(method=method, T=T, yu=yu, snap=snap):
                    m = get_method(method)
                    kw = dict(noise="eq5", cdf="prefix", ess_threshold=None, threads=None)
                    d3_gpu.run_d3_gpu(uuv, yu, 1024, 1, m=m, snapshot_step=None, **kw)
                    return d3_gpu.run_d3_gpu(uuv, yu, 1024, 2, m=m, snapshot_step=snap, **kw)

                scenario(f"d3|{T}|{method}|{snap}", d3)
    for weighted in (False, True):
        yc = rng.normal(size=3)

        def cpf(weighted=weighted, yc=yc):
            cellular_gpu.run_cpf_gpu(growth, yc, 1024, 8, 1, weighted=weighted)
            r = cellular_gpu.run_cpf_gpu(growth, yc, 1024, 8, 2, weighted=weighted)
            cellular_gpu.cpf_graph(
                growth, 1024, 8, 3, False, "search", "float64", weighted
            ).step_kernel_seconds(launches=3, repeats=1)
            return r

        scenario(f"cpf|{weighted}", cpf)

    def batch():
        m = get_method("systematic")
        ys = [rng.normal(size=3) for _ in range(3)]
        return sir_batch.run_sir_batch(growth, ys, 1024, m, [1, 2, 3], width=2)

    scenario("batch", batch)

    with open(path, "w") as f:
        json.dump(out, f, indent=0)
    print({k: (len(v), v[-1][0]) for k, v in out.items()})


def _normalised(entries, aliases=()):
    """The trace with streams and graphs numbered by first appearance, each
    (old, new) source line of ``aliases`` read as the old one."""
    text = json.dumps(entries)
    for old, new in aliases:
        text = text.replace(json.dumps(new)[1:-1], json.dumps(old)[1:-1])
    names = {}
    text = re.sub(
        r'"s\d+"', lambda m: '"' + names.setdefault(m.group(0), f"S{len(names)}") + '"', text
    )
    text = re.sub(r'\["upload", \d+\]', '["upload"]', text)
    text = re.sub(r'\["launch", \d+,', '["launch",', text)
    return [json.dumps(e) for e in json.loads(text)]


def compare(old_path, new_path, aliases=()):
    """SAME or the first differences of each scenario of two traces."""
    with open(old_path) as f:
        old = json.load(f)
    with open(new_path) as f:
        new = json.load(f)
    for name in old:
        a, b = _normalised(old[name]), _normalised(new.get(name, []), aliases)
        print("SAME" if a == b else "DIFF", name, len(a), len(b))
        if a != b:
            for line in list(difflib.unified_diff(a, b, lineterm="", n=1))[:40]:
                print("   ", line[:200])


if __name__ == "__main__":
    if sys.argv[1:2] == ["trace"]:
        trace(sys.argv[2])
    elif sys.argv[1:2] == ["compare"]:
        compare(sys.argv[2], sys.argv[3], [pair.split("=>") for pair in sys.argv[4:]])
    else:
        sys.exit(__doc__)
