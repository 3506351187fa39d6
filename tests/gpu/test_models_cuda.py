"""gpu_kernels/models.cuh (the GPU filter's model arithmetic) against the NumPy models.

No GPU needed: the header's host path is compiled (by nvcc, and by a plain C++
compiler where one is found) into a small program that answers requests on
stdin, and its answers are compared with ``pfresample.models`` and
``pfresample.rng``:

* ``normals4``: Box-Muller on one Philox block equals the same formula on
  NumPy's Philox words (float32 rounding), and 2^18 of its normals have mean 0
  and variance 1 (5 standard errors: 1/sqrt(m) for the mean, sqrt(2/(m-1)) for
  the variance);
* the growth step and log-likelihood equal eqs. 2.34-2.35 (GrowthModel);
* the radar step and log-likelihood equal eqs. 7.1-7.2 (RadarModel), bearings
  across the +-pi cut included; ``wrap_angle`` equals radar.wrap_angle;
* the bearings-only tracking step and log-likelihood equal eqs. B1-B2
  (BearingsOnlyModel), residuals across the +-pi cut included.

The log-likelihoods are compared up to the model's constant, which the kernels
drop (the filter subtracts the maximum anyway).
"""

from __future__ import annotations

import math
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from pfresample import rng
from pfresample.models import BearingsOnlyModel, GrowthModel, RadarModel
from pfresample.models.bearings import wrap_bearing
from pfresample.models.bimodal import BimodalModel
from pfresample.models.radar import wrap_angle
from pfresample.models.volatility import VolatilityModel

HEADER_DIR = Path(__file__).resolve().parents[2] / "gpu_kernels"
NVCC = shutil.which("nvcc")
CXX = shutil.which("g++") or shutil.which("clang++")

PROGRAM = r"""
// One request per line on stdin, one answer line on stdout:
//   N k0 k1 particle block                 -> normals4
//   G x drift sigma_v v z inv_var_n        -> growth_step, growth_log_likelihood
//   R px py vx vy dt ax ay sx sy yr yb ivr ivb -> radar_step (4), radar_log_likelihood
//   W a                                    -> wrap_angle
//   B x mode inv_two_var                   -> bimodal_log_likelihood
//   V x y2 inv_two_beta2                   -> volatility_log_likelihood
//   T x vx y vy q_sd w0 w1 z inv_var       -> bot_step (4), bot_log_likelihood
#include <cmath>
#include <cstdio>
#include "models.cuh"

int main() {
    char op[2];
    while (std::scanf("%1s", op) == 1) {
        if (op[0] == 'N') {
            unsigned int k0, k1, particle;
            unsigned long long block;
            if (std::scanf("%u %u %u %llu", &k0, &k1, &particle, &block) != 4) return 2;
            float z[4];
            pfr::normals4(pfr::PhiloxKey{k0, k1}, particle, block, z);
            std::printf("%.9g %.9g %.9g %.9g\n", z[0], z[1], z[2], z[3]);
        } else if (op[0] == 'G') {
            float x, drift, sigma_v, v, z, inv_var;
            if (std::scanf("%f %f %f %f %f %f", &x, &drift, &sigma_v, &v, &z, &inv_var) != 6)
                return 2;
            const float next = pfr::growth_step(x, drift, sigma_v, v);
            std::printf("%.9g %.9g\n", next, pfr::growth_log_likelihood(next, z, inv_var));
        } else if (op[0] == 'R') {
            pfr::RadarState s;
            float dt, ax, ay, sx, sy, yr, yb, ivr, ivb;
            if (std::scanf("%f %f %f %f %f %f %f %f %f %f %f %f %f", &s.px, &s.py, &s.vx, &s.vy,
                           &dt, &ax, &ay, &sx, &sy, &yr, &yb, &ivr, &ivb) != 13)
                return 2;
            const pfr::RadarState t = pfr::radar_step(s, dt, ax, ay);
            std::printf("%.9g %.9g %.9g %.9g %.9g\n", t.px, t.py, t.vx, t.vy,
                        pfr::radar_log_likelihood(t, sx, sy, yr, yb, ivr, ivb));
        } else if (op[0] == 'W') {
            float a;
            if (std::scanf("%f", &a) != 1) return 2;
            std::printf("%.9g\n", pfr::wrap_angle(a));
        } else if (op[0] == 'B') {
            float x, mode, inv;
            if (std::scanf("%f %f %f", &x, &mode, &inv) != 3) return 2;
            std::printf("%.9g\n", pfr::bimodal_log_likelihood(x, mode, inv));
        } else if (op[0] == 'V') {
            float x, y2, inv;
            if (std::scanf("%f %f %f", &x, &y2, &inv) != 3) return 2;
            std::printf("%.9g\n", pfr::volatility_log_likelihood(x, y2, inv));
        } else if (op[0] == 'T') {
            pfr::BotState s;
            float q_sd, w0, w1, z, inv;
            if (std::scanf("%f %f %f %f %f %f %f %f %f", &s.x, &s.vx, &s.y, &s.vy, &q_sd, &w0, &w1,
                           &z, &inv) != 9)
                return 2;
            const pfr::BotState t = pfr::bot_step(s, q_sd, w0, w1);
            std::printf("%.9g %.9g %.9g %.9g %.9g\n", t.x, t.vx, t.y, t.vy,
                        pfr::bot_log_likelihood(t, z, inv));
        } else {
            return 3;
        }
    }
    return 0;
}
"""


def _compilers():
    return [
        pytest.param("nvcc", marks=pytest.mark.skipif(NVCC is None, reason="nvcc not on PATH")),
        pytest.param("c++", marks=pytest.mark.skipif(CXX is None, reason="no host C++ compiler")),
    ]


@pytest.fixture(scope="module", params=_compilers())
def program(request, tmp_path_factory):
    tmp = tmp_path_factory.mktemp(f"models_{request.param}")
    src = tmp / "models.cu"
    src.write_text(PROGRAM)
    exe = tmp / "models"
    if request.param == "nvcc":
        cmd = [NVCC, "-x", "cu", "-std=c++17", "-O2", "-Werror", "all-warnings"]
    else:
        cmd = [CXX, "-x", "c++", "-std=c++17", "-O2", "-Wall", "-Wextra", "-Werror"]
    proc = subprocess.run(
        [*cmd, "-I", str(HEADER_DIR), "-o", str(exe), str(src)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr

    def ask(lines: list[str]) -> np.ndarray:
        out = subprocess.run(
            [str(exe)], input="\n".join(lines) + "\n", capture_output=True, text=True, timeout=300
        )
        assert out.returncode == 0, out.stderr
        return np.array([[float(v) for v in line.split()] for line in out.stdout.splitlines()])

    return ask


def _numpy_normals4(k0: int, k1: int, particles, block: int) -> np.ndarray:
    """The Box-Muller of models.cuh on NumPy's Philox words, in float32."""
    seed = k0 | (k1 << 32)
    counters = 4 * block + np.arange(4, dtype=np.uint64)
    words = np.stack(
        [rng.draws(seed, np.uint64(p), counters, rng.DOMAIN_PARTICLE) for p in particles]
    )
    two_pi = np.float32(2 * math.pi)
    r0 = np.sqrt(np.float32(-2) * np.log(rng.uniform_accept(words[:, 0])))
    r1 = np.sqrt(np.float32(-2) * np.log(rng.uniform_accept(words[:, 2])))
    a0 = two_pi * rng.uniform_float(words[:, 1])
    a1 = two_pi * rng.uniform_float(words[:, 3])
    return np.stack([r0 * np.cos(a0), r0 * np.sin(a0), r1 * np.cos(a1), r1 * np.sin(a1)], axis=1)


@pytest.mark.slow
def test_normals_equal_box_muller_on_numpys_philox(program):
    k0, k1, block = 12345, 678, 7
    particles = [0, 1, 2, 31, 32, 1000, 2**20 + 3, 2**32 - 1]
    got = program([f"N {k0} {k1} {p} {block}" for p in particles])
    np.testing.assert_allclose(got, _numpy_normals4(k0, k1, particles, block), atol=2e-6, rtol=1e-5)


@pytest.mark.slow
def test_normals_are_standard(program):
    m_particles = 2**16
    z = program([f"N 99 7 {p} 3" for p in range(m_particles)]).ravel()
    m = z.size
    assert abs(z.mean()) < 5 / math.sqrt(m)
    assert abs(z.var(ddof=1) - 1) < 5 * math.sqrt(2 / (m - 1))
    # The four normals of a block are independent: no correlation between pairs.
    pairs = z.reshape(-1, 4)
    corr = np.corrcoef(pairs.T)[np.triu_indices(4, 1)]
    assert np.all(np.abs(corr) < 5 / math.sqrt(m_particles))


def test_growth_step_and_likelihood_match_eqs_2_34_2_35(program):
    model = GrowthModel()
    gen = np.random.default_rng(1)
    x = gen.normal(0, 10, 200).astype(np.float32)
    v = gen.normal(size=200).astype(np.float32)
    z = gen.uniform(0, 30, 200).astype(np.float32)
    k = 13
    drift = np.float32(8 * math.cos(1.2 * k))
    sigma_v = np.float32(math.sqrt(model.sigma_v2))
    got = program(
        [
            "G " + " ".join(repr(float(t)) for t in (a, drift, sigma_v, b, c, 1.0))
            for a, b, c in zip(x, v, z, strict=True)
        ]
    )
    want_x = model.mean_transition(x.astype(np.float64), k) + math.sqrt(model.sigma_v2) * v
    np.testing.assert_allclose(got[:, 0], want_x, rtol=1e-5, atol=1e-4)
    const = -0.5 * math.log(2 * math.pi * model.sigma_n2)
    want_ll = (
        np.array([model.log_likelihood(c, a) for a, c in zip(got[:, 0], z, strict=True)]) - const
    )
    np.testing.assert_allclose(got[:, 1], want_ll, rtol=1e-4, atol=1e-3)


def test_radar_step_and_likelihood_match_eqs_7_1_7_2(program):
    model = RadarModel()
    gen = np.random.default_rng(2)
    n = 200
    states = np.column_stack([gen.uniform(-3000, 3000, (n, 2)), gen.normal(0, 30, (n, 2))]).astype(
        np.float32
    )
    states[:20, 0] = -gen.uniform(500, 3000, 20)  # left of the sensor: bearings near +-pi
    states[:20, 1] = gen.normal(0, 5, 20)
    acc = (gen.normal(size=(n, 2)) * np.sqrt(model.q_diag)).astype(np.float32)
    truth = states.astype(np.float64) @ model.transition_matrix().T
    y = model.observe(truth) + gen.normal(size=(n, 2)) * np.sqrt(model.r_diag)
    y[:, 1] = wrap_angle(y[:, 1])
    ivr, ivb = (1.0 / v for v in model.r_diag)
    lines = [
        "R " + " ".join(repr(float(v)) for v in (*s, model.dt, *a, *model.sensor, *yy, ivr, ivb))
        for s, a, yy in zip(states, acc, y, strict=True)
    ]
    got = program(lines)
    want = (
        model.mean_transition(states.astype(np.float64))
        + acc.astype(np.float64) @ model.noise_gain().T
    )
    np.testing.assert_allclose(got[:, :4], want, rtol=1e-5, atol=1e-3)
    const = -0.5 * np.log(2 * math.pi * np.asarray(model.r_diag)).sum()
    want_ll = (
        np.array([model.log_likelihood(yy, s) for yy, s in zip(y, got[:, :4], strict=True)]) - const
    )
    # float32 bearings: atan2 to ~1e-7 rad against sigma = 1.7e-3 rad
    np.testing.assert_allclose(got[:, 4], want_ll, rtol=1e-3, atol=0.05)


def test_wrap_angle_matches_radar_py(program):
    angles = [0.0, 1.0, -1.0, 3.14, -3.14, 3.15, -3.15, 6.3, -6.3, 10.0, -10.0, 20.5]
    got = program([f"W {a!r}" for a in angles])[:, 0]
    np.testing.assert_allclose(got, wrap_angle(np.float32(angles)), atol=2e-6)


def test_bimodal_likelihood_matches_eq_4_8(program):
    model = BimodalModel()
    x = np.array([0.0, 0.3, -2.0, 10.0, -49.0, 50.5, 120.0, -300.0], dtype=np.float32)
    mode = np.float32(25.0)
    inv = 0.5 / model.sigma_2**2
    got = program([f"B {float(v)!r} {float(mode)!r} {inv!r}" for v in x])[:, 0]
    want = model.log_likelihood(float(mode), x.astype(np.float64))
    # float32 arithmetic on exponents up to ~5e4: relative 1e-6 of their size
    np.testing.assert_allclose(got, want, rtol=2e-6, atol=1e-5)


def test_volatility_likelihood_matches_section_4_3_1(program):
    model = VolatilityModel()
    gen = np.random.default_rng(3)
    x = gen.normal(0, 1, 50).astype(np.float32)
    y = gen.normal(0, 1, 50).astype(np.float32)
    inv = 0.5 / model.beta**2
    got = program([f"V {float(a)!r} {float(b * b)!r} {inv!r}" for a, b in zip(x, y, strict=True)])
    const = -0.5 * math.log(2 * math.pi * model.beta**2)
    want = [model.log_likelihood(float(b), float(a)) - const for a, b in zip(x, y, strict=True)]
    np.testing.assert_allclose(got[:, 0], want, rtol=1e-5, atol=1e-5)


def test_bot_step_and_likelihood_match_eqs_b1_b2(program):
    model = BearingsOnlyModel()
    gen = np.random.default_rng(4)
    n = 200
    states = np.column_stack(
        [
            gen.uniform(-1, 1, n),
            gen.normal(0, 0.01, n),
            gen.uniform(-1, 1, n),
            gen.normal(0, 0.01, n),
        ]
    ).astype(np.float32)
    states[:40, 0] = -gen.uniform(0.05, 1.0, 40)  # left of the sensor: bearings near +-pi
    states[:40, 2] = gen.normal(0, 0.003, 40)
    states[:40, 3] = 0.0
    w = gen.normal(size=(n, 2)).astype(np.float32)
    truth = model.mean_transition(states.astype(np.float64)) + model.q_sd * w @ model.noise_gain().T
    # the first half measured as (B2) does, the rest at random bearings (large residuals)
    z = np.concatenate(
        [
            wrap_bearing(model.observe(truth[: n // 2]) + model.r_sd * gen.normal(size=n // 2)),
            gen.uniform(-math.pi, math.pi, n - n // 2),
        ]
    ).astype(np.float32)
    inv_var = 1.0 / model.r_sd**2
    lines = [
        "T " + " ".join(repr(float(v)) for v in (*s, model.q_sd, *ww, zz, inv_var))
        for s, ww, zz in zip(states, w, z, strict=True)
    ]
    got = program(lines)
    # float32 sums of terms below 1: a few ulps of 1 (1.2e-7)
    np.testing.assert_allclose(got[:, :4], truth, rtol=1e-6, atol=1e-6)
    pred = model.observe(got[:, :4])
    assert np.any(np.sign(pred[:40]) != np.sign(z[:40]))  # some residuals cross the cut
    const = -0.5 * math.log(2 * math.pi * model.r_sd**2)
    want_ll = model.log_likelihood(z.astype(np.float64), got[:, :4]) - const
    # float32 residuals near +-pi err by a few 1e-7 rad (atan2f, the float32
    # 2 pi of wrap_angle); times the slope |r| / r_sd^2 <= 1000 per rad of a
    # residual within 5 sd, a few 1e-4; large residuals: relative 1e-6 or so
    np.testing.assert_allclose(got[:, 4], want_ll, rtol=1e-5, atol=2e-3)
