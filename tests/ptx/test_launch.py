"""helpers.ptx.launch: in CPU mode a notebook's own ``kernel[grid, block](...)`` runs from the kernel's PTX on
the interpreter and leaves the arrays as Numba's simulator leaves them; a launch it cannot run goes to the
simulator with one sentence, once."""

import io
import math

import numpy as np
import pytest
from numba import cuda

from helpers.errors import LearnerError, UnsupportedByTracer
from helpers.ptx import launch, numba_run

RNG = np.random.default_rng(33)


@cuda.jit
def saxpy(a, x, y, out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = a * x[i] + y[i]


@cuda.jit
def brighten(img, out, by):
    r, c = cuda.grid(2)
    if r < img.shape[0] and c < img.shape[1]:
        out[r, c] = min(img[r, c] + by, 255)


@cuda.jit
def histogram(x, bins):
    i = cuda.grid(1)
    if i < x.size:
        cuda.atomic.add(bins, x[i] % bins.size, 1)


@cuda.jit(device=True)
def hypot(a, b):
    return math.sqrt(a * a + b * b)


@cuda.jit
def lengths(x, y, out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = hypot(x[i], y[i])


@cuda.jit
def block_sums(x, out):
    tile = cuda.shared.array(64, np.float32)
    scratch = cuda.local.array(2, np.float32)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    scratch[0] = x[i] if i < x.size else 0
    tile[t] = scratch[0]
    cuda.syncthreads()
    step = 32
    while step > 0:
        if t < step:
            tile[t] += tile[t + step]
        cuda.syncthreads()
        step //= 2
    if t == 0:
        out[cuda.blockIdx.x] = tile[0]


@cuda.jit
def unguarded(out):
    i = cuda.grid(1)
    out[i] = 1.0


@cuda.jit
def says(out):
    i = cuda.grid(1)
    if i < 2:
        print("thread", i, "sees", out[i])


@cuda.jit
def raises(out):
    i = cuda.grid(1)
    if i == 5:
        raise ValueError("thread 5 refuses")
    out[i] = i


@cuda.jit
def grid_wide(out):
    g = cuda.cg.this_grid()
    i = cuda.grid(1)
    out[i] = 1
    g.sync()


@pytest.fixture(autouse=True, scope="module")
def numba_compiler():
    try:
        numba_run.compile(saxpy, (np.float32(1), *[np.zeros(4, np.float32)] * 3))
    except UnsupportedByTracer as e:  # no nvidia-nvvm wheel (macOS): the package root installs no launcher there
        pytest.skip(f"Numba's compiler cannot run here: {e}")


@pytest.fixture
def said():
    """A launcher of this test's own, whose sentences are kept; the package's is put back after."""
    sentences = []
    previous = launch.install(launch.Launcher(say=sentences.append))
    yield sentences
    launch.install(previous)


def simulated(kernel, grid, block, *args):
    """The same launch on Numba's simulator alone."""
    previous = launch.install(None)
    try:
        kernel[grid, block](*args)
    finally:
        launch.install(previous)


def both(kernel, grid, block, *args):
    """(arguments after the launch through the installed launcher, after the simulator's)."""
    a1 = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    a2 = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    kernel[grid, block](*a1)
    simulated(kernel, grid, block, *a2)
    return a1, a2


def test_cpu_mode_routes_every_host_launch_to_one_launcher():
    previous = launch.install(None)
    launch.install(previous)
    assert isinstance(previous, launch.Launcher)


@pytest.mark.parametrize(
    "kernel, grid, block, make",
    [
        (
            saxpy,
            8,
            128,
            lambda: (
                np.float32(2.5),
                RNG.random(1000, np.float32),
                RNG.random(1000, np.float32),
                np.zeros(1000, np.float32),
            ),
        ),
        (
            brighten,
            (3, 4),
            (16, 16),
            lambda: (RNG.integers(0, 255, (40, 50)).astype(np.int32), np.zeros((40, 50), np.int32), 30),
        ),
        (histogram, 4, 256, lambda: (RNG.integers(0, 1000, 1000).astype(np.int32), np.zeros(16, np.int32))),
        (lengths, 2, 64, lambda: (RNG.random(100), RNG.random(100), np.zeros(100))),
        (block_sums, 5, 64, lambda: (RNG.random(300, np.float32), np.zeros(5, np.float32))),
    ],
    ids=["elementwise", "2-D", "atomics", "device function", "shared, local and barriers"],
)
def test_a_launch_leaves_the_arrays_the_simulator_leaves(said, kernel, grid, block, make):
    ptx, sim = both(kernel, grid, block, *make())
    for a, b in zip(ptx, sim):
        np.testing.assert_allclose(a, b, rtol=1e-6)
    assert said == []  # nothing went to the simulator


def test_device_arrays_keep_what_several_launches_in_a_row_wrote(said):
    x = RNG.random(500, np.float32)
    d_x, d_out = cuda.to_device(x), cuda.device_array_like(x)
    saxpy[4, 128](np.float32(2), d_x, d_x, d_out)  # out = 3x
    saxpy[4, 128](np.float32(1), d_out, d_out, d_x)  # x = 6x, through the same device arrays
    np.testing.assert_allclose(d_x.copy_to_host(), 6 * x, rtol=1e-6)
    assert said == []


def test_an_out_of_bounds_write_raises_indexerror_as_the_simulator_does(said):
    out = np.zeros(1000, np.float32)
    with pytest.raises(
        IndexError,
        match=r"tid=\[232, 0, 0\] ctaid=\[3, 0, 0\]: index 1000 is out of bounds "
        r"for axis 0 with size 1000 \(out, line \d+\)",
    ):
        unguarded[4, 256](out)
    assert not out.any()  # a NumPy argument is copied back only after a launch that finished, as the simulator does
    with pytest.raises(IndexError, match=r"index 10\d\d is out of bounds for axis 0 with size 1000"):
        simulated(unguarded, 4, 256, np.zeros(1000, np.float32))


def test_print_is_cudas_printf_written_after_the_launch():
    lines = io.StringIO()
    previous = launch.install(launch.Launcher(out=lines))
    try:
        says[1, 32](np.array([1.5, 2.0]))
    finally:
        launch.install(previous)
    assert lines.getvalue() == "thread 0 sees 1.500000\nthread 1 sees 2.000000\n"  # the simulator: Python's 1.5


def test_a_kernel_that_raises_runs_on_the_simulator_and_says_why_once(said):
    for _ in range(2):
        with pytest.raises(ValueError, match="thread 5 refuses"):
            raises[1, 32](np.zeros(32))
    assert said == [
        "CPU mode: raises runs on Numba's simulator, about 0.4 ms a thread, because it raises exceptions, which a "
        "GPU reports only in a debug=True build."
    ]


def test_a_kernel_the_interpreter_cannot_run_falls_back_with_its_instruction_named(said):
    out = np.zeros(64, np.int32)
    grid_wide[1, 64](out)
    assert (out == 1).all()  # the simulator ran it, from arrays as they were
    assert len(said) == 1 and said[0].startswith(
        "CPU mode: grid_wide runs on Numba's simulator, about 0.4 ms a "
        "thread, because the PTX interpreter does not run it ("
    )


def test_arguments_the_interpreter_does_not_take_go_to_the_simulator(said):
    x = RNG.random((20, 20), np.float32)
    out = np.zeros((20, 20), np.float32)
    brighten[(2, 2), (16, 16)](x.T, out, np.float32(1))  # F-ordered: Numba compiles another layout
    np.testing.assert_allclose(out, np.minimum(x.T + 1, 255))
    assert said == [
        "CPU mode: brighten runs on Numba's simulator, about 0.4 ms a thread, because argument 0 is not "
        "a C-contiguous array."
    ]


def test_a_debug_build_runs_on_the_simulator_which_reports_its_exceptions(said):
    cuda.jit(debug=True, opt=False)(saxpy.py_func)[1, 32](np.float32(1), *[np.zeros(32)] * 3)
    assert said and "debug=True" in said[0]


def test_a_launch_a_gpu_refuses_is_refused_in_one_sentence(said):
    with pytest.raises(Exception, match="2,048 threads per block|2048 threads per block"):
        saxpy[1, 2048](np.float32(1), *[np.zeros(32)] * 3)


def test_a_large_launch_is_not_sent_to_the_simulator_for_minutes(said):
    """At the text's sizes a fallback would run for many minutes: the launch is refused in one sentence instead,
    the arrays untouched; the same kernel at a small size still runs on the simulator."""
    out = np.zeros(2**20)
    with pytest.raises(LearnerError, match=r"^CPU mode: raises would run on Numba's simulator because it raises "):
        raises[4096, 256](out)
    assert not out.any() and said == []
    with pytest.raises(LearnerError, match=r"its 1,048,576 threads would take about 7 minutes there .*at most 65,536"):
        raises[4096, 256](out)
    with pytest.raises(ValueError, match="thread 5 refuses"):
        raises[1, 32](np.zeros(32))
    assert len(said) == 1
