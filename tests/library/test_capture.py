"""The captured CuPy loop (filters/capture.py) on the CPU side: its Philox
kernel source against the NumPy reference (compiled as C), what it runs,
and the engine's choice between the graph and the loop (capture=), with
fakes for the GPU."""

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
    """The elementwise kernel's Philox and Box-Muller, compiled as C (its CUDA
    qualifiers dropped), draw capture.reference_normals' numbers (rng.py's
    Philox4x32-10); a wrong key word would not."""
    key, call, size = (123456789, 987654321), 5, 64

    def c_normals(k0, k1):
        head = "#include <stdio.h>\n#include <math.h>\n#define __device__\n" + capture._PHILOX
        main = (
            f"int main(void) {{\nunsigned int key[2] = {{{k0}u, {k1}u}};\n"
            f"unsigned int call = {call};\n"
            f"for (unsigned long long i = 0; i < {size}; ++i) {{\n"
        )
        tail = (
            "double u1 = 1.0 - uniform53(c[0], c[1]); double u2 = uniform53(c[2], c[3]);\n"
            'printf("%.17g\\n", sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2));\n}}\n'
        )
        src = head + main + capture._BODY + tail
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
