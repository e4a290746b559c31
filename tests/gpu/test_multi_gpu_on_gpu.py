"""Several GPUs on real hardware (issue 18), with however many GPUs the machine has (one included):

- a grading child's device report (helpers/grading/devices.py, read through the driver with ctypes)
  names the one GPU it was given: for each visible GPU, a child started with only that GPU in
  CUDA_VISIBLE_DEVICES sees one device, with that GPU's UUID and PCI bus id as cuda.core reads them;
- a reduction split over every GPU (chunk d on GPU d, a stream each) equals the sum on one GPU.
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import helpers  # noqa: F401 - decides the mode before numba is imported

ROOT = Path(__file__).resolve().parents[2]
CHILD = "import json; from helpers.grading.devices import describe; print(json.dumps(describe()))"


def _hex(uuid) -> str:
    return str(uuid).lower().removeprefix("gpu-").replace("-", "")


def _devices():
    from cuda.core import Device

    return Device.get_all_devices()


@pytest.mark.parametrize("index", range(len(_devices()) if helpers.on_gpu() else 1))
def test_a_child_given_one_gpu_reports_exactly_that_gpu(index):
    dev = _devices()[index]
    visible = [d.strip() for d in os.environ.get("CUDA_VISIBLE_DEVICES", "").split(",") if d.strip()]
    given = visible[index] if visible else str(index)
    path = os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH")) if p)
    env = {**os.environ, "CUDA_VISIBLE_DEVICES": given, "COURSE_MODE": "gpu", "PYTHONPATH": path}
    r = subprocess.run([sys.executable, "-c", CHILD], capture_output=True, text=True, env=env, timeout=120)
    assert r.returncode == 0, r.stderr[-2000:]
    seen = json.loads(r.stdout.strip().splitlines()[-1])
    assert seen["gpu"] is True and seen["count"] == 1 and seen["visible"] == given, seen
    assert _hex(seen["uuid"]) == _hex(dev.uuid), (seen, dev.uuid)
    assert seen["pci_bus_id"].lower().endswith(dev.pci_bus_id.lower().split(":", 1)[-1]), (seen, dev.pci_bus_id)


def test_a_reduction_split_over_every_gpu_equals_one_gpu():
    import cupy as cp

    n_dev = cp.cuda.runtime.getDeviceCount()
    x = np.random.default_rng(0).random(10_000_003, dtype=np.float32)
    sums = []
    for d in range(n_dev):
        lo, hi = d * x.size // n_dev, (d + 1) * x.size // n_dev
        with cp.cuda.Device(d), cp.cuda.Stream(non_blocking=True) as stream:
            sums.append((d, stream, cp.asarray(x[lo:hi]).sum(dtype=cp.float64)))
    total = 0.0
    for d, stream, s in sums:
        with cp.cuda.Device(d):
            stream.synchronize()
            total += float(s.get())
    want = float(x.sum(dtype=np.float64))
    assert abs(total - want) <= 1e-9 * abs(want), (n_dev, total, want)
