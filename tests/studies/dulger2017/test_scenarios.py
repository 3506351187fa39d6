"""The chapter-7 truth trajectories (our design for thesis Figs 7.1–7.2) and the
cached trajectory sets of §5.4/§6.9/§7.1."""

import copy
import json
import math
from pathlib import Path

import numpy as np
import pytest
import yaml

from pfresample.models import SCENARIOS, GrowthModel, RadarModel, truth_trajectory
from pfresample.models.scenarios import STEPS_SCENARIO1, STEPS_SCENARIO2, validate_spec
from pfresample_studies.dulger2017.trajectories import (
    growth_trajectories,
    load_trajectories,
    radar_trajectories,
    save_trajectories,
    trajectory_rng,
)
from pfresample_studies.pipeline import artifacts as io

X0 = np.array([1000.0, 1000.0, 0.0, 0.0])  # Tables 7.1/7.4
SQRT_Q = math.sqrt(10.0)  # Table 7.1: Q = diag[10, 10], in (m/s^2)^2
R_DIAG = (10.0**2, (0.1 * math.pi / 180.0) ** 2)  # Table 7.1
CATALOG = Path(__file__).resolve().parents[3] / "config" / "studies" / "dulger2017.yaml"


def segment_rows(spec):
    """(segment, first row, last row) of each segment; T = 1 s, so a segment of
    s seconds spans rows first .. first + s of the truth."""
    first = 0
    for segment in spec["segments"]:
        last = first + int(segment["seconds"])
        yield segment, first, last
        first = last


def headings(truth):
    """The unwrapped heading of each row in degrees (rows with nonzero speed)."""
    return np.degrees(np.unwrap(np.arctan2(truth[:, 3], truth[:, 2])))


# --- scenarios ----------------------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_truth_starts_at_x0(name):
    truth = truth_trajectory(SCENARIOS[name])
    assert truth.shape == (SCENARIOS[name]["steps"] + 1, 4) and truth.dtype == np.float64
    np.testing.assert_array_equal(truth[0], X0)


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_segments_move_as_commanded(name):
    truth = truth_trajectory(SCENARIOS[name])
    for segment, first, last in segment_rows(SCENARIOS[name]):
        part = truth[first : last + 1]
        dv = np.diff(part[:, 2:], axis=0)
        if segment["kind"] == "straight":
            np.testing.assert_allclose(dv, 0.0, atol=1e-12)
            # atol: after whole half-turns a velocity component is zero up to rounding (1e-16)
            np.testing.assert_allclose(
                np.diff(part[:, :2], axis=0), part[1:, 2:], rtol=1e-12, atol=1e-9
            )
        elif segment["kind"] == "accelerate":
            np.testing.assert_allclose(dv, np.broadcast_to(segment["accel"], dv.shape), atol=1e-12)
        else:
            speed = np.hypot(part[:, 2], part[:, 3])
            np.testing.assert_allclose(speed, speed[0], rtol=1e-9)
            turned = headings(part)[-1] - headings(part)[0]
            assert turned == pytest.approx(segment["rate_deg_s"] * segment["seconds"], abs=1e-9)


def test_turn_position_is_the_exact_arc():
    # A quarter circle at 90 deg/s from v = (10, 0) at the origin ends at (R, R),
    # R = v / omega: the exact integral, not a constant-velocity step.
    spec = {"steps": 1, "segments": [{"kind": "turn", "seconds": 1, "rate_deg_s": 90.0}]}
    model = RadarModel(x0=(0.0, 0.0, 10.0, 0.0))
    radius = 10.0 / (math.pi / 2.0)
    np.testing.assert_allclose(
        truth_trajectory(spec, model)[1], [radius, radius, 0.0, 10.0], atol=1e-12
    )


def test_step_counts():
    # Scenario 1: 100 steps (§7.1). Scenario 2: 214, as Table 7.5's times are
    # about 2.14x Table 7.2's under identical parameters (see the module docstring).
    assert (STEPS_SCENARIO1, STEPS_SCENARIO2) == (100, 214)
    assert SCENARIOS["scenario1"]["steps"] == STEPS_SCENARIO1
    assert SCENARIOS["scenario2"]["steps"] == STEPS_SCENARIO2


def test_scenario1_turns_one_way_and_scenario2_is_a_double_s():
    turn1 = np.diff(headings(truth_trajectory(SCENARIOS["scenario1"])[1:]))
    assert turn1.min() > -1e-9 and turn1.sum() > 90.0  # left only
    turn2 = np.diff(headings(truth_trajectory(SCENARIOS["scenario2"])[1:]))
    sign = np.sign(np.where(np.abs(turn2) > 1e-9, turn2, 0.0))
    turning = np.flatnonzero(sign)
    # the turning steps fall into runs of one sign: left, right, left, right
    runs = np.split(turning, np.flatnonzero(np.diff(sign[turning])) + 1)
    assert [int(sign[run[0]]) for run in runs] == [1, -1, 1, -1]
    for run in runs:
        assert abs(turn2[run].sum()) == pytest.approx(180.0, abs=1e-6)


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_truth_stays_plausible(name):
    truth = truth_trajectory(SCENARIOS[name])
    pos = truth[:, :2]
    assert pos.min() > 500.0 and pos.max() < 5000.0
    # eq. 7.2's bearing is ill-conditioned near the sensor at the origin, and its
    # arctan(p_y / p_x) agrees with our arctan2 only away from p_x = 0 (module comment)
    assert np.hypot(pos[:, 0], pos[:, 1]).min() > 1400.0
    assert pos[:, 0].min() > 900.0
    # accelerations of the order of the filter's process noise (Table 7.1)
    assert np.abs(np.diff(truth[:, 2:], axis=0)).max() < SQRT_Q
    assert np.linalg.norm(np.diff(truth[:, 2:], axis=0), axis=1).max() < SQRT_Q


def test_config_copies_of_the_specs_are_valid():
    for spec in SCENARIOS.values():
        copied = json.loads(json.dumps(spec))  # what a YAML/JSON config holds
        np.testing.assert_array_equal(truth_trajectory(copied), truth_trajectory(spec))


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_catalog_specs_equal_scenarios(name):
    # The pipeline reads the catalog's copy: it must not drift from SCENARIOS.
    models = yaml.safe_load(CATALOG.read_text())["filter_models"]
    assert models[f"radar-{name}"] == {"model": "radar", "scenario": SCENARIOS[name]}


def _broken(change):
    spec = copy.deepcopy(SCENARIOS["scenario1"])
    change(spec)
    return spec


BAD_SPECS = [
    (lambda s: s["segments"][0].update(kind="loop"), "unknown kind 'loop'"),
    (lambda s: s["segments"][1].update(seconds=-20), r"segment 1 \(straight\): seconds must be"),
    (lambda s: s["segments"][1].update(seconds=0), "seconds must be positive"),
    (lambda s: s["segments"][1].update(seconds=20.5), "not a whole number of sampling periods"),
    (lambda s: s["segments"][1].update(seconds="20"), "seconds must be a finite number"),
    (lambda s: s["segments"][1].update(seconds=math.nan), "seconds must be a finite number"),
    (lambda s: s["segments"][1].update(seconds=True), "seconds must be a finite number"),
    (lambda s: s["segments"][3].update(seconds=10), "last 90 sampling periods but steps = 100"),
    (lambda s: s["segments"][0].update(accel=[1.0]), "accel must be a list of 2 numbers"),
    (lambda s: s["segments"][0].update(accel=[1.0, 2.0, 3.0]), "accel must be a list of 2"),
    (lambda s: s["segments"][0].update(accel="12"), "accel must be a list of 2"),
    (lambda s: s["segments"][0].update(accel=[1.0, math.inf]), r"accel\[y\] must be a finite"),
    (lambda s: s["segments"][0].pop("accel"), r"missing key\(s\) \['accel'\]"),
    (lambda s: s["segments"][2].pop("rate_deg_s"), r"missing key\(s\) \['rate_deg_s'\]"),
    (lambda s: s["segments"][2].update(rate_deg_s=None), "rate_deg_s must be a finite number"),
    (lambda s: s["segments"][2].update(rate=3.0), r"unknown key\(s\) \['rate'\]"),
    (lambda s: s["segments"].__setitem__(1, "straight"), "segment 1 must be a mapping"),
    (lambda s: s.update(segments=[]), "segments must be a non-empty list"),
    (lambda s: s.pop("segments"), "segments must be a non-empty list"),
    (lambda s: s.update(steps=0), "steps must be a positive integer"),
    (lambda s: s.update(steps=100.0), "steps must be a positive integer"),
    (lambda s: s.update(description=3), "description must be a string"),
    (lambda s: s.update(segmnets=[]), r"unknown key\(s\) \['segmnets'\]"),
]


@pytest.mark.parametrize(("change", "message"), BAD_SPECS)
def test_bad_specs_are_rejected(change, message):
    with pytest.raises(ValueError, match=message):
        validate_spec(_broken(change))
    with pytest.raises(ValueError, match=message):
        truth_trajectory(_broken(change))


def test_non_mapping_spec_and_turn_from_rest_are_rejected():
    with pytest.raises(ValueError, match="must be a mapping"):
        truth_trajectory([("turn", 100)])
    at_rest = {"steps": 5, "segments": [{"kind": "turn", "seconds": 5, "rate_deg_s": 3.0}]}
    with pytest.raises(ValueError, match=r"segment 0 \(turn\) starts at rest"):
        truth_trajectory(at_rest)


# --- trajectory sets ----------------------------------------------------------------------------


def test_growth_set_shapes_and_seeding():
    a = growth_trajectories(4, 30, seed=7)
    assert a["truth"].shape == (4, 31) and a["y"].shape == (4, 30)
    assert a["truth"].dtype == a["y"].dtype == np.float64
    np.testing.assert_array_equal(a["truth"][:, 0], 0.1)  # x_0 (§5.4)
    # trajectory j is GrowthModel.simulate with the documented generator
    x, y = GrowthModel().simulate(30, trajectory_rng(7, 2))
    np.testing.assert_array_equal(a["truth"][2], x)
    np.testing.assert_array_equal(a["y"][2], y)


def test_growth_set_is_deterministic_and_prefix_stable():
    a = growth_trajectories(4, 30, seed=7)
    b = growth_trajectories(4, 30, seed=7)
    more = growth_trajectories(6, 30, seed=7)
    for name in ("truth", "y"):
        np.testing.assert_array_equal(a[name], b[name])
        np.testing.assert_array_equal(more[name][:4], a[name])
    assert not np.array_equal(a["y"][0], a["y"][1])
    assert not np.array_equal(a["y"], growth_trajectories(4, 30, seed=8)["y"])


def test_radar_set_shapes_and_shared_truth():
    spec = SCENARIOS["scenario2"]
    a = radar_trajectories(spec, 3, seed=1)
    assert a["truth"].shape == (3, 215, 4) and a["y"].shape == (3, 214, 2)
    assert a["truth"].dtype == a["y"].dtype == np.float64
    for j in range(3):
        np.testing.assert_array_equal(a["truth"][j], truth_trajectory(spec))


def test_radar_set_is_deterministic_and_prefix_stable():
    spec = SCENARIOS["scenario1"]
    a = radar_trajectories(spec, 3, seed=1)
    b = radar_trajectories(spec, 3, seed=1)
    more = radar_trajectories(spec, 5, seed=1)
    np.testing.assert_array_equal(a["y"], b["y"])
    np.testing.assert_array_equal(more["y"][:3], a["y"])
    assert not np.array_equal(a["y"][0], a["y"][1])


def test_radar_noise_has_the_variance_of_r():
    model = RadarModel()
    count, steps = 64, 100
    a = radar_trajectories(SCENARIOS["scenario1"], count, seed=3)
    noise = model.residual(a["y"], a["truth"][:, 1:]).reshape(-1, 2)
    m = count * steps
    # For m normal samples (m - 1) s^2 / sigma^2 ~ chi^2_{m-1}, whose variance
    # 2 (m - 1) gives s^2 / sigma^2 a standard deviation of sqrt(2 / (m - 1)).
    tolerance = 5.0 * math.sqrt(2.0 / (m - 1))
    np.testing.assert_allclose(noise.var(axis=0, ddof=1) / R_DIAG, 1.0, atol=tolerance)
    # and mean zero, within 5 standard errors sqrt(R / m)
    assert np.all(np.abs(noise.mean(axis=0)) < 5.0 * np.sqrt(np.array(R_DIAG) / m))


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: growth_trajectories(0, 10, 1), "count must be an integer >= 1"),
        (lambda: growth_trajectories(2, 0, 1), "steps must be an integer >= 1"),
        (lambda: growth_trajectories(2.0, 10, 1), "count must be an integer >= 1"),
        (lambda: growth_trajectories(2, 10, -1), "seed must be a non-negative integer"),
        (lambda: radar_trajectories(SCENARIOS["scenario1"], 0, 1), "count must be"),
        (lambda: radar_trajectories({"steps": 1}, 2, 1), "segments must be a non-empty list"),
    ],
)
def test_bad_set_arguments_are_rejected(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def test_save_load_round_trip(tmp_path):
    for arrays in (growth_trajectories(2, 5, 0), radar_trajectories(SCENARIOS["scenario1"], 2, 0)):
        path = tmp_path / f"set{arrays['y'].ndim}.npz"
        save_trajectories(path, arrays, {"seed": 0})
        loaded, metadata = load_trajectories(path)
        assert metadata == {"seed": 0}
        for name in ("truth", "y"):
            np.testing.assert_array_equal(loaded[name], arrays[name])


def test_wrong_shapes_are_rejected_on_save_and_load(tmp_path):
    good = radar_trajectories(SCENARIOS["scenario1"], 2, 0)
    bad = {"truth": good["truth"][:, :-1], "y": good["y"]}  # truth one row short
    with pytest.raises(ValueError, match="expected truth"):
        save_trajectories(tmp_path / "bad.npz", bad)
    path = io.save_npz(tmp_path / "bad.npz", bad)
    with pytest.raises(io.CorruptArtifact, match="bad.npz.*expected truth"):
        load_trajectories(path)
    io.save_npz(tmp_path / "three.npz", {"truth": good["truth"][..., :3], "y": good["y"]})
    with pytest.raises(io.CorruptArtifact, match="three.npz"):
        load_trajectories(tmp_path / "three.npz")
    io.save_npz(tmp_path / "no_y.npz", {"truth": good["truth"]})
    with pytest.raises(io.CorruptArtifact, match=r"no_y.npz: missing array\(s\) \['y'\]"):
        load_trajectories(tmp_path / "no_y.npz")
