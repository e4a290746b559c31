"""helpers._numba's routing of simulator launches: ``import helpers`` never imports Numba's CUDA module to
install it, the simulator's kernels launch through whatever was routed, and device arrays are read as the
NumPy arrays they hold."""

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
from numba import cuda

from helpers import _numba

ROOT = Path(__file__).resolve().parents[1]

_BEFORE_IMPORT = r"""
import os, sys
sys.path.insert(0, ROOT)
import helpers
from helpers import _numba
assert "numba.cuda" not in sys.modules, "import helpers imported numba.cuda"
seen = []
previous = _numba.route_simulator_launches(lambda k, g, b, shared, args, simulate: seen.append((g, b, shared)))
assert type(previous).__name__ == "Launcher", previous  # the package root's, waiting for the simulator
from numba import cuda
import numpy as np

@cuda.jit
def fill(a):
    a[cuda.grid(1)] = 1

a = np.zeros(64)
fill[2, 32, 0, 128](a)
assert seen == [((2, 1, 1), (32, 1, 1), 128)] and not a.any(), seen  # routed, and the stand-in ran nothing
_numba.route_simulator_launches(None)
fill[2, 32](a)
assert a.sum() == 64  # the simulator's own launch again
print("ROUTED-OK")
"""


def test_routing_waits_for_the_simulator_to_be_imported():
    env = dict(os.environ, COURSE_MODE="cpu")
    code = _BEFORE_IMPORT.replace("ROOT", repr(str(ROOT)))
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0 and "ROUTED-OK" in done.stdout, done.stdout + done.stderr


def test_device_functions_and_calls_inside_a_simulated_kernel_stay_the_simulators():
    seen = []

    @cuda.jit(device=True)
    def one():
        return 1

    @cuda.jit
    def uses(a):
        a[cuda.grid(1)] = one()

    previous = _numba.route_simulator_launches(lambda k, g, b, shared, args, simulate: seen.append(g) or simulate())
    try:
        a = np.zeros(8)
        uses[1, 8](a)
    finally:
        _numba.route_simulator_launches(previous)
    assert seen == [(1, 1, 1)] and a.sum() == 8  # one launch routed; the device function ran inside it


def test_the_simulator_array_is_found_inside_a_device_array():
    held = np.arange(3)
    d = cuda.to_device(held)
    assert np.array_equal(_numba.simulator_array(d), held)
    assert _numba.simulator_array(held) is None and _numba.simulator_array(3) is None
    assert _numba.simulator_kernel_options(cuda.jit(debug=True, opt=False)(lambda a: None))["debug"]
