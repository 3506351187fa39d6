"""``filters.graph.GraphRunner`` over a stand-in CuPy: what it enqueues for a
step program, and when -- the eager pass and the capture on the first run
before the clock, the whole run or chunks of steps replayed between eager
ones, the marks' side branch rejoined -- checked on the CPU (the GPU tests,
bench/device/runner_check.sh, check the filters' numbers)."""

from __future__ import annotations

import sys
import types

import numpy as np
import pytest

from pfresample.filters import graph

CALLS: list = []


class _Graph:
    def upload(self, stream):
        CALLS.append("upload")

    def launch(self, stream):
        CALLS.append("launch")


class _Stream:
    ptr = 1

    def __init__(self, non_blocking=False):
        self.capturing = False

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def synchronize(self):
        assert not self.capturing, "a wait while capturing"
        CALLS.append("sync")

    def begin_capture(self, mode=None):
        self.capturing = True
        CALLS.append("begin")

    def end_capture(self):
        self.capturing = False
        CALLS.append("end")
        return _Graph()

    def wait_event(self, event):
        CALLS.append("wait")


class _Event:
    def __init__(self, **kw):
        pass

    def record(self, stream=None):
        CALLS.append("event")


class _Inputs(np.ndarray):
    def set(self, host, stream=None):
        CALLS.append("set")
        self[...] = host

    @property
    def data(self):  # a device array's pointer
        return types.SimpleNamespace(ptr=0)


def _memcpy(dst, src, nbytes, kind, stream):
    CALLS.append("h2d" if kind == "up" else "d2h")


RUNTIME = types.SimpleNamespace(
    memcpyAsync=_memcpy, memcpyHostToDevice="up", memcpyDeviceToHost="down"
)


@pytest.fixture(autouse=True)
def fake_cupy(monkeypatch):
    cuda = types.SimpleNamespace(
        Stream=_Stream,
        Event=_Event,
        get_elapsed_time=lambda a, b: 2.0,
        runtime=RUNTIME,
        alloc_pinned_memory=bytearray,
    )
    zeros = lambda n, dtype=None: np.zeros(n, dtype=dtype).view(_Inputs)  # noqa: E731
    monkeypatch.setitem(sys.modules, "cupy", types.SimpleNamespace(cuda=cuda, zeros=zeros))
    monkeypatch.setattr(graph, "_timing_record", lambda event, stream: CALLS.append("mark"))
    CALLS.clear()


class Program(graph.StepProgram):
    """A toy program: its start, steps and finish recorded, marks around the run."""

    def __init__(self, steps, eager_steps=1, chunk=None, marks=2, runner=graph.GraphRunner):
        self.steps, self.eager_steps, self.chunk = steps, eager_steps, chunk
        self.runner = runner(self, 3, marks)

    def host_inputs(self, y, seed):
        return np.array([seed, 0, 0], dtype=np.uint32)

    def start(self, marks):
        if marks:
            self.runner.mark(0)
        CALLS.append("start")

    def step(self, k, marks):
        CALLS.append(f"step{k}")

    def finish(self, steps, marks):
        CALLS.append(f"finish{steps}")
        if marks:
            self.runner.mark(1)

    def collect(self, seed, wall):
        return seed, self.runner.seconds(0, 1) if self.runner.marks else None


# A whole run's first call: the eager pass (one step), then the capture: the
# inputs' upload from the page-locked buffer, the marks forked onto the side
# branch, which rejoins before the capture ends.
BUILD = ["set", "start", "step0", "finish1", "sync", "begin", "h2d", "event", "wait", "mark",
         "start", "step0", "step1", "step2", "finish3", "event", "wait", "mark", "event", "wait",
         "end", "upload"]  # fmt: skip
REPLAY = ["launch", "sync"]  # the clock's: the replay (its upload in it), the wait


def test_the_first_run_builds_before_its_clock_then_runs_replay():
    p = Program(3)
    assert p.run(None, 7) == (7, 2e-3)
    assert CALLS == BUILD + REPLAY
    CALLS.clear()
    p.run(None, 8)
    assert CALLS == REPLAY and int(p.runner.host_in[0]) == 8  # the graph's upload reads it


class ReadBack(Program):
    """A program whose graph copies an array back after its last step."""

    def __init__(self, steps, **kw):
        super().__init__(steps, **kw)
        self.estimates = np.arange(6.0).reshape(3, 2).view(_Inputs)

    def read_back(self):
        return [self.estimates]


def test_a_whole_run_copies_its_read_back_arrays_into_host_buffers():
    p = ReadBack(3)
    p.run(None, 7)
    end = CALLS.index("end")  # the copy is the capture's last node, after the rejoin
    assert CALLS[end - 3 : end] == ["event", "wait", "d2h"] and CALLS.count("d2h") == 1
    copies = p.runner.copies()
    assert len(copies) == 1 and copies[0].shape == (3, 2) and copies[0].dtype == np.float64
    chunked = ReadBack(7, eager_steps=2, chunk=2, marks=0)
    chunked.run(None, 1)
    assert chunked.runner.copies() is None  # chunks: the program reads the device itself


def test_chunks_replay_between_eager_steps():
    """T = 7, two eager steps, chunks of 2: steps 2-3 captured; a run is the
    start, steps 0-1, two replays (steps 2-5) and step 6, eagerly."""
    p = Program(7, eager_steps=2, chunk=2, marks=0)
    p.run(None, 1)
    build = ["set", "start", "step0", "step1", "finish2", "begin", "step2", "step3", "end",
             "upload", "sync"]  # fmt: skip
    run = ["set", "start", "event", "step0", "step1", "event", "launch", "event", "launch",
           "event", "step6", "event", "sync"]  # fmt: skip
    assert CALLS == build + run
    assert p.runner.chunk_seconds() == (2e-3, 2e-3) and p.runner.device_seconds() == 2e-3


def test_fewer_steps_than_a_chunk_run_eagerly_without_a_graph():
    p = Program(3, eager_steps=2, chunk=2, marks=0)
    p.run(None, 1)
    assert CALLS == ["set", "start", "event", "step0", "step1", "step2", "event", "sync"]
    assert p.runner.graph is None and p.runner.chunk_seconds() == ()


class NoEagerRunner(graph.GraphRunner):
    """A planted flaw: the capture without the eager pass before it."""

    def capture(self, enqueue, *, eager=None, finish=None):
        return super().capture(enqueue, finish=finish)


def test_negative_control_a_runner_without_the_eager_pass_is_caught():
    Program(3, runner=NoEagerRunner).run(None, 7)
    assert CALLS != BUILD + REPLAY  # the check above fails on it
    assert CALLS[:2] == ["set", "begin"]  # captured with no kernel compiled first


class EventTimed(Program):
    """A program timed by two events around the replay (the CPF's way), no marks."""

    stream_events = True

    def start(self, marks):
        CALLS.append("start")

    def finish(self, steps, marks):
        CALLS.append(f"finish{steps}")

    def collect(self, seed, wall):
        return seed, self.runner.device_seconds()


def test_an_event_timed_run_uploads_outside_its_graph():
    # The events around the replay time the run: the upload stays before
    # them, as set_inputs, not a node inside the graph they time.
    p = EventTimed(3, marks=0)
    p.run(None, 7)
    assert "h2d" not in CALLS and p.runner.host_in is None
    CALLS.clear()
    p.run(None, 8)
    assert CALLS == ["set", "event", "launch", "event", "sync"]
    assert int(p.runner.inputs[0]) == 8
