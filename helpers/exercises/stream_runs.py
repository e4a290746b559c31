"""Notebook 16's runs of a learner's host function, each giving the plain record its check reads.

Why: the checks of notebook 16 judge what a host function queued (streams.py's log) and what a
captured graph did, not only the numbers it returned. In the batch grader the function is the
student's, and a record made in the student's process is that process's word: it can replace the
wrapped ``numba.cuda`` functions or patch ``json``. So there the function is described at check(),
vetted and run again in the judge's own worker (grading/host.py, grading/workers.py), and the record
is made there by ``recording``'s wrappers. A direct check runs the same ``run`` here, and both read
the same plain record (``log_from``), so a sentence reads the same either way.

The course's kernels travel as source (the worker cannot read helpers/problems): ``kernel`` is
``{"name", "source"}`` of a Numba kernel, ``sources`` the CUDA C of the graph's two RawKernels.
"""

from __future__ import annotations

import dataclasses
import functools

import numpy as np

from .. import _wire, env
from ..errors import LearnerError
from ..ptx.records import _param_names, scalar_size_problem
from .base import fmt
from .streams import Op, StreamLog, recording

CUDA_ERRORS = ("CUDARuntimeError", "CUDADriverError")  # CuPy's CUDA errors, by name
NULL_CAPTURE = "cannot capture on the default (legacy) stream"  # CuPy 14's RuntimeError, before CUDA is asked


def plain(got):
    """What a learner's function returned, as a check reads it on either side: a number, None or an
    array as it is, anything else as a stand-in that shows as ``fmt`` shows it and equals nothing."""
    if got is None or isinstance(got, (bool, int, float, str, np.generic)) or type(got) is np.ndarray:
        return got
    if isinstance(got, np.ndarray):  # a pinned array: its values
        return np.array(got)
    return _wire.Opaque(type(got).__name__, fmt(got))


def log_data(log: StreamLog) -> dict:
    return {"ops": [dataclasses.asdict(op) for op in log.ops], "untimed": sorted(log.untimed)}


def _ranges(v):
    return tuple(None if r is None else (int(r[0]), int(r[1])) for r in v)


def log_from(data: dict) -> StreamLog:
    """The log a check reads, from ``log_data`` (here, or as the judge's worker sent it)."""
    log = StreamLog(untimed={str(e) for e in data["untimed"]})
    for d in data["ops"]:
        host = d.get("host")
        log.ops.append(
            Op(
                str(d["kind"]),
                stream=str(d.get("stream") or ""),
                event=str(d.get("event") or ""),
                reads=_ranges(d.get("reads") or ()),
                writes=_ranges(d.get("writes") or ()),
                host=None if host is None else (int(host[0]), int(host[1])),
                pinned=bool(d.get("pinned")),
                value=None if d.get("value") is None else float(d["value"]),
                pair=tuple(str(e) for e in d.get("pair") or ()),
                threads=int(d.get("threads") or 0),
                block=int(d.get("block") or 0),
                size=int(d.get("size") or 0),
            )
        )
    return log


def course_kernel(spec: dict, cache: dict | None = None):
    """A Numba kernel of the course's, compiled here from the source the judge sent."""
    import numba
    from numba import cuda

    key = (str(spec["name"]), str(spec["source"]))
    if cache is not None and key in cache:
        return cache[key]
    ns = {"cuda": cuda, "numba": numba, "np": np}
    exec(compile(key[1], f"<course kernel {key[0]}>", "exec"), ns)  # noqa: S102 - the grader's own source
    if cache is not None:
        cache[key] = ns[key[0]]
    return ns[key[0]]


def time_run(fn, kernel, x) -> dict:
    """``fn(spy, d_x, d_out, stream)`` on a stream of the check's, recorded."""
    from numba import cuda

    stream = cuda.stream()
    d_x, d_out = cuda.to_device(x, stream=stream), cuda.device_array(x.size, np.float32, stream=stream)
    stream.synchronize()
    with recording(kernel) as (log, spy):
        log.name(stream, "stream")
        got = fn(spy, d_x, d_out, stream)
    stream.synchronize()
    return {"log": log_data(log), "got": plain(got), "x": d_x.copy_to_host(), "out": d_out.copy_to_host()}


def pipeline_run(fn, kernel, x, k) -> dict:
    """``fn(spy, x, k)``, recorded; x afterwards (it must be unchanged)."""
    with recording(kernel) as (log, spy):
        got = fn(spy, x, int(k))
    return {"log": log_data(log), "got": plain(got), "x": np.array(x)}


class Logged:
    """The course's RawKernel, handed to the learner: each call's grid and block are logged, then it runs.
    ``signature`` (a GPU's): the kernel's parameter names and PTX parameters, against which NumPy scalars are
    checked before the launch, as the CPU's runner checks them (a GPU would read the low bytes of an int64
    for an int and get the right number by luck of byte order)."""

    def __init__(self, kernel, name, log, signature=None):
        self._kernel, self.__name__, self._log, self._signature = kernel, name, log, signature

    def __call__(self, grid, block, args, **kwargs):
        self._log.append([self.__name__, _dims(grid), _dims(block)])
        if self._signature is not None and isinstance(args, (tuple, list)):
            names, params = self._signature
            for pos, (p, a) in enumerate(zip(params, args)):
                name = names[pos] if pos < len(names) else f"arg{pos}"
                if isinstance(a, np.generic) and (problem := scalar_size_problem(pos, name, p, a)):
                    raise LearnerError(problem)
        return self._kernel(grid, block, args, **kwargs)


@functools.lru_cache(maxsize=8)
def signature(source: str, name: str):
    """(parameter names, PTX parameters) of the course's CUDA C kernel ``name``: compiled once per process,
    not at every capture the check runs."""
    from .. import cuda_c
    from ..ptx.parser import parse

    params = parse(cuda_c.compile(source).decode()).functions[name].params
    return _param_names(source, name), params


def _dims(d):
    try:
        return [int(v) for v in d] if isinstance(d, (tuple, list)) else int(d)
    except (TypeError, ValueError):
        return 0


def capture_run(fn, sources: dict, x0, steps) -> dict:
    """``fn(add_one, twice, x, steps)`` with the launches logged; then, for a graph, x after each of two
    replays. ``failed``: the CUDA error a capture raised; ``replay``: an error a replay raised."""
    from ..standins import library

    cp = library("cupy")
    if not env.on_gpu():
        from ..standins import cupy_streams

        cupy_streams.reset()  # a capture an earlier wrong answer left open
    log = []
    kernels = {}
    for name in ("add_one", "twice"):
        checked = signature(sources[name], name) if env.on_gpu() else None  # the CPU's runner checks its own
        kernels[name] = Logged(cp.RawKernel(sources[name], name), name, log, checked)
    add_one, twice = kernels["add_one"], kernels["twice"]
    x = cp.asarray(x0)
    try:
        graph = fn(add_one, twice, x, int(steps))
        if env.on_gpu():
            cp.cuda.runtime.deviceSynchronize()
    except Exception as e:
        if type(e).__name__ not in CUDA_ERRORS and not (isinstance(e, RuntimeError) and NULL_CAPTURE in str(e)):
            raise
        return {"failed": str(e)[:1500]}
    out = {"graph": isinstance(graph, cp.cuda.Graph), "got": plain(graph), "launches": log, "after": cp.asnumpy(x)}
    out["replays"], out["replay"] = [], None
    if out["graph"]:
        try:
            s = cp.cuda.Stream(non_blocking=True)
            for _ in (1, 2):
                graph.launch(s)
                s.synchronize()
                out["replays"].append(cp.asnumpy(x))
        except Exception as e:  # raised where the check replays, if it gets there
            out["replay"] = {"type": type(e).__name__, "message": str(e)[:1500]}
    return out


RUNS = {"time": time_run, "pipeline": pipeline_run, "capture": capture_run}
USES = "cuda, cp and np"  # what a rebuilt function may use (grading/host.py)
WATCHING = "its streams, copies and launches"


def observed(executor, fn, task: str, course, **inputs) -> dict:
    """``RUNS[task]`` of ``fn`` where ``executor`` runs it: for the batch grader, in the judge's own
    worker from the description taken at check() (grading/executor.py). ``course``: the Numba kernel
    (``kernel``), or the graph's CUDA C (``sources``), as (object here, plain data there)."""
    reply = executor.host_run("stream_run", fn, run_here, task, course, inputs)
    if "log" in reply:
        reply["log"] = log_from(reply["log"])
    return reply


def run_here(fn, task: str, course, inputs: dict) -> dict:
    """``RUNS[task]`` of ``fn`` in this process, as plain data, as the judge's worker answers it."""
    return _wire.decode(_wire.encode(RUNS[task](fn, course[0], **inputs)))


def run(task: str, fn, body: dict, cache: dict) -> dict:
    """The judge's worker's side of ``observed``: the course's kernels built from the source sent."""
    inputs = {k: v for k, v in body.items() if k not in ("task", "function", "kernel", "sources")}
    if task == "capture":
        return capture_run(fn, dict(body["sources"]), **inputs)
    return RUNS[task](fn, course_kernel(body["kernel"], cache), **inputs)
