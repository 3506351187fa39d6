"""The captured CuPy loop (filters/capture.py) on the CPU side: its Philox
kernel source against the NumPy reference (compiled as C), what it runs,
the engine's choice between the graph and the loop (capture=), and the
arena the capture allocates in (its bookkeeping with fake pointers, the
constructor's passes over a fake CuPy), with fakes for the GPU."""

from __future__ import annotations

import shutil
import subprocess

import numpy as np
import pytest

from pfresample.filters import capture, device
from pfresample.models import LinearGaussianModel
from pfresample.resampling.registry import get_method

OPTIONS = {"ess_threshold": None, "resampled_estimates": None, "snapshot_step": None,
           "stage4_weights": None, "keep_particles": False}  # fmt: skip


@pytest.mark.skipif(shutil.which("cc") is None, reason="no C compiler")
def test_the_kernels_philox_normals_are_the_references(tmp_path):
    """The elementwise kernel's Philox and Box-Muller pairs (its body,
    compiled as C with its CUDA qualifiers dropped) draw
    capture.reference_normals' numbers (rng.py's Philox4x32-10), an odd
    count cut at its last pair; a wrong key word would not."""
    key, call, size = (123456789, 987654321), 5, 63

    def c_normals(k0, k1):
        head = "#define _GNU_SOURCE\n#include <stdio.h>\n#include <math.h>\n#define __device__\n"
        main = (
            f"int main(void) {{\nunsigned int key[2] = {{{k0}u, {k1}u}};\n"
            f"unsigned int call = {call};\nlong long n = {size};\ndouble out[{size + 1}];\n"
            f"for (unsigned long long i = 0; i < {(size + 1) // 2}; ++i) {{\n"
        )
        tail = f'}}\nfor (int j = 0; j < {size}; ++j) printf("%.17g\\n", out[j]);\n}}\n'
        src = head + capture._PHILOX + main + capture._BODY + capture._NORMAL_PAIR + tail
        (tmp_path / "k.c").write_text(src)
        exe = tmp_path / "k"
        subprocess.run(["cc", "-O0", str(tmp_path / "k.c"), "-o", str(exe), "-lm"], check=True)
        out = subprocess.run([str(exe)], capture_output=True, text=True, check=True).stdout
        return np.array([float(v) for v in out.split()])

    ref = capture.reference_normals(np.array(key, dtype=np.uint32), call, size)
    np.testing.assert_allclose(c_normals(*key), ref, rtol=1e-14, atol=1e-14)
    assert abs(ref.mean()) < 0.5 and 0.5 < ref.std() < 1.5
    # negative control: another key draws other numbers
    assert not np.allclose(c_normals(key[0] + 1, key[1]), ref)


def test_the_generator_names_what_it_lacks():
    rng = object.__new__(capture.CaptureRng)
    with pytest.raises(AttributeError, match="asked for 'gamma'"):
        rng.gamma(2.0, size=3)


def test_what_the_captured_loop_runs():
    assert capture.capturable(get_method("systematic"), OPTIONS) is None
    assert capture.capturable(get_method("metropolis"), OPTIONS) is None
    for name in ("d3", "cellular", "butterfly-multinomial"):
        assert "one pass" in capture.capturable(get_method(name), OPTIONS)
    adaptive = {**OPTIONS, "ess_threshold": 0.5}
    assert "every step" in capture.capturable(get_method("systematic"), adaptive)


def test_the_linear_gaussian_model_reads_no_value_back():
    """log_likelihood takes y as an array scalar without float() (a captured
    step's y is a device scalar), with the same bits as a float y."""
    model = LinearGaussianModel()
    x = np.random.default_rng(1).standard_normal(100)
    a = model.log_likelihood(0.7, x)
    b = model.log_likelihood(np.array(0.7), x)
    c = model.log_likelihood(np.float64(0.7), x)
    np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(a, c)


def _runner(monkeypatch, capture_option, fails: bool):
    """device.runner's bound run with the loop and the captured filter faked."""
    made = []

    def fake_run(model, y, n, m, seed, kw, own, options, noise="cupy"):
        return ("loop", seed)

    class Fake:
        def run(self, y, seed):
            return ("graph", seed)

    def fake_captured(*args):
        made.append(args[3])
        if fails:
            raise capture.CaptureError("CUDARuntimeError: cudaErrorStreamCaptureUnsupported")
        return Fake()

    monkeypatch.setattr(device, "run", fake_run)
    monkeypatch.setattr(capture, "captured_filter", fake_captured)
    options = {**OPTIONS, "capture": capture_option}
    bound = device.runner(options).prepare(
        LinearGaussianModel(), 5, 64, get_method("systematic"), {}, {}
    )
    return bound, made


def test_capture_off_runs_the_loop(monkeypatch):
    bound, made = _runner(monkeypatch, False, fails=False)
    assert bound(np.zeros(5), 1) == ("loop", 1) and made == []


def test_capture_runs_the_graph_and_captures_once(monkeypatch):
    bound, made = _runner(monkeypatch, "auto", fails=False)
    assert bound(np.zeros(5), 1) == ("graph", 1)
    assert bound(np.zeros(5), 2) == ("graph", 2)
    assert made == [5]


def test_a_failed_capture_falls_back_to_the_loop_and_says_why(monkeypatch):
    bound, made = _runner(monkeypatch, "auto", fails=True)
    with pytest.warns(RuntimeWarning, match="could not be captured.*running the CuPy loop"):
        assert bound(np.zeros(5), 1) == ("loop", 1)
    assert bound(np.zeros(5), 2) == ("loop", 2)  # decided once: no second capture
    assert made == [5]


def test_capture_true_raises_where_it_fails(monkeypatch):
    bound, _ = _runner(monkeypatch, True, fails=True)
    with pytest.raises(RuntimeError, match="could not be captured"):
        bound(np.zeros(5), 1)
    options = {**OPTIONS, "capture": True, "ess_threshold": 0.5}
    with pytest.raises(NotImplementedError, match="every step"):
        device.runner(options).prepare(
            LinearGaussianModel(), 5, 64, get_method("systematic"), {}, {}
        )


def test_run_filter_checks_capture():
    import pfresample as pr

    with pytest.raises(ValueError, match="capture must be one of"):
        pr.run_filter(LinearGaussianModel(), np.zeros(3), 8, "systematic", seed=1,
                      backend="auto", capture="yes")  # fmt: skip


# ---------------------------------------------------------------- the capture's arena
# capture.Arena's bookkeeping with fake pointers: CuPy's allocator protocol
# (bytes -> a pointer object that frees its block when the last array on it
# goes) played by FakePointer, arrays by FakeArray, whose arithmetic makes
# temporaries as CuPy's does.


class FakePointer:
    def __init__(self, ptr, size, owner):
        self.ptr, self.size, self.owner = ptr, size, owner


class FakeArray:
    """An array of n float64 on an allocator: each operation a new array."""

    malloc = None  # the allocator in use (as cupy.cuda.using_allocator sets it)

    def __init__(self, n):
        self.n, self.mem = n, FakeArray.malloc(8 * n)

    def __add__(self, other):
        return FakeArray(self.n)

    __mul__ = __sub__ = __add__

    def total(self):
        return FakeArray(1)


def fake_pass(n, steps, record):
    """The captured loop's shape of allocations: particles, a transition of
    three temporaries, weights, a reduction, the resampled particles."""
    x = FakeArray(n)
    record.append(x.mem.ptr)
    for _ in range(steps):
        x = x * FakeArray(n) + FakeArray(n)  # mean, noise, their sum
        w = (x - FakeArray(1)) * x
        t = w.total()
        record.extend([x.mem.ptr, w.mem.ptr, t.mem.ptr])
        x = x + w  # the resampled particles, a new array
    return x


def live_blocks_overlap(arena):
    spans = sorted(arena.live.items())
    return any(a + size > b for (a, size), (b, _) in zip(spans, spans[1:], strict=False))


def test_blocks_are_aligned_as_cupys_pool():
    assert capture.ALIGN == 512
    assert [capture.aligned(s) for s in (0, 1, 511, 512, 513, 4096)] == [512] * 4 + [1024, 4096]
    with pytest.raises(ValueError, match="-1 bytes"):
        capture.aligned(-1)
    with pytest.raises(ValueError, match="multiple of 512"):
        capture.Arena(1000)


def test_first_fit_reuses_the_lowest_gap_and_never_overlaps():
    arena = capture.Arena()
    a, b, c = arena.place(1000), arena.place(100), arena.place(3000)
    assert (a, b, c) == (0, 1024, 1536)
    arena.release(a)
    assert arena.place(512) == 0  # the lowest gap that holds it
    assert arena.place(512) == 512
    assert arena.place(10) == 1536 + 3072  # no gap left: past the last block
    assert arena.peak == 1536 + 3072 + 512 and arena.blocks == 6
    with pytest.raises(KeyError, match="no live block at offset 7"):
        arena.release(7)
    # many random blocks and frees: every offset aligned, no two live blocks overlap
    arena, rng = capture.Arena(), np.random.default_rng(4)
    live = []
    for _ in range(2000):
        if live and rng.random() < 0.45:
            arena.release(live.pop(rng.integers(len(live))))
        else:
            live.append(arena.place(int(rng.integers(0, 40_000))))
        assert all(offset % 512 == 0 for offset in arena.live)
        assert not live_blocks_overlap(arena)
    assert sorted(live) == sorted(arena.live)


def test_the_overlap_check_catches_a_planted_flaw():
    """Negative control: an arena that puts blocks 8 bytes apart, whatever their size."""

    class Flawed(capture.Arena):
        def place(self, size):
            offset = 8 * len(self.live)
            self.live[offset] = capture.aligned(size)
            return offset

    arena = Flawed()
    arena.place(1000), arena.place(1000)
    assert live_blocks_overlap(arena)


def test_the_capture_finds_every_block_where_the_eager_pass_put_it():
    """The eager pass (unbounded arena, memory from a backing allocator)
    measures the peak; the same pass through an arena of that capacity puts
    every block at the same offset; one block less and it is exhausted."""
    backed = []

    def backing(size):
        backed.append(size)
        return FakePointer(10**9 + 4096 * len(backed), size, None)

    n, steps = 1000, 30
    planned = capture.Arena()
    FakeArray.malloc = planned.allocator(FakePointer, backing=backing)
    eager_ptrs = []
    x = fake_pass(n, steps, eager_ptrs)
    assert x.mem.owner.memory.ptr == x.mem.ptr  # the eager pass's memory is the backing's
    del x
    assert planned.live == {}  # every block freed with its last array
    assert backed == [capture.aligned(s) for s in backed]
    # the arena of the capture: fixed addresses from base, the same offsets
    size = capture.arena_bytes(planned.peak)
    assert planned.peak < size <= planned.peak * 5 // 4 + (1 << 20) + 512
    base, keep = 1 << 40, object()
    served = capture.Arena(size)
    FakeArray.malloc = served.allocator(FakePointer, base=base, keep=keep)
    captured_ptrs = []
    x = fake_pass(n, steps, captured_ptrs)
    assert served.peak == planned.peak and served.blocks == planned.blocks
    offsets = [p - base for p in captured_ptrs]
    assert all(0 <= o < size and o % 512 == 0 for o in offsets)
    assert x.mem.owner.memory is keep  # a survivor keeps the arena's memory alive
    # blocks are reused: the peak is a few arrays, not every temporary of T steps
    per_array = capture.aligned(8 * n)
    assert served.peak <= 6 * per_array < served.blocks * per_array // 10
    # the same sequence again gives the same addresses (the graph's are fixed)
    again = capture.Arena(size)
    FakeArray.malloc = again.allocator(FakePointer, base=base, keep=keep)
    replayed = []
    fake_pass(n, steps, replayed)
    assert replayed == captured_ptrs
    # negative control: an arena one block short of the peak is exhausted
    short = capture.Arena(planned.peak - 512)
    FakeArray.malloc = short.allocator(FakePointer, base=base, keep=keep)
    with pytest.raises(capture.ArenaExhausted, match="more memory than the eager pass"):
        fake_pass(n, steps, [])
    FakeArray.malloc = None


class FakeStream:
    """A stream whose capture an error invalidates, as the driver's."""

    def __init__(self):
        self.capturing, self.broken, self.modes = False, False, []

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def synchronize(self):
        assert not self.capturing, "a wait while capturing"

    def begin_capture(self, mode):
        self.capturing = True
        self.modes.append(mode)

    def end_capture(self):
        self.capturing = False
        if self.broken:
            raise RuntimeError("cudaErrorStreamCaptureInvalidated")
        return type("Graph", (), {"upload": lambda self, stream: None})()


def _fake_cupy(monkeypatch, fail_in_capture: bool):
    """capture.CapturedFilter over fakes: FakeArray's allocations, FakeStream,
    and a cupy module of the calls the constructor makes; the passes' block
    addresses recorded."""
    import contextlib
    import sys
    import types

    def backing(size):
        return FakePointer(10**9, size, None)

    @contextlib.contextmanager
    def using_allocator(malloc):
        old, FakeArray.malloc = FakeArray.malloc, malloc
        yield
        FakeArray.malloc = old

    cuda = types.SimpleNamespace(
        Device=lambda: types.SimpleNamespace(id=0), get_allocator=lambda: backing,
        using_allocator=using_allocator, alloc=lambda size: FakePointer(1 << 40, size, None),
        UnownedMemory=lambda ptr, size, owner, device: FakePointer(ptr, size, owner),
        MemoryPointer=lambda mem, offset: FakePointer(mem.ptr + offset, mem.size, mem.owner),
    )  # fmt: skip
    fake = types.SimpleNamespace(cuda=cuda, empty=np.empty, zeros=np.zeros)
    monkeypatch.setitem(sys.modules, "cupy", fake)
    passes, streams = [], []

    def open_(self, words):
        self.stream, self.inputs = FakeStream(), np.zeros(words, dtype=np.uint32)
        streams.append(self.stream)

    def enqueue(self):
        passes.append([])
        self.x = fake_pass(self.n, self.steps, passes[-1])
        if self.stream.capturing and fail_in_capture:
            self.stream.broken = True
            raise RuntimeError("cudaErrorStreamCaptureUnsupported: a read back")

    monkeypatch.setattr(FakeArray, "malloc", backing)
    monkeypatch.setattr(capture.CapturedFilter, "open", open_)
    monkeypatch.setattr(capture.CapturedFilter, "_enqueue", enqueue)
    monkeypatch.setattr(capture.workspace, "workspace", lambda n: None)
    monkeypatch.setattr(capture, "kernel_arguments", lambda *a: {})
    return passes, streams


def test_the_capture_allocates_in_the_arena_the_eager_pass_sized(monkeypatch):
    passes, _ = _fake_cupy(monkeypatch, fail_in_capture=False)
    f = capture.CapturedFilter(None, get_method("systematic"), 500, 20, (20,), {}, {}, False)
    first, eager, captured = passes
    assert f.stream.modes == [capture.THREAD_LOCAL] and f.graph is not None
    assert len(first) == len(eager) == len(captured)
    assert f.served.capacity == capture.arena_bytes(f.planned.peak) == f.arena.size
    assert f.served.peak == f.planned.peak and f.served.blocks == f.planned.blocks
    base = f.arena.ptr
    assert all(base <= p < base + f.planned.peak for p in captured)  # every block in the arena
    assert all(p == 10**9 for p in eager)  # the eager pass's memory is the backing's
    assert f.x.mem.owner.memory is f.arena  # the last particles keep the arena alive


def test_a_failed_capture_says_what_broke_it_and_ends_the_capture(monkeypatch):
    _, streams = _fake_cupy(monkeypatch, fail_in_capture=True)
    with pytest.raises(capture.CaptureError, match="StreamCaptureUnsupported") as info:
        capture.CapturedFilter(None, get_method("systematic"), 500, 20, (20,), {}, {}, False)
    assert "Invalidated" not in str(info.value) and not streams[0].capturing


def test_the_statistics_kernels_keep_a_block_of_columns_or_say_so():
    """The captured step's sums take 2 + d columns of shared memory; a state
    beyond the block's is a CaptureError that names it (the loop then runs)."""
    from pfresample.cuda import geometry

    assert capture.statistics_columns(()) == 3
    assert capture.statistics_columns((2, 3)) == 8
    most = geometry.CAPTURE_MAX_COLUMNS - 2
    assert capture.statistics_columns((most,)) == geometry.CAPTURE_MAX_COLUMNS
    with pytest.raises(capture.CaptureError, match=f"a particle of {most + 1} numbers"):
        capture.statistics_columns((most + 1,))
    assert geometry.CAPTURE_MAX_COLUMNS * 8 * geometry.CAPTURE_THREADS <= 48 * 1024
    assert geometry.capture_blocks(1) == 1 and geometry.capture_blocks(2**30) == 1024
