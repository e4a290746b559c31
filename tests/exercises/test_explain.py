"""The sentences that explain a kernel's wrong outputs (helpers/exercises/explain.py), by cause: floor
division is not hard-coding, a 1-D index in a 2-D launch is named with the 2-D formula, and a
grid-stride loop that stops early is told its bound, not the grid."""

import numpy as np
import pytest
from numba import cuda

from helpers import exercises as E
from helpers.exercises import explain

pytestmark = pytest.mark.usefixtures("progress_file")  # tests/conftest.py

QUARTER = E.KernelExercise(
    args=(E.In("x", low=0.0, high=1.0), E.Out("out")),
    expect=lambda x: x / np.float32(4),
    launch=E.per_element(32),
    hints=("x[i] / 4",),
)
HALVES = E.KernelExercise(
    args=(E.In("x", low=0.0, high=4.0), E.Out("out")),
    expect=lambda x: x * np.float32(1.5),
    launch=E.per_element(32),
    hints=("x[i] * 3 / 2",),
)
SQUARE = E.KernelExercise(
    args=(E.In("x"), E.Out("out")),
    expect=lambda x: x * x,
    launch=E.fixed(2, 32),
    sizes=lambda rng, threads: [300, 40],  # past the loop's cap of 128, and within it
    hints=("a grid-stride loop",),
)
E.register("tests.explain", {"quarter": QUARTER, "halves": HALVES, "square": SQUARE})


@cuda.jit
def quarter_floored(x, out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = x[i] // 4  # every x in [0, 1) floors to 0


@cuda.jit
def halves_floored(x, out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = x[i] * 3 // 2


@cuda.jit
def quarter_constant(x, out):
    i = cuda.grid(1)
    half = i // 2  # index arithmetic, not the cause
    if i < out.size:
        out[i] = 0.0 * x[half]


@cuda.jit
def square_capped(x, out):
    for i in range(cuda.grid(1), min(x.size, 4 * cuda.blockDim.x), cuda.gridsize(1)):
        out[i] = x[i] * x[i]


@cuda.jit
def square_no_loop(x, out):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = x[i] * x[i]


def test_floor_division_making_every_value_0_is_not_called_hard_coded():
    r = QUARTER.grade(quarter_floored, seed=3)
    assert r.status == "failed" and "hard-coded" not in r.message, r.line()
    assert "every value of out is 0 because `x[i] // 4` is floor (integer) division" in r.message
    assert "divide with / instead" in r.message


def test_floor_division_rounding_down_is_named_not_an_integer_type():
    r = HALVES.grade(halves_floored, seed=3)
    assert r.status == "failed", r.line()
    assert "rounded down to whole numbers by the floor (integer) division `x[i] * 3 // 2`" in r.message
    assert "integer type" not in r.message


def test_floor_division_of_an_index_is_not_blamed():
    r = QUARTER.grade(quarter_constant, seed=3)
    assert r.status == "failed" and "hard-coded" in r.message and "floor" not in r.message, r.line()


def test_a_capped_grid_stride_loop_is_told_its_bound():
    r = SQUARE.grade(square_capped, seed=3)
    assert r.status == "failed", r.line()
    assert "your loop stops at `min(x.size, 4 * cuda.blockDim.x)` (128 here, 4 blocks of 32 threads' worth)" in (
        r.message
    )
    assert "grid large enough" not in r.message and "global index" not in r.message


def test_a_fixed_grid_without_a_loop_is_still_told_to_loop():
    r = SQUARE.grade(square_no_loop, seed=3)
    assert "the grid has only 64 threads" in r.message and "grid-stride loop" in r.message, r.line()


ONE_D = "def k(img, out):\n    i = cuda.grid(1)\n    out[i // 9, i % 9] = img[i // 9, i % 9]\n"


def test_a_1d_index_in_a_2d_launch_is_named_with_the_2d_formula():
    msg = explain.unwritten_message("out", np.arange(24, 90), 90, (2, 2), (8, 8), "per_element", src=ONE_D)
    assert "`cuda.grid(1)` is the 1-D index, but this launch is a 2-D grid (2x2 blocks of 8x8 threads)" in msg
    assert "col, row = cuda.grid(2)" in msg and "row = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y" in msg
    assert "cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x" not in msg  # not the 1-D formula again


def test_a_1d_index_in_a_1d_launch_is_not_blamed():
    msg = explain.unwritten_message("out", np.arange(32, 90), 90, (3,), (32,), "per_element", src=ONE_D)
    assert "1-D index" not in msg and "only the first block" in msg


def test_wrong_values_from_a_1d_index_in_a_2d_launch_name_it_too():
    exp = np.arange(16, dtype=np.float32).reshape(4, 4) + 0.5
    got = exp.copy()
    got[2:] = got[:2]  # the blocks along y repeated the first ones' rows
    cases = [{"n": 16, "grid": (2, 2), "block": (2, 2), "inputs": {}, "exp": [exp], "got": [got]}]
    src = (
        "def k(img, out):\n"
        "    col = cuda.blockIdx.x * 2 + cuda.threadIdx.x\n"
        "    row = cuda.blockIdx.x * 2 + cuda.threadIdx.y\n"
    )
    msg = explain.wrong_message(QUARTER, "out", 0, 0, cases, np.arange(8, 16), np.array([], int), src)
    assert "`row = cuda.blockIdx.x * 2 + cuda.threadIdx.y` is the 1-D index" in msg
