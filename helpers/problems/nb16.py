"""Notebook 16 - streams, events, pinned memory and CUDA Graphs.

The first two answers are host functions that drive Numba: the check hands them a spy for the kernel and
records, through helpers/exercises/streams.py, every stream, event, copy, launch and synchronisation they
make, so the rules read what was queued where, in CPU mode (where the simulator runs everything at once
and its events have no clock) as on a GPU. The third captures CuPy launches into a CUDA graph: the
check replays the graph and reads the data (helpers/standins/cupy_streams.py models capture in CPU mode).
"""

from __future__ import annotations

import numba
import numpy as np
from numba import cuda

from helpers import env
from helpers.exercises import CallExercise, register
from helpers.exercises.base import fmt
from helpers.exercises.pipeline import kernel_source, launch_shape_problem
from helpers.exercises.stream_runs import observed
from helpers.exercises.streams import finished_after, timing_problem, unordered_reads, where


@cuda.jit
def _twice_plus_one(x, out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = numba.float32(2.0) * x[i] + numba.float32(1.0)  # float32 arithmetic, as the array


def _expect(x):
    return 2.0 * x + 1.0


def _KERNEL():  # noqa: N802 - the course's kernel, here and as the source the judge's worker compiles
    return _twice_plus_one, kernel_source(_twice_plus_one)


# ----------------------------------------------------------------------------- 1. timing one launch with events


def _time_kernel(kernel, d_x, d_out, stream):
    threads = 128
    blocks = (d_x.size + threads - 1) // threads
    start, end = cuda.event(), cuda.event()
    start.record(stream)
    kernel[blocks, threads, stream](d_x, d_out)
    end.record(stream)
    end.synchronize()  # the host waits until the GPU has passed `end`
    return start.elapsed_time(end)


def _judge_time(fn, rng, executor):
    name = getattr(fn, "__name__", "time_kernel")
    # an exact multiple of the block (a spare block shows), one past it (a missing block shows), and one drawn
    sizes = [384, 257, int(rng.integers(300, 600))] if not env.on_gpu() else [1 << 20, (1 << 16) + 1, 3000]
    for n in sizes:
        x = rng.uniform(-4, 4, n).astype(np.float32)
        run = observed(executor, fn, "time", _KERNEL(), x=x)  # in the judge's worker for a student's function
        if problem := timing_problem(run["log"], run["got"], name):
            return False, f"for n = {n}, {problem}"
        if not np.array_equal(run["x"], x):
            return False, f"{name} changed d_x, the kernel's input: leave it as it was."
        if not np.allclose(run["out"], _expect(x), rtol=1e-6, atol=1e-6):
            return False, f"for n = {n}, the kernel's output is wrong: launch it on d_x and d_out, in that order."
    how = "modelled in CPU mode, where the simulator has no clock" if not env.on_gpu() else "read on the GPU"
    return True, f"start, the launch and end on one stream, end waited for, and elapsed_time returned ({how})."


time_kernel = CallExercise(
    prompt="Write time_kernel(kernel, d_x, d_out, stream): launch kernel[blocks, threads, stream](d_x, d_out) once "
    "(one thread per element, 128 per block) and return the kernel's time in ms measured with two CUDA events "
    "recorded on that stream around the launch.",
    reference=_time_kernel,
    judge=_judge_time,
    remote_ok=True,  # judged grading: the judge's worker runs the function again from its description (stream_runs.py)
    hints=(
        "start, end = cuda.event(), cuda.event(); events are stamped in the stream's queue: record them on `stream`.",
        "start.record(stream); launch; end.record(stream); end.synchronize(); return start.elapsed_time(end)",
    ),
)

# ----------------------------------------------------------------------------- 2. a chunked pipeline over streams


def _pipeline(kernel, x, n_streams):
    threads = 128
    x_pinned = cuda.pinned_array_like(x)  # page-locked: the copies can run asynchronously
    x_pinned[:] = x
    out = cuda.pinned_array_like(x)
    streams = [cuda.stream() for _ in range(n_streams)]
    for s, part in zip(streams, np.array_split(np.arange(x.size), n_streams)):
        a, b = int(part[0]), int(part[-1]) + 1
        d_in = cuda.to_device(x_pinned[a:b], stream=s)
        d_out = cuda.device_array(b - a, x.dtype, stream=s)
        kernel[(b - a + threads - 1) // threads, threads, s](d_in, d_out)
        d_out.copy_to_host(out[a:b], stream=s)
    for s in streams:
        s.synchronize()  # every chunk is back before the result is used
    return out


def _copy_problem(log, kind, k) -> str | None:
    copies = log.of(kind)
    way = "to the GPU" if kind == "h2d" else "back to the host"
    if len(copies) != k:
        return (
            f"{len(copies)} cop{'y' if len(copies) == 1 else 'ies'} went {way} for {k} chunks: copy each chunk "
            "on its own stream, so one chunk's copy overlaps another chunk's kernel."
        )
    for _, op in copies:
        if op.stream == "unstated":
            return (
                f"a copy {way} was made without stream=, so Numba queues it on the default stream (or the array's "
                "own): pass stream=s, the chunk's stream, to every copy."
            )
        if op.stream in ("default", "another stream"):
            return f"a copy {way} went to {where(op.stream)}: pass stream=s, the chunk's cuda.stream()."
        if not op.pinned:
            side = "x" if kind == "h2d" else "the result"
            return (
                f"a copy {way} used ordinary (pageable) host memory for {side}, which the driver must stage "
                "through a pinned buffer, so it cannot overlap a kernel: use cuda.pinned_array_like(x) buffers "
                "(or with cuda.pinned(...))."
            )
    return None


def _pipeline_problem(log, k) -> str | None:
    launches = log.of("launch")
    if not launches:
        return "the kernel was never launched: launch it once per chunk, kernel[blocks, threads, s](d_in, d_out)."
    for _, op in launches:
        if op.stream in ("default", "another stream"):
            return f"a launch went to {where(op.stream)}: launch each chunk on its own stream from cuda.stream()."
    if len(launches) == 1 and k > 1:
        return (
            "the whole array went in one launch, so nothing overlaps: cut x into n_streams chunks and launch once "
            "per chunk, each on its own stream."
        )
    if len(launches) != k:
        return f"the kernel was launched {len(launches)} times for {k} chunks: launch it once per chunk."
    used = {op.stream for _, op in launches}
    if len(used) < k:
        return (
            f"the {k} chunks used {len(used)} stream{'s' if len(used) != 1 else ''}, and one stream runs its work "
            "in order: give each chunk its own cuda.stream()."
        )
    for _, op in launches:
        if op.threads < op.size:
            return f"a launch starts {op.threads} threads for a chunk of {op.size}: round its blocks up."
        if shape := launch_shape_problem(f"for a chunk of {op.size}", op.size, op.threads, op.block):
            return shape
    for kind in ("h2d", "d2h"):
        if problem := _copy_problem(log, kind, k):
            return problem
    if (race := unordered_reads(log)) is not None:
        w, r = log.ops[race[0]], log.ops[race[1]]
        return (
            f"a {_OP[r.kind]} on {r.stream} reads device memory that a {_OP[w.kind]} on {w.stream} wrote, and nothing "
            "makes it wait: queue each chunk's copy in, kernel and copy out on the same stream."
        )
    for s in sorted({op.stream for _, op in log.of("d2h")}):
        last = max(i for i, op in log.of("d2h") if op.stream == s)
        if not finished_after(log, s, last):
            return (
                f"the result was returned before {s} had finished copying it back (the copies are asynchronous): "
                "call s.synchronize() on every stream, or cuda.synchronize(), before returning."
            )
    return None


_OP = {"h2d": "copy to the GPU", "d2h": "copy to the host", "launch": "launch"}


def _judge_pipeline(fn, rng, executor):
    name = getattr(fn, "__name__", "pipeline")
    if env.on_gpu():
        cases = [(int(rng.integers(1 << 20, 1 << 21)), 4), (3 * ((1 << 14) + 1), 3), (4096, 2)]
    else:  # the simulator runs each thread in Python: small chunks, of 128 and of 129 among them
        cases = [(int(rng.integers(300, 500)), 3), (256, 2), (387, 3), (int(rng.integers(520, 700)), 4)]
    for n, k in cases:
        x = rng.uniform(-4, 4, n).astype(np.float32)
        before = x.copy()
        run = observed(executor, fn, "pipeline", _KERNEL(), x=x, k=k)  # in the judge's worker for a student's function
        log, got, x = run["log"], run["got"], run["x"]
        if problem := _pipeline_problem(log, k):
            return False, f"for n = {n} over {k} streams, {problem}"
        if not isinstance(got, np.ndarray) or got.shape != x.shape:
            return False, f"{name} returned {fmt(got)}; return the whole result as a NumPy array of x's shape."
        if got.dtype != x.dtype:
            return False, f"the result is {got.dtype} but x is {x.dtype}: allocate the output like x."
        bad = np.flatnonzero(~np.isclose(got, _expect(before), rtol=1e-6, atol=1e-6))
        if bad.size:
            i = int(bad[0])
            return False, (
                f"for n = {n} over {k} streams, element {i} is {fmt(got[i])} but should be "
                f"{fmt(_expect(before)[i])}: each chunk's result goes back to its own place, out[a:b]."
            )
        if not np.array_equal(x, before):
            return False, f"{name} changed x; copy it into a pinned buffer instead of working in place."
    return True, (
        "each chunk copied in, computed and copied out on its own stream through pinned buffers, and every stream "
        f"waited for before the result was returned (n up to {max(n for n, _ in cases)})."
    )


pipeline = CallExercise(
    prompt="Write pipeline(kernel, x, n_streams): x is a float32 NumPy array in ordinary host memory. Cut it into "
    "n_streams chunks (np.array_split) and give each chunk its own stream from cuda.stream(): copy the chunk to the "
    "GPU from pinned memory, launch kernel[blocks, threads, s](d_in, d_out) on it (128 threads per block), and copy "
    "its result back into a pinned output array, all asynchronously on that stream (stream=s). Return the output "
    "once every stream has finished.",
    reference=_pipeline,
    judge=_judge_pipeline,
    remote_ok=True,
    hints=(
        "x_pinned = cuda.pinned_array_like(x); x_pinned[:] = x; out = cuda.pinned_array_like(x)",
        "per chunk [a:b]: cuda.to_device(x_pinned[a:b], stream=s), cuda.device_array(b - a, x.dtype, stream=s), "
        "kernel[blocks, 128, s](d_in, d_out), d_out.copy_to_host(out[a:b], stream=s)",
        "after the loop, s.synchronize() for every stream, then return out.",
    ),
)

# ----------------------------------------------------------------------------- 3. a CUDA graph of launches

# The same sources as notebook 00's add_one and notebook 10's probe, so the differential corpus has them already;
# notebook 16 prints and launches these two (a copy in the notebook would be a new source for the corpus).
ADD_ONE_SRC = 'extern "C" __global__ void add_one(float* a, int n) { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) a[i] += 1.0f; }'  # noqa: E501
TWICE_SRC = (
    'extern "C" __global__ void twice(float* x, int n) '
    "{ int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) x[i] *= 2.0f; }"
)


def _cupy():
    from helpers.standins import library

    return library("cupy")


def _capture_steps(add_one, twice, x, n_steps):
    cp = _cupy()
    threads = 128
    blocks = (x.size + threads - 1) // threads
    n = np.int32(x.size)
    stream = cp.cuda.Stream(non_blocking=True)  # the default stream cannot capture
    with stream:  # launches go to the current stream: this one
        stream.begin_capture()
        for _ in range(n_steps):
            add_one((blocks,), (threads,), (x, n))
            twice((blocks,), (threads,), (x, n))
        graph = stream.end_capture()  # nothing has run yet
    return graph


def _rounds(x0, m, first=1.0, factor=2.0, add_after=0.0):
    x = x0.astype(np.float64)
    for _ in range(m):
        x = (x + first) * factor + add_after
    return x.astype(np.float32)


def _replay_problem(got, x0, steps) -> str:
    for m in range(0, 3 * steps + 1):
        if np.array_equal(got, _rounds(x0, m)):
            if m == 0:
                return (
                    "one replay of the graph left x unchanged, so nothing was captured: make the launches inside "
                    "`with stream:` between stream.begin_capture() and stream.end_capture()."
                )
            return f"one replay of the graph ran {m} round(s) of add_one then twice, not n_steps = {steps}."
    if np.array_equal(got, _rounds(x0, steps, first=0.0, add_after=1.0)):
        return "the graph runs twice before add_one: capture add_one first, then twice, in every round."
    if np.array_equal(got, x0 + steps) or np.array_equal(got, x0 * 2.0**steps):
        return "the graph holds only one of the two kernels: capture add_one and then twice in every round."
    i = int(np.flatnonzero(got != _rounds(x0, steps))[0])
    return f"after one replay x[{i}] is {fmt(got[i])} but should be {fmt(_rounds(x0, steps)[i])}."


def _threads(dim) -> int:
    return int(np.prod([int(d) for d in dim])) if isinstance(dim, (tuple, list)) else int(dim)


def _launches_problem(log, n, steps) -> str | None:
    names = [k for k, _, _ in log]
    if names != ["add_one", "twice"] * steps:
        return None  # the replay says what the graph holds
    for _, grid, block in log:
        total, per_block = _threads(grid) * _threads(block), _threads(block)
        if total < n:
            return f"a launch starts {total} threads for {n} elements: round the blocks up, (n + 127) // 128."
        if shape := launch_shape_problem(f"for n = {n}", n, total, per_block):
            return shape
    return None


def _judge_graph(fn, rng, executor):
    from helpers.exercises.executor import raised

    name = getattr(fn, "__name__", "capture_steps")
    sources = {"add_one": ADD_ONE_SRC, "twice": TWICE_SRC}
    if env.on_gpu():
        cases = [(1 << 16, 5), ((1 << 14) + 1, 3), (int(rng.integers(100, 1000)), 2)]
    else:  # each replayed launch runs thread by thread from its PTX: an exact multiple, one past, one drawn
        cases = [(128, 3), (129, 2), (int(rng.integers(30, 120)), 2)]
    for n, steps in cases:
        x0 = rng.integers(0, 8, n).astype(np.float32)
        run = observed(executor, fn, "capture", (sources, sources), x0=x0, steps=steps)  # where fn runs
        if run.get("failed") is not None:
            return False, (
                f"the capture failed ({run['failed']}): capture on a stream of your own, cp.cuda.Stream("
                "non_blocking=True) (the default stream cannot capture), and make every launch inside `with stream:`."
            )
        if not run["graph"]:
            return False, f"{name} returned {fmt(run['got'])}; return the graph stream.end_capture() gave, unlaunched."
        if problem := _launches_problem(run["launches"], n, steps):
            return False, problem
        if not np.array_equal(run["after"], x0):
            return False, (
                f"x changed while {name} ran, so launches ran instead of being captured (or the graph was "
                "launched): begin the capture first, launch inside `with stream:`, and return the graph unlaunched."
            )
        for replay, got in zip((1, 2), run["replays"]):
            if replay == 1 and not np.array_equal(got, _rounds(x0, steps)):
                return False, f"for n = {n} and n_steps = {steps}, {_replay_problem(got, x0, steps)}"
            if replay == 2 and not np.array_equal(got, _rounds(x0, 2 * steps)):
                return False, "a second replay did not repeat the first: return the graph itself, not a copy of x."
        if run.get("replay") is not None:  # a replay raised: here, where the check made it
            raise raised(run["replay"])
    return True, "the graph held n_steps rounds of add_one then twice, ran nothing until launched, and replayed twice."


capture_steps = CallExercise(
    prompt="Write capture_steps(add_one, twice, x, n_steps): capture into a CUDA graph n_steps rounds of "
    "add_one((blocks,), (threads,), (x, np.int32(n))) then twice(...) (CuPy RawKernels, 128 threads per block) on "
    "the float32 device array x, on a stream of your own, and return the graph without launching it. The check "
    "launches it twice.",
    reference=_capture_steps,
    judge=_judge_graph,
    remote_ok=True,
    hints=(
        "stream = cp.cuda.Stream(non_blocking=True); with stream: stream.begin_capture() ... graph = "
        "stream.end_capture()",
        "Inside `with stream:` every launch goes to that stream, so it is captured, not run.",
    ),
)


def _capture_solution():
    return (
        "def capture_steps(add_one, twice, x, n_steps):\n    threads = 128\n"
        "    blocks = (x.size + threads - 1) // threads\n    n = np.int32(x.size)\n"
        "    stream = cp.cuda.Stream(non_blocking=True)\n    with stream:\n        stream.begin_capture()\n"
        "        for _ in range(n_steps):\n            add_one((blocks,), (threads,), (x, n))\n"
        "            twice((blocks,), (threads,), (x, n))\n        graph = stream.end_capture()\n    return graph\n"
    )


def _as_written():
    """The solution as a notebook cell defines it (cp and np its globals, its source readable): the judge
    runs a learner's function again from that description (grading/host.py); the reference reaches cp
    through helpers."""
    import linecache

    text, filename = _capture_solution(), "<solution capture_steps>"
    linecache.cache[filename] = (len(text), None, text.splitlines(True), filename)
    ns = {"cp": _cupy(), "np": np}
    exec(compile(text, filename, "exec"), ns)  # noqa: S102 - the course's own solution text
    return ns["capture_steps"]


capture_steps._solution_text = _capture_solution  # the reference reaches cp through helpers
capture_steps.reference_answer = _as_written

EXERCISES = register(__name__, globals())
