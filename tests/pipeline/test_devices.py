"""One GPU per job on a multi-GPU host (pfresample_studies.pipeline.devices), on the CPU with a
simulated device count: the locks are the whole mechanism, so processes that
claim and hold 'devices' show what GPU jobs would do."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

from pfresample_studies.pipeline import devices

# A stand-in for a GPU job: claim a device, report it, hold it for a while.
JOB = textwrap.dedent(
    """
    import json, sys, time
    from pfresample_studies.pipeline import devices
    start = time.time()
    claim = devices.claim_device(sys.argv[1].split(","), sys.argv[2])
    print(json.dumps({"device": claim.device, "start": start, "got": time.time(),
                      "waited": claim.waited_s}), flush=True)
    time.sleep(float(sys.argv[3]))
    print(json.dumps({"end": time.time()}), flush=True)
    """
)


def job(tmp_path, ids, hold):
    return subprocess.Popen(
        [sys.executable, "-c", JOB, ",".join(ids), str(tmp_path), str(hold)],
        stdout=subprocess.PIPE,
        text=True,
    )


def test_visible_devices_follow_cuda_visible_devices():
    assert devices.visible_devices(3, env={}) == ["0", "1", "2"]
    assert devices.visible_devices(2, env={"CUDA_VISIBLE_DEVICES": "3, 5"}) == ["3", "5"]
    assert devices.visible_devices(1, env={"CUDA_VISIBLE_DEVICES": "GPU-ab12"}) == ["GPU-ab12"]


@pytest.mark.slow
def test_claims_take_distinct_devices_and_free_them_on_release(tmp_path):
    a = devices.claim_device(["0", "1"], str(tmp_path))
    b = devices.claim_device(["0", "1"], str(tmp_path))
    assert {a.device, b.device} == {"0", "1"}
    with pytest.raises(TimeoutError, match="no free GPU among"):
        devices.claim_device(["0", "1"], str(tmp_path), timeout_s=0.2)
    a.release()
    c = devices.claim_device(["0", "1"], str(tmp_path), timeout_s=1)
    assert c.device == a.device and c.waited_s < 0.5
    b.release()
    c.release()


@pytest.mark.slow
def test_no_two_jobs_share_a_device_and_none_idles_while_jobs_wait(tmp_path):
    """Six jobs on two simulated devices, started two at a time as Snakemake
    does with --resources gpu=2: every job gets a device at once, and the
    jobs on one device never overlap in time."""
    ids, spans = ["0", "1"], []
    for _ in range(3):
        running = [job(tmp_path, ids, 0.3) for _ in ids]
        for p in running:
            first, last = (json.loads(line) for line in p.communicate(timeout=30)[0].splitlines())
            assert p.returncode == 0
            spans.append((first["device"], first["got"], last["end"], first["waited"]))
    assert {d for d, *_ in spans} == set(ids)
    assert all(waited < 0.1 for *_, waited in spans)  # a free device at once
    for device in ids:
        mine = sorted((got, end) for d, got, end, _ in spans if d == device)
        assert all(end <= nxt for (_, end), (nxt, _) in zip(mine, mine[1:], strict=False))


@pytest.mark.slow
def test_a_killed_job_frees_its_device(tmp_path):
    holder = job(tmp_path, ["0"], 60)
    assert '"device": "0"' in holder.stdout.readline()
    with pytest.raises(TimeoutError):
        devices.claim_device(["0"], str(tmp_path), timeout_s=0.2)
    os.kill(holder.pid, signal.SIGKILL)
    holder.wait(timeout=10)
    start = time.monotonic()
    claim = devices.claim_device(["0"], str(tmp_path), timeout_s=5)
    assert claim.device == "0" and time.monotonic() - start < 1
    claim.release()


def test_pin_job_sets_the_device_and_skips_slurm_and_cpu_runs(tmp_path, monkeypatch):
    monkeypatch.setenv("PFRESAMPLE_GPU_LOCK_DIR", str(tmp_path))
    env = {}
    claim = devices.pin_job(["4", "7"], env=env)
    assert env == {"CUDA_VISIBLE_DEVICES": claim.device} and claim.device == "4"
    assert devices.pin_job([], env={}) is None
    slurm = {"SLURM_JOB_ID": "12", "CUDA_VISIBLE_DEVICES": "0"}
    assert devices.pin_job(["4", "7"], env=slurm) is None
    assert slurm["CUDA_VISIBLE_DEVICES"] == "0"
    claim.release()
