"""One GPU per job on a multi-GPU host.

Snakemake gives local jobs a count of a resource (``--resources gpu=N``), not
device ids: with N GPUs it starts up to N GPU jobs at once, and without more
they would all use device 0. Each GPU job therefore claims a device before
CUDA starts: it takes an exclusive ``flock`` on one lock file per device
(the first free one) and sets ``CUDA_VISIBLE_DEVICES`` to that device alone.

* No two jobs share a GPU: a lock is held for the job's whole life.
* No GPU idles while a GPU job waits: Snakemake starts at most N GPU jobs, so
  a starting job always finds a free lock, without waiting, when
  N <= the number of devices.
* A killed job (even ``kill -9``) frees its GPU: the kernel drops a
  process's locks when the process ends, so a stale lock cannot exist.

The lock files live in one directory per user and host (``lock_dir``), so
that two runs on one host share the devices too. Under SLURM the scheduler
has already pinned the job (``CUDA_VISIBLE_DEVICES`` from its GPU request),
and nothing is claimed.
"""

from __future__ import annotations

import fcntl
import os
import re
import tempfile
import time
from dataclasses import dataclass, field

# Seconds between two looks for a free device when all are taken (which only
# happens when more GPU jobs run than there are devices).
POLL_S = 0.5


def lock_dir() -> str:
    """The directory of the per-device lock files: PFRESAMPLE_GPU_LOCK_DIR, or
    one per user in the temporary directory."""
    default = os.path.join(tempfile.gettempdir(), f"pfresample-gpu-locks-{os.getuid()}")
    return os.environ.get("PFRESAMPLE_GPU_LOCK_DIR", default)


def visible_devices(count: int, env=os.environ) -> list[str]:
    """The devices jobs may claim, as ``CUDA_VISIBLE_DEVICES`` entries: that
    variable's entries when it is set, else ``0 .. count-1``."""
    listed = env.get("CUDA_VISIBLE_DEVICES")
    if listed is not None:
        return [d.strip() for d in listed.split(",") if d.strip()][:count]
    return [str(i) for i in range(count)]


@dataclass
class DeviceClaim:
    """A device held by this process until :meth:`release` or exit."""

    device: str  # the CUDA_VISIBLE_DEVICES entry
    waited_s: float
    _lock: object = field(repr=False)

    def release(self) -> None:
        self._lock.close()  # closing the file drops the flock


def _lock_path(directory: str, device: str) -> str:
    return os.path.join(directory, "gpu-" + re.sub(r"[^A-Za-z0-9_.-]", "_", device) + ".lock")


def claim_device(devices, directory: str | None = None, timeout_s: float | None = None):
    """Take the first free device of ``devices`` (waiting while all are
    taken; ``TimeoutError`` after ``timeout_s``). Returns a :class:`DeviceClaim`."""
    devices = list(devices)
    if not devices:
        raise ValueError("no devices to claim")
    directory = directory or lock_dir()
    os.makedirs(directory, exist_ok=True)
    start = time.monotonic()
    while True:
        for device in devices:
            lock = open(_lock_path(directory, device), "a+")  # held until release: not a with
            try:
                fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                lock.close()
                continue
            lock.seek(0)
            lock.truncate()
            lock.write(f"{os.getpid()}\n")  # who holds it, for a person looking
            lock.flush()
            return DeviceClaim(device, time.monotonic() - start, lock)
        waited = time.monotonic() - start
        if timeout_s is not None and waited >= timeout_s:
            raise TimeoutError(
                f"no free GPU among {devices} after {waited:.0f} s (locks in {directory}): "
                "more GPU jobs run than there are devices; lower --resources gpu=N"
            )
        time.sleep(POLL_S)


def pin_job(devices, env=os.environ) -> DeviceClaim | None:
    """Claim a device for this job and make it the only one CUDA sees; call
    before anything starts CUDA. None where nothing is claimed: no devices
    (CPU run), or a SLURM job, which its scheduler has pinned already."""
    if not devices or "SLURM_JOB_ID" in env:
        return None
    claim = claim_device(devices)
    env["CUDA_VISIBLE_DEVICES"] = claim.device
    return claim
