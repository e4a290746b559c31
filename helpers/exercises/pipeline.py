"""An exercise whose answer is a host function that moves data and launches a kernel.

The check hands the learner's ``run_on_device(kernel, x)`` a spy that stands in for the
kernel: it records each launch's configuration and whether every argument was a device
array, then runs the real kernel, so copies and launches can be judged, not just numbers.
"""

from __future__ import annotations

import contextlib
import functools
import inspect
import textwrap
from dataclasses import dataclass
from typing import Callable, NamedTuple

import numpy as np

from .. import _numba
from ..errors import CourseError, LearnerError
from ..limits import WARP_SIZE
from .base import Exercise, fmt_pair
from .executor import LOCAL
from .launch import validate_launch
from .results import Graded


def _is_device_array(a) -> bool:
    # DeviceNDArray (GPU) and FakeCUDAArray (simulator) both have copy_to_host and are not ndarrays.
    return not isinstance(a, np.ndarray) and hasattr(a, "copy_to_host")


class Launch(NamedTuple):
    """One launch the spy saw: threads in all, whether each argument was a device array, and the
    threads per block (None when the student's process did not say)."""

    total: int
    on_device: list
    block: int | None = None
    aliased: bool = False  # the same memory passed as input and output


def _same_memory(a, b) -> bool:
    """Do two launch arguments share memory (d_x passed as both x and out)? Device arrays by their
    address; the simulator's arrays by the NumPy array they wrap."""
    if a is b:
        return True
    try:
        return a.__cuda_array_interface__["data"][0] == b.__cuda_array_interface__["data"][0]
    except (AttributeError, KeyError, TypeError):
        pass
    inner_a, inner_b = getattr(a, "_ary", a), getattr(b, "_ary", b)
    return isinstance(inner_a, np.ndarray) and isinstance(inner_b, np.ndarray) and np.shares_memory(inner_a, inner_b)


def _threads_in(dim) -> int:
    if isinstance(dim, (tuple, list)):
        return int(np.prod([int(d) for d in dim]))
    return int(dim)


SPARE_LIMIT = 1 << 16  # a launch past this many threads and twice n is judged by its shape before it runs


class _SpyKernel:
    """Stands in for a kernel: records each launch's configuration and argument kinds, then runs the real one."""

    def __init__(self, kernel):
        self._kernel = kernel
        self.launches = []  # Launch records

        self.running = False  # inside the real launch: copies made there are the launch's, not the learner's

    def __getitem__(self, config):
        if not isinstance(config, tuple) or len(config) < 2:
            raise LearnerError("launch the kernel as kernel[blocks, threads](d_x, d_out).")
        blocks, threads = config[0], config[1]

        def launch(*args):
            if len(args) != 2:
                raise LearnerError(f"the kernel takes 2 arguments (x, out), but it was launched with {len(args)}.")
            total = _threads_in(blocks) * _threads_in(threads)
            self.launches.append(
                Launch(total, [_is_device_array(a) for a in args], _threads_in(threads), _same_memory(*args))
            )
            if total > 0:  # a launch of 0 blocks is an error on a GPU; the grade reports it instead
                validate_launch((blocks, threads))  # what a GPU refuses: block and grid limits
                n = int(getattr(args[0], "size", 0) or 0)
                if total > max(SPARE_LIMIT, 2 * n) and (
                    problem := launch_shape_problem(f"for n = {n}", n, total, _threads_in(threads))
                ):
                    raise LearnerError(problem)  # so many idle threads that running them is the learner's mistake
                self.running = True
                try:
                    self._kernel[config](*args)
                finally:
                    self.running = False

        return launch

    def __call__(self, *args):
        raise LearnerError("a kernel needs a launch configuration: kernel[blocks, threads](d_x, d_out).")


@contextlib.contextmanager
def counting_copies(spy, copies):
    """Count explicit host<->device copies while the learner's function runs: cuda.to_device and a
    device array's copy_to_device ("in"), its copy_to_host ("out"). Restored on the way out."""
    from numba import cuda

    kind = type(cuda.device_array(1))
    saved = [(cuda, "to_device", "in"), (kind, "copy_to_device", "in"), (kind, "copy_to_host", "out")]
    originals = [getattr(owner, attr) for owner, attr, _ in saved]
    own = [attr in vars(owner) for owner, attr, _ in saved]  # inherited methods are deleted again, not pinned

    depth = [0]  # on a GPU cuda.to_device calls copy_to_device itself: count the outermost call only

    def counted(fn, direction):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            if not spy.running and depth[0] == 0:
                copies[direction] += 1
            depth[0] += 1
            try:
                return fn(*args, **kwargs)
            finally:
                depth[0] -= 1

        return wrapper

    try:
        for (owner, attr, direction), fn in zip(saved, originals):
            setattr(owner, attr, counted(fn, direction))
        yield copies
    finally:
        for (owner, attr, _), fn, mine in zip(saved, originals, own):
            if mine:
                setattr(owner, attr, fn)
            else:
                delattr(owner, attr)


def observe(fn, kernel, x):
    """Run the learner's function on ``x`` with a spy for ``kernel`` and counted copies: the launches
    ((threads, [argument on the device, ...]) each), the copies ({"in": n, "out": n}) and what it
    returned. Runs where the learner's function lives (in the grader's judged mode, the student's process)."""
    spy = _SpyKernel(kernel)
    copies = {"in": 0, "out": 0}
    with counting_copies(spy, copies):
        got = fn(spy, x)
    return spy.launches, copies, got


def launch_shape_problem(where, n, total, block) -> str | None:
    """The rules a learner's own launch is held to (see launch.judge_launch): whole warps, no spare block."""
    if not block:
        return None
    if block % WARP_SIZE:
        return (
            f"{where}, the launch uses blocks of {block} threads: a GPU runs threads in warps of {WARP_SIZE}, so "
            f"part of every warp sits idle; use a multiple of {WARP_SIZE} threads per block, such as 128 or 256."
        )
    blocks = total // block
    if (blocks - 1) * block >= n:
        return (
            f"{where}, the launch starts {blocks} blocks of {block} threads, more than the {-(-n // block)} that "
            "cover every element; the extra blocks only start up and do nothing: use (n + threads - 1) // threads "
            "blocks."
        )
    return None


def kernel_source(kernel) -> dict:
    """The course kernel a pipeline exercise hands to the learner, as source the student's process
    can compile (it has no access to helpers/problems)."""
    fn = _numba.python_function(kernel)
    return {"name": fn.__name__, "source": textwrap.dedent(inspect.getsource(fn))}


def copies_problem(where, name, copies) -> str | None:
    """Exactly one copy each way: x in, the result out."""
    cin, cout = copies["in"], copies["out"]
    if cin == 1 and cout == 1:
        return None
    said = f"{where}, {name} made {cin} cop{'y' if cin == 1 else 'ies'} to the device and {cout} back"
    if cin > 1 and cout > 1:
        return f"{said}: an extra round trip; copy x in once, launch on device arrays, and copy the result back once."
    if cin > 1:
        return (
            f"{said}; only x needs to go to the device: make the output with cuda.device_array_like(d_x), which "
            "copies nothing (sending zeros for an output the kernel overwrites is wasted traffic), and copy x once."
        )
    if cout > 1:
        return f"{said}; copy only the result back, once, after the launch: one round trip in all."
    return None


@dataclass(eq=False, repr=False)
class DevicePipelineExercise(Exercise):
    """The learner writes ``run_on_device(kernel, x)``: explicit copies, a device output, a launch,
    and a NumPy result. The grader passes a spy kernel so it can see what was launched on what."""

    reference: Callable = None
    kernel: object = None
    expect: Callable = None
    # 1024 and 2047: a multiple of every block size a learner picks, and one short of one (a spare block shows)
    sizes: tuple = (1, 31, 64, 200, 1024, 1500, 2047)

    def reference_answer(self):
        return self.reference

    def _solution_text(self) -> str:
        return textwrap.dedent(inspect.getsource(self.reference))

    def _grade(self, fn, rng, executor=LOCAL) -> Graded:
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
            try:
                launches, copies, got = executor.host_run("pipeline", fn, observe, self.kernel, x)
            except CourseError:  # LearnerError, or the watchdog stopping a loop
                raise
            except Exception as e:  # the learner's code may raise anything: one sentence names it
                raise LearnerError(
                    f"{name}(kernel, x) raised {type(e).__name__}: {e}; fix it and check again."
                ) from None
            where = f"for n = {n}"
            if not launches:
                return Graded(
                    "failed",
                    f"{where}, {name} never launched the kernel: call kernel[blocks, threads](d_x, d_out).",
                )
            if len(launches) > 1:
                return Graded(
                    "failed",
                    f"{where}, {name} launched the kernel {len(launches)} times; one launch computes the result, "
                    "every other one is wasted GPU time: launch it once.",
                )
            for total, on_device, block, aliased in launches:
                if aliased:
                    return Graded(
                        "failed",
                        f"{where}, the kernel got the same device array as its input and its output, so it wrote "
                        "the result over its input (in place): allocate the output with cuda.device_array_like(d_x) "
                        "and pass kernel[blocks, threads](d_x, d_out), as the exercise asks.",
                    )
                if not all(on_device):
                    return Graded(
                        "failed",
                        f"{where}, the kernel got a NumPy array: Numba then copies it to the device and back "
                        "implicitly on every launch. Pass device arrays: cuda.to_device(x) for the input, "
                        "cuda.device_array_like(...) for the output.",
                    )
                if total < n:
                    return Graded(
                        "failed",
                        f"{where}, the launch starts only {total} thread{'s' if total != 1 else ''} for "
                        f"{n} element{'s' if n != 1 else ''}, so the last "
                        "elements are never computed: round the number of blocks up, (n + threads - 1) // threads.",
                    )
                if shape := launch_shape_problem(where, n, total, block):
                    return Graded("failed", shape)
            if _is_device_array(got):
                return Graded(
                    "failed",
                    f"{name} returned a device array: bring the result back to the host with "
                    ".copy_to_host() and return that NumPy array.",
                )
            if not isinstance(got, np.ndarray):
                return Graded("failed", f"{name} should return a NumPy array, but returned {type(got).__name__}.")
            if got.dtype != x.dtype:
                return Graded(
                    "failed",
                    f"the result has dtype {got.dtype} but x is {x.dtype}: cuda.device_array(n) defaults to "
                    "float64; use cuda.device_array_like(d_x) or pass dtype=x.dtype.",
                )
            want = self.expect(x_before)
            if got.shape != want.shape:
                return Graded(
                    "failed",
                    f"{where}, the result has shape {got.shape} but should have shape {want.shape}.",
                )
            bad = np.flatnonzero(~np.isclose(got, want, rtol=1e-6, atol=1e-6))
            if bad.size:
                i = int(bad[0])
                shown = fmt_pair(got[i], want[i])
                return Graded(
                    "failed",
                    f"{where}, element {i} is {shown[0]} but should be {shown[1]} "
                    f"({bad.size} of {n} wrong): "
                    "did you copy the output (not the input) back?",
                )
            if not np.array_equal(x, x_before):
                return Graded("failed", f"{name} changed the input array x; leave the host input as it was.")
            if problem := copies_problem(where, name, copies):
                return Graded("failed", problem)
        return Graded(
            "passed",
            f"correct for n = {', '.join(map(str, self.sizes))}: one copy in, the kernel on device arrays, "
            "one copy out.",
            None,
            {"launches": len(launches)},
        )
