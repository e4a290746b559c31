"""Call a learner's function where what it is handed, or what it returns, only makes sense in
the process it runs in, and bring back host data.

Why a module of its own: some checks hand the learner's function device arrays and count its
calls to ``cuda.compute`` (notebook 14), read the host memory its returned addresses point at,
or hand it a cuda.core stream and kernel (notebook 10). In the batch grader's judged mode that
must happen in the student's process, which cannot read ``helpers/problems``; the judge then
compares what comes back. Each ``*_call`` here runs the same code on either side.
"""

from __future__ import annotations

import contextlib
import ctypes
import inspect
from typing import NamedTuple

import numpy as np


class CallSeen(NamedTuple):
    """One counted library call: its array arguments (by parameter name) on the host, before and after."""

    name: str
    before: dict
    after: dict


def _arrays(fn, args, kwargs, host) -> dict:
    try:
        bound = dict(inspect.signature(fn).bind_partial(*args, **kwargs).arguments)
    except (TypeError, ValueError):  # a signature the library hides: positions by number
        bound = {**{str(i): a for i, a in enumerate(args)}, **kwargs}
    return {k: host(v) for k, v in bound.items() if hasattr(v, "__cuda_array_interface__") or hasattr(v, "dtype")}


@contextlib.contextmanager
def counting(module, names, seen=None, host=np.asarray):
    """Count calls to module.<name> while the learner's function runs (the module object is shared);
    with ``seen``, record each call's arrays there (CallSeen) so a check can tell which data it ran on."""
    calls = dict.fromkeys(names, 0)
    saved = {n: getattr(module, n) for n in names}

    def wrap(name, fn):
        def counted(*args, **kwargs):
            calls[name] += 1
            before = _arrays(fn, args, kwargs, host) if seen is not None else {}
            done = fn(*args, **kwargs)
            if seen is not None:
                seen.append(CallSeen(name, before, _arrays(fn, args, kwargs, host)))
            return done

        return counted

    for n in names:
        setattr(module, n, wrap(n, saved[n]))
    try:
        yield calls
    finally:
        for n, fn in saved.items():
            setattr(module, n, fn)


def to_host(cp, a):
    """A device (or host) array as a NumPy array; anything else as it is."""
    return np.asarray(cp.asnumpy(a)) if hasattr(a, "__cuda_array_interface__") or isinstance(a, np.ndarray) else a


class DeviceCall(NamedTuple):
    """What a learner's function did with device arrays: its result and arguments afterwards (on the
    host), the ``cuda.compute`` calls counted, which parts of the result were device arrays, and the
    counted calls' arrays (CallSeen)."""

    result: object
    calls: dict
    args: list
    on_device: list  # one bool per element of a returned tuple, else one for the result
    seen: list = []


def device_call(fn, host_args, count=()) -> DeviceCall:
    """``fn(*device arrays)`` with calls to ``cuda.compute``'s ``count`` functions counted."""
    from ..standins import library

    cp, cc = library("cupy"), library("cuda.compute")
    args = [cp.asarray(a) for a in host_args]
    seen = []
    with counting(cc, tuple(count), seen, lambda a: to_host(cp, a)) as calls:
        got = fn(*args)
    parts = got if isinstance(got, tuple) else (got,)
    on_device = [isinstance(g, cp.ndarray) or hasattr(g, "__cuda_array_interface__") for g in parts]
    got = tuple(to_host(cp, g) for g in got) if isinstance(got, tuple) else to_host(cp, got)
    return DeviceCall(got, dict(calls), [to_host(cp, a) for a in args], on_device, seen)


def observed_call(executor, fn, host_args, count=()) -> DeviceCall:
    """device_call where ``executor`` runs it: for the batch grader, in the judge's own worker from
    the description taken at check(), so the calls counted are the judge's (grading/executor.py)."""
    return executor.host_run("library_call", fn, device_call, list(host_args), tuple(count))


def ran_on(done: DeviceCall, name: str, reads: tuple, read, writes: tuple, wrote) -> bool:
    """Whether a call to ``name`` read ``read`` (the input) through one of the parameters ``reads``
    and wrote ``wrote`` (what the function returned) through one of ``writes``: a call on other data
    (a dummy) computes nothing the function returns."""
    for call in (c for c in done.seen if c.name == name):
        got_in = [call.before[k] for k in reads if k in call.before]
        got_out = [call.after[k] for k in writes if k in call.after]
        if any(_same(a, read) for a in got_in) and any(_same(a, wrote) for a in got_out):
            return True
    return False


def _same(a, b) -> bool:
    a, b = np.asarray(a), np.asarray(b)
    return a.shape == b.shape and a.dtype == b.dtype and bool(np.array_equal(a, b))


def answer_facts(obj) -> dict:
    """What notebook 12's checks ask of the answer object itself (a ufunc? an @njit with
    parallel=True?), as plain data: the batch grader's judge reads these for an answer that lives
    in the student's process."""
    from .. import _numba

    ufunc = isinstance(obj, np.ufunc) or type(obj).__name__ == "DUFunc"
    nin = getattr(obj, "nin", None) if ufunc else None
    return {
        "type": type(obj).__name__,
        "ufunc": bool(ufunc),
        "nin": int(nin) if isinstance(nin, (int, np.integer)) else None,
        "np_vectorize": isinstance(obj, np.vectorize),
        "cpu_jit": bool(_numba.is_cpu_jit(obj)),
        "parallel": bool(_numba.cpu_jit_options(obj).get("parallel")),
        # @vectorize with signatures: the default target="cpu" gives a DUFunc (one core), target="parallel"
        # a plain NumPy ufunc whose loop Numba splits across threads (checked against numba 0.68).
        "target": ("cpu" if type(obj).__name__ == "DUFunc" else "parallel") if ufunc else None,
    }


def facts_of(executor, fn) -> dict:
    """answer_facts of the answer, read where it lives (for the batch grader: as the student's process
    described it at check())."""
    return executor.host_run("facts", fn, answer_facts)


def parfors(executor, fn) -> int:
    """How many loops Numba made parallel in the answer's compiled versions (after it was called)."""
    from .. import _numba

    return executor.host_run("parfor_count", fn, _numba.parfor_count)


# ----------------------------------------------------------------------------- host memory (notebook 10)


def memory_regions(obj) -> list:
    """(start, end) addresses of the memory that ``obj`` keeps alive: NumPy arrays and ctypes
    objects (ctypes.c_float(x) holds a value just as np.array([x], np.float32) does), in lists and tuples."""
    if isinstance(obj, np.ndarray):
        return [(obj.ctypes.data, obj.ctypes.data + obj.nbytes)]
    if isinstance(obj, (ctypes._SimpleCData, ctypes.Array, ctypes.Structure, ctypes.Union)):
        return [(ctypes.addressof(obj), ctypes.addressof(obj) + ctypes.sizeof(obj))]
    if isinstance(obj, (list, tuple)):
        return [r for o in list(obj)[:10_000] for r in memory_regions(o)]
    return []


def storage_call(fn, args, sizes):
    """``fn(*args)`` for a function that returns ``(addresses, storage)``: (what it returned; the
    regions ``storage`` keeps alive; for each address, the ``sizes[j]`` bytes there when they lie
    inside one region, else None). Memory is read only inside a region, so a wrong address is a
    sentence, never a crash, and the bytes are read while ``storage`` is still alive."""
    out = fn(*args)
    regions, reads = [], []
    if isinstance(out, tuple) and len(out) == 2:
        regions = memory_regions(out[1])
        params = out[0]
        if isinstance(params, np.ndarray) and params.dtype == np.uint64 and params.ndim == 1:
            for addr, size in zip(params.tolist(), sizes):
                inside = any(lo <= addr and addr + int(size) <= hi for lo, hi in regions)
                reads.append(ctypes.string_at(addr, int(size)) if inside else None)
    return out, regions, reads


def observed_storage_call(executor, fn, args, sizes):
    """storage_call where ``fn`` lives: its memory is there (the student's process, for the grader)."""
    return executor.host_run("storage_call", fn, storage_call, list(args), [int(s) for s in sizes])


# ----------------------------------------------------------------------------- cuda.core launches (notebook 10)


class LaunchSeen(NamedTuple):
    """One launch the check saw: its grid and block (3 numbers each) and whether it used the given stream."""

    grid: tuple
    block: tuple
    given_stream: bool
    scalars: tuple = ()  # the dtype names of the NumPy scalars passed (a Python number by its type name)


def dims(v) -> tuple:
    """A grid or block as (x, y, z): 256, (256,) and (256, 1) are one shape."""
    try:
        t = tuple(int(d) for d in v) if isinstance(v, (tuple, list)) else (int(v),)
    except (TypeError, ValueError):  # a shape the library accepted in a form of its own: nothing to compare
        return (0, 0, 0)
    return t + (1,) * (3 - len(t))


def scalar_types(args) -> tuple:
    """'float32', 'int64', 'float' (a Python float)...: what each scalar argument of a launch was."""
    out = []
    for a in args:
        if isinstance(a, np.generic):
            out.append(a.dtype.name)
        elif isinstance(a, float) or (isinstance(a, int) and abs(a) < 1 << 32):  # a large int is a pointer
            out.append(type(a).__name__)
    return tuple(out)


@contextlib.contextmanager
def recording_launches(core, fn, stream):
    """Record every ``launch`` while ``fn`` runs: the module's ``core.launch`` and the name in the
    learner's globals bound to it (``from cuda.core import launch``) both go through the recorder."""
    seen, original = [], core.launch

    def launch(s, config, kernel, *args):
        done = original(s, config, kernel, *args)  # a launch the library refuses raises its own message first
        seen.append(LaunchSeen(dims(config.grid), dims(config.block), s is stream, scalar_types(args)))
        return done

    space = getattr(fn, "__globals__", {})
    bound = [k for k, v in list(space.items()) if v is original]
    core.launch = launch
    space.update(dict.fromkeys(bound, launch))
    try:
        yield seen
    finally:
        core.launch = original
        space.update(dict.fromkeys(bound, original))


class CoreLaunch(NamedTuple):
    arrays: list  # the arrays afterwards, on the host
    launches: list  # LaunchSeen records


def core_launch_call(fn, kernel: dict, arrays, extra=()) -> CoreLaunch:
    """``fn(stream, kernel, *device arrays, *extra)`` with a cuda.core stream and the course's kernel
    compiled here from ``kernel`` (its source and name): the arrays afterwards and the launches seen."""
    from ..standins import library

    core, cp = library("cuda.core"), library("cupy")
    dev = core.Device(0)
    dev.set_current()
    stream = dev.create_stream()
    program = core.Program(str(kernel["source"]), code_type="c++", options=core.ProgramOptions(arch=f"sm_{dev.arch}"))
    compiled = program.compile("cubin").get_kernel(str(kernel["name"]))
    on_device = [cp.asarray(np.asarray(a)) for a in arrays]
    dev.sync()
    with recording_launches(core, fn, stream) as seen:
        fn(stream, compiled, *on_device, *extra)
    stream.sync()
    return CoreLaunch([np.asarray(cp.asnumpy(a)) for a in on_device], list(seen))


def observed_core_launch(executor, fn, kernel: dict, arrays, extra=()) -> CoreLaunch:
    """core_launch_call where ``fn`` lives (the student's process, for the grader)."""
    return executor.host_run("core_launch", fn, core_launch_call, dict(kernel), list(arrays), list(extra))


def scalars_problem(launches, names: tuple, dtypes: tuple, where: str) -> str | None:
    """The sentence for a launch whose scalar arguments are not the kernel's types (``names``/``dtypes``):
    a GPU copies as many bytes as the parameter has, so an int64 n reads as n only by luck of byte order."""
    for got in (r.scalars for r in launches):
        for name, want, have in zip(names, dtypes, got):
            if have != want:
                return (
                    f"{where}, the kernel's {name} was passed as {have}, and the parameter is {want}: a GPU takes the "
                    f"parameter's bytes from it, right only by the luck of byte order or not at all; pass "
                    f"np.{want}({name})."
                )
    return None


def launch_problem(launches, n: int, threads: int, where: str, stream: bool = True) -> str | None:
    """The sentence for launches that are not one launch of ``threads``-thread blocks, enough and no more
    blocks for n, on the given stream (``stream``: the check can tell); None when they are."""
    if not launches:
        return f"{where}, no kernel was launched: the exercise is the launch, not computing the numbers another way."
    if len(launches) > 1:
        return f"{where}, the kernel was launched {len(launches)} times; one launch computes the result: launch once."
    grid, block, given = launches[0].grid, launches[0].block, launches[0].given_stream
    if block != (threads, 1, 1):
        if grid[0] == threads and block[0] != threads:
            return f"{where}, grid and block are swapped: the block is {threads} threads and the grid the block count."
        return f"{where}, the blocks have {block[0] * block[1] * block[2]} threads; the exercise asks for {threads}."
    need = -(-n // threads)
    if grid != (need, 1, 1):
        return (
            f"{where}, {grid[0] * grid[1] * grid[2]} blocks were launched and {need} cover n: use "
            f"(n + {threads - 1}) // {threads} blocks, enough and no more."
        )
    if stream and not given:
        return (
            f"{where}, the kernel was launched on another stream than the one you were given, and nothing orders "
            "it after the work already queued there (or the reader after it): launch on `stream`."
        )
    return None
