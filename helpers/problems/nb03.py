"""Notebook 03 - memory: host and device arrays, implicit copies, events, bandwidth.

Every exercise here runs in CPU mode too: the questions are about what the code *does*, and the
one kernel exercise checks which arrays the learner hands to the kernel, not how fast it runs.
"""

from __future__ import annotations

import functools
import inspect
import textwrap
from dataclasses import dataclass
from typing import Callable

import numpy as np
from numba import cuda

from helpers import _numba
from helpers.errors import LearnerError
from helpers.exercises import Exercise, FunctionExercise, Ints, ValueExercise, register

# ----------------------------------------------------------------------------- value exercises

right_allocation = ValueExercise(
    prompt=("A kernel writes every element of its output. d_x = cuda.to_device(x) holds its float32 input. "
            "Which output allocation is best? 1: cuda.to_device(np.zeros_like(x))  2: cuda.device_array_like(d_x)  "
            "3: cuda.device_array(x.size)  4: np.zeros_like(x). Answer with the number."),
    answer=2,
    explanation="device_array_like(d_x) allocates device memory of the right shape and dtype and copies nothing; "
                "the kernel overwrites every element, so its undefined starting contents do not matter.",
    mistakes={1: "it works, but it sends n zeros over the bus for nothing: the kernel overwrites every element anyway.",
              3: "cuda.device_array defaults to float64: twice the memory and the traffic, and a different dtype from x.",
              4: "that is a host (NumPy) array: Numba would copy it to the device and back on every launch."},
    hints=("Which option copies nothing and gets the shape and the dtype right?",
           "Copying zeros is wasted work when every element is overwritten; check the default dtype of cuda.device_array."),
)

implicit_copies = ValueExercise(
    prompt=("x and out are NumPy arrays. How many host<->device copies does this loop make?\n"
            "    for step in range(10):\n"
            "        scale[blocks, threads](x, np.float32(2.0), out)"),
    answer=40,
    explanation="Each launch copies both NumPy arrays to the device and both back (Numba cannot know which ones "
                "the kernel wrote): 4 copies per launch, 10 launches. The scalar is passed by value, not copied as an array.",
    mistakes={20: "Numba copies every NumPy argument back after the launch, not only out: it cannot tell which arrays the kernel wrote.",
              4: "the copies happen on every launch: Numba does not keep arrays on the device between launches.",
              2: "the copies happen on every launch, and in both directions for every NumPy argument.",
              60: "the scalar np.float32(2.0) is passed by value with the launch, not copied like an array.",
              30: "each NumPy argument is copied both ways; the scalar is not copied at all."},
    hints=("Count per launch: which arguments are arrays, and in which directions does Numba copy them?",
           "Two NumPy arrays, each copied in before and out after every launch."),
)

event_order = ValueExercise(
    prompt=("Put these steps in the right order to time one kernel with CUDA events, as a tuple of capital letters, "
            "e.g. ('A', 'B', 'C', 'D', 'E').  A: end.synchronize()  B: start.record()  C: kernel[blocks, threads](d_x, d_out)  "
            "D: end.record()  E: ms = cuda.event_elapsed_time(start, end)"),
    answer=("B", "C", "D", "A", "E"),
    explanation="Record start, queue the kernel, record end, wait until the GPU has reached end, then read the time.",
    mistakes={("B", "C", "D", "E", "A"): "the elapsed time is read before end.synchronize(): the GPU may not have reached `end` yet.",
              ("B", "C", "A", "D", "E"): "end.synchronize() before end.record() waits for nothing: record the event first, then wait for it.",
              ("B", "D", "C", "A", "E"): "end is recorded before the kernel is queued, so the time covers nothing.",
              ("C", "B", "D", "A", "E"): "start is recorded after the kernel was queued, so the kernel may be missed."},
    hints=("Events are stamped in the GPU's queue, in the order you record them around the launch.",
           "record, launch, record, then wait for the last event before asking for the time."),
)

# ----------------------------------------------------------------------------- bandwidth


@dataclass(eq=False, repr=False)
class ApproxFunctionExercise(FunctionExercise):
    """A FunctionExercise whose float results may differ from the reference by rounding.

    The engine compares results exactly; ``nbytes / ms / 1e6`` and ``nbytes / (ms / 1000) / 1e9`` differ
    in the last bit. So the learner's result is snapped to the reference's (or to a known mistake's)
    when within ``rtol``, and the engine's exact comparison then does the rest.
    """

    rtol: float = 1e-9

    def _grade(self, fn, rng):
        if callable(fn) and not _numba.is_cuda_function(fn):
            fn = _snapping(fn, [self.reference, *(m for m, _ in self.mistakes)], self.rtol)
        return super()._grade(fn, rng)


def _snapping(fn, candidates, rtol):
    @functools.wraps(fn)
    def snapped(*args):
        got = fn(*args)
        if isinstance(got, (float, np.floating)):
            for cand in candidates:
                want = cand(*args)
                if abs(float(got) - want) <= rtol * abs(want):
                    return want
        return got

    return snapped


@dataclass(frozen=True)
class _Millis:
    """A duration in ms with three decimals, from 0.001 to ``high``."""

    high: float = 100.0

    def draw(self, rng):
        return max(0.001, round(float(rng.uniform(0.001, self.high)), 3))


def _bandwidth_gbs(nbytes, ms):
    return nbytes / (ms * 1e-3) / 1e9


bandwidth_gbs = ApproxFunctionExercise(
    prompt="Return the bandwidth in GB/s (1 GB = 10**9 bytes) of moving nbytes bytes in ms milliseconds.",
    reference=_bandwidth_gbs, inputs={"nbytes": Ints(1, 10**10), "ms": _Millis()},
    edge_cases=((64_000_000, 0.032), (400_000_000, 16.0), (1_000_000_000, 1000.0), (4, 0.001)),
    mistakes=((lambda nbytes, ms: nbytes / ms / 1e9, "ms is in milliseconds: convert it to seconds (ms / 1000) before dividing."),
              (lambda nbytes, ms: 8 * nbytes / (ms * 1e-3) / 1e9, "that is gigabits per second: bandwidth here counts bytes, not bits."),
              (lambda nbytes, ms: nbytes / (ms * 1e-3) / 2**30, "that is GiB/s (2**30 bytes); a GB here is 10**9 bytes."),
              (lambda nbytes, ms: nbytes / (ms * 1e-3), "that is bytes per second: divide by 10**9 for GB/s.")),
    hints=("Bandwidth is bytes per second, and ms is in milliseconds.",
           "nbytes / (ms / 1000) is bytes per second; divide that by 1e9 for GB/s."),
)

# ----------------------------------------------------------------------------- device pipeline


@cuda.jit
def _twice_plus_one(x, out):
    # The kernel the grader hands to the learner's function (through a spy that watches the launch).
    i = cuda.grid(1)
    if i < out.size:
        out[i] = 2 * x[i] + 1


def _is_device_array(a) -> bool:
    # DeviceNDArray (GPU) and FakeCUDAArray (simulator) both have copy_to_host and are not ndarrays.
    return not isinstance(a, np.ndarray) and hasattr(a, "copy_to_host")


def _threads_in(dim) -> int:
    if isinstance(dim, (tuple, list)):
        return int(np.prod([int(d) for d in dim]))
    return int(dim)


class _SpyKernel:
    """Stands in for a kernel: records each launch's configuration and argument kinds, then runs the real one."""

    def __init__(self, kernel):
        self._kernel = kernel
        self.launches = []  # (total threads, [argument is a device array, ...])

    def __getitem__(self, config):
        if not isinstance(config, tuple) or len(config) < 2:
            raise LearnerError("launch the kernel as kernel[blocks, threads](d_x, d_out).")
        blocks, threads = config[0], config[1]

        def launch(*args):
            if len(args) != 2:
                raise LearnerError(f"the kernel takes 2 arguments (x, out), but it was launched with {len(args)}.")
            total = _threads_in(blocks) * _threads_in(threads)
            self.launches.append((total, [_is_device_array(a) for a in args]))
            if total > 0:  # a launch of 0 blocks is an error on a GPU; the grade reports it instead
                self._kernel[config](*args)

        return launch

    def __call__(self, *args):
        raise LearnerError("a kernel needs a launch configuration: kernel[blocks, threads](d_x, d_out).")


@dataclass(eq=False, repr=False)
class DevicePipelineExercise(Exercise):
    """The learner writes ``run_on_device(kernel, x)``: explicit copies, a device output, a launch,
    and a NumPy result. The grader passes a spy kernel so it can see what was launched on what."""

    reference: Callable = None
    kernel: object = None
    expect: Callable = None
    sizes: tuple = (1, 31, 64, 200)

    def reference_answer(self):
        return self.reference

    def _solution_text(self) -> str:
        return textwrap.dedent(inspect.getsource(self.reference))

    def _grade(self, fn, rng):
        if _numba.is_cuda_function(fn):
            raise LearnerError("run_on_device is a plain Python function that launches the kernel: remove @cuda.jit.")
        if not callable(fn):
            raise LearnerError(f"pass your function itself, e.g. check(run_on_device), not {fn!r}.")
        name = getattr(fn, "__name__", "your function")
        params = [p for p in inspect.signature(fn).parameters.values() if p.default is p.empty]
        if len(params) != 2:
            raise LearnerError(f"{name} should take 2 arguments (kernel, x), not {len(params)}.")
        for n in self.sizes:
            x = rng.uniform(-4, 4, n).astype(np.float32)
            x_before = x.copy()
            spy = _SpyKernel(self.kernel)
            try:
                got = fn(spy, x)
            except LearnerError:
                raise
            except Exception as e:  # noqa: BLE001 - learner code
                raise LearnerError(f"{name}(kernel, x) raised {type(e).__name__}: {e}; fix it and check again.") from None
            where = f"for n = {n}"
            if not spy.launches:
                return "failed", f"{where}, {name} never launched the kernel: call kernel[blocks, threads](d_x, d_out).", None, {}
            for total, on_device in spy.launches:
                if not all(on_device):
                    return "failed", (f"{where}, the kernel got a NumPy array: Numba then copies it to the device and back "
                                      "implicitly on every launch. Pass device arrays: cuda.to_device(x) for the input, "
                                      "cuda.device_array_like(...) for the output."), None, {}
                if total < n:
                    return "failed", (f"{where}, the launch starts only {total} thread{'s' if total != 1 else ''} for {n} element{'s' if n != 1 else ''}, so the last "
                                      "elements are never computed: round the number of blocks up, (n + threads - 1) // threads."), None, {}
            if _is_device_array(got):
                return "failed", (f"{name} returned a device array: bring the result back to the host with "
                                  ".copy_to_host() and return that NumPy array."), None, {}
            if not isinstance(got, np.ndarray):
                return "failed", f"{name} should return a NumPy array, but returned {type(got).__name__}.", None, {}
            if got.dtype != x.dtype:
                return "failed", (f"the result has dtype {got.dtype} but x is {x.dtype}: cuda.device_array(n) defaults to "
                                  "float64; use cuda.device_array_like(d_x) or pass dtype=x.dtype."), None, {}
            want = self.expect(x_before)
            if got.shape != want.shape:
                return "failed", f"{where}, the result has shape {got.shape} but should have shape {want.shape}.", None, {}
            bad = np.flatnonzero(~np.isclose(got, want, rtol=1e-6, atol=1e-6))
            if bad.size:
                i = int(bad[0])
                return "failed", (f"{where}, element {i} is {float(got[i]):.6g} but should be {float(want[i]):.6g} ({bad.size} of {n} wrong): "
                                  "did you copy the output (not the input) back?"), None, {}
            if not np.array_equal(x, x_before):
                return "failed", f"{name} changed the input array x; leave the host input as it was.", None, {}
        return "passed", (f"correct for n = {', '.join(map(str, self.sizes))}: one copy in, the kernel on device arrays, "
                          "one copy out."), None, {"launches": len(spy.launches)}


def _run_on_device(kernel, x):
    d_x = cuda.to_device(x)                  # one copy in
    d_out = cuda.device_array_like(d_x)      # output on the device: same shape and dtype, no copy
    threads = 128
    blocks = (x.size + threads - 1) // threads
    kernel[blocks, threads](d_x, d_out)      # device arrays only: no implicit copies
    return d_out.copy_to_host()              # one copy out


run_on_device = DevicePipelineExercise(
    prompt=("Write run_on_device(kernel, x): copy x to the device, allocate the output there, launch "
            "kernel[blocks, threads](d_x, d_out) over every element, and return the result as a NumPy array."),
    reference=_run_on_device, kernel=_twice_plus_one, expect=lambda x: 2 * x + np.float32(1),
    hints=("cuda.to_device(x) copies the input; cuda.device_array_like(d_x) makes the output without a copy.",
           "Round the number of blocks up so that every element gets a thread.",
           "The kernel writes into device memory: finish with return d_out.copy_to_host()."),
)

EXERCISES = register(__name__, globals())
