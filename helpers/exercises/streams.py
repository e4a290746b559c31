"""What a learner's host function did with Numba's streams, events, copies and launches (notebook 16).

Why: a pipeline over streams or an event timing can give the right numbers and still be wrong
(a copy on the default stream serialises everything, a result read before its stream finished is
right only by luck, an event on another stream times something else). Numba's CPU simulator runs
everything at once and its events have no clock, so the numbers alone prove nothing there. While
``recording(kernel)`` is active, the course's calls into ``numba.cuda`` (simulator or real) are
wrapped so that each stream, event, copy, launch and synchronisation lands in one ordered log, with
the device and host memory each copy or launch touched; the real call still runs. The rules read
that log, the same in CPU and GPU mode: timing one launch here, the pipeline's in
``helpers/problems/nb16.py``.
"""

from __future__ import annotations

import contextlib
import functools
from dataclasses import dataclass, field

import numpy as np

from .. import env
from ..errors import LearnerError
from .base import fmt
from .launch import validate_launch
from .pipeline import _is_device_array, _threads_in, launch_shape_problem

# CPU mode: the simulator's events have no clock (elapsed_time gives -1.0), so a recorded event's time
# is modelled as this many ms per kernel launch queued before it; the rules only need its sign and zero.
MODEL_MS_PER_LAUNCH = 0.5


@dataclass
class Op:
    """One call the learner made, in order."""

    kind: str  # stream | event | h2d | d2h | launch | sync | device_sync | record | wait | event_sync | elapsed
    # "stream 1"..., "default", "another stream" (not made by cuda.stream()), or for a copy "unstated" (no
    # stream=: Numba then uses the default stream, or on a GPU the stream the device array was made with)
    stream: str = ""
    event: str = ""  # "event 1"...
    reads: tuple = ()  # device (start, stop) byte ranges
    writes: tuple = ()
    host: tuple | None = None  # a copy's host (start, stop) range
    pinned: bool = False  # that host memory is page-locked (pinned_array, mapped_array, inside cuda.pinned)
    value: float | None = None  # what elapsed_time returned
    pair: tuple = ()  # elapsed: (first event, second event)
    threads: int = 0  # launch: threads in all
    block: int = 0  # launch: threads per block
    size: int = 0  # launch: elements of its first argument


@dataclass
class StreamLog:
    ops: list = field(default_factory=list)
    names: dict = field(default_factory=dict)  # id(stream or event) -> name
    keep: list = field(default_factory=list)  # the objects named, kept alive so their ids stay theirs
    pinned: list = field(default_factory=list)  # host (start, stop) ranges that are page-locked
    untimed: set = field(default_factory=set)  # events made with timing=False

    def name(self, obj, prefix: str) -> str:
        if id(obj) not in self.names:
            self.keep.append(obj)
            self.names[id(obj)] = f"{prefix} {sum(n.startswith(prefix) for n in self.names.values()) + 1}"
        return self.names[id(obj)]

    def stream(self, s) -> str:
        if s is None or (isinstance(s, int) and s == 0):
            return "default"
        return self.names.get(id(s), "another stream")

    def add(self, kind, **kw) -> Op:
        op = Op(kind, **kw)
        self.ops.append(op)
        return op

    def of(self, kind) -> list:
        return [(i, op) for i, op in enumerate(self.ops) if op.kind == kind]

    def is_pinned(self, rng) -> bool:
        return rng is not None and any(a <= rng[0] and rng[1] <= b for a, b in self.pinned)


def host_range(a):
    if not isinstance(a, np.ndarray) or a.size == 0:
        return None
    start = a.__array_interface__["data"][0]
    return (start, start + a.nbytes)


def device_range(a):
    """The bytes a device array covers: the real array's address, or the simulator's NumPy buffer."""
    inner = getattr(a, "_ary", None)
    if isinstance(inner, np.ndarray):
        return host_range(inner)
    try:
        start = int(a.__cuda_array_interface__["data"][0])
        return (start, start + int(a.size) * int(a.dtype.itemsize))
    except (AttributeError, KeyError, TypeError, ValueError):
        return None


def overlaps(a, b) -> bool:
    return a is not None and b is not None and a[0] < b[1] and b[0] < a[1]


def modelled_ms(log: StreamLog, start: str, end: str) -> float:
    """CPU mode: the time between two recorded events, MODEL_MS_PER_LAUNCH per launch queued between them."""
    at = {}
    launches = 0
    for op in log.ops:
        launches += op.kind == "launch"
        if op.kind == "record":
            at[op.event] = launches
    if start not in at or end not in at:
        raise LearnerError("elapsed_time needs two events that were recorded: call start.record(stream) first.")
    return (at[end] - at[start]) * MODEL_MS_PER_LAUNCH


class SpyKernel:
    """Stands in for the course's kernel(x, out): logs the launch (stream, memory, shape), then runs it."""

    def __init__(self, kernel, log: StreamLog):
        self._kernel, self._log = kernel, log
        self.running = False

    def __getitem__(self, config):
        if not isinstance(config, tuple) or not 2 <= len(config) <= 4:
            raise LearnerError("launch the kernel as kernel[blocks, threads, stream](d_x, d_out).")
        blocks, threads = config[0], config[1]
        stream = config[2] if len(config) > 2 else 0

        def launch(*args):
            if len(args) != 2:
                raise LearnerError(f"the kernel takes 2 arguments (x, out), but it was launched with {len(args)}.")
            if not all(_is_device_array(a) for a in args):
                raise LearnerError(
                    "the kernel got a NumPy array, which Numba copies to the device and back on the default "
                    "stream at every launch: pass device arrays (cuda.to_device(..., stream=s), "
                    "cuda.device_array(..., stream=s))."
                )
            total = _threads_in(blocks) * _threads_in(threads)
            self._log.add(
                "launch",
                stream=self._log.stream(stream),
                reads=(device_range(args[0]),),
                writes=(device_range(args[1]),),
                threads=total,
                block=_threads_in(threads),
                size=int(args[0].size),
            )
            if total > 0:
                validate_launch((blocks, threads))
                self.running = True
                try:
                    self._kernel[config](*args)
                finally:
                    self.running = False

        return launch

    def __call__(self, *args):
        raise LearnerError("a kernel needs a launch configuration: kernel[blocks, threads, stream](d_x, d_out).")


def _swap(saved, owner, attr, fn):
    saved.append((owner, attr, getattr(owner, attr, None), attr in vars(owner)))
    setattr(owner, attr, fn)


@contextlib.contextmanager
def recording(kernel):
    """Log what the learner's code does through numba.cuda while it runs; yields (log, spy kernel)."""
    from numba import cuda

    log = StreamLog()
    spy = SpyKernel(kernel, log)
    saved = []
    depth = [0]  # on a GPU cuda.to_device calls copy_to_device: log the outermost call only
    stream_cls, event_cls, array_cls = type(cuda.stream()), type(cuda.event()), type(cuda.device_array(1))

    def outer(fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            depth[0] += 1
            try:
                return fn(*args, **kwargs)
            finally:
                depth[0] -= 1

        return wrapper

    def logged_copy(kind, host, dev, stream):
        if depth[0] == 0 and not spy.running:
            rng = host_range(host)
            log.add(
                kind,
                stream="unstated"
                if stream is None or (isinstance(stream, int) and stream == 0)
                else log.stream(stream),
                host=rng,
                pinned=log.is_pinned(rng),
                writes=(device_range(dev),) if kind == "h2d" else (),
                reads=(device_range(dev),) if kind == "d2h" else (),
            )

    orig = {n: getattr(cuda, n, None) for n in ("stream", "event", "synchronize", "to_device", "pinned")}
    orig_array = {n: getattr(array_cls, n) for n in ("copy_to_device", "copy_to_host")}
    orig_stream = {n: getattr(stream_cls, n) for n in ("synchronize",)}
    orig_event = {n: getattr(event_cls, n) for n in ("record", "wait", "synchronize", "elapsed_time")}

    def make_stream(*args, **kwargs):
        s = orig["stream"](*args, **kwargs)
        log.add("stream", stream=log.name(s, "stream"))
        return s

    def make_event(timing=True):
        e = orig["event"](timing=timing) if env.on_gpu() else orig["event"]()  # the simulator's takes none
        log.add("event", event=log.name(e, "event"))
        if not timing:
            log.untimed.add(log.names[id(e)])
        return e

    def to_device(obj, stream=0, copy=True, to=None):
        got = outer(orig["to_device"])(obj, stream=stream, copy=copy, to=to)
        if copy and isinstance(obj, np.ndarray):
            logged_copy("h2d", obj, got, stream)
        return got

    def copy_to_device(self, ary, stream=0):
        got = outer(orig_array["copy_to_device"])(self, ary, stream=stream)
        if isinstance(ary, np.ndarray):
            logged_copy("h2d", ary, self, stream)
        return got

    def copy_to_host(self, ary=None, stream=0):
        got = outer(orig_array["copy_to_host"])(self, ary, stream=stream)
        logged_copy("d2h", got, self, stream)
        return got

    def synchronize_stream(self):
        orig_stream["synchronize"](self)
        log.add("sync", stream=log.stream(self))

    @contextlib.contextmanager
    def auto_synchronize(self):
        yield self
        synchronize_stream(self)

    def synchronize_device():
        orig["synchronize"]()
        log.add("device_sync")

    def record(self, stream=0):
        orig_event["record"](self, stream)
        log.add("record", event=log.name(self, "event"), stream=log.stream(stream))

    def wait(self, stream=0):
        orig_event["wait"](self, stream)
        log.add("wait", event=log.name(self, "event"), stream=log.stream(stream))

    def synchronize_event(self):
        orig_event["synchronize"](self)
        log.add("event_sync", event=log.name(self, "event"))

    def elapsed(first, second):
        pair = (log.name(first, "event"), log.name(second, "event"))
        if env.on_gpu():
            value = float(orig_event["elapsed_time"](first, second))
        else:
            value = modelled_ms(log, *pair)
        log.add("elapsed", pair=pair, value=value)
        return value

    def pinned_alloc(fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            got = fn(*args, **kwargs)
            arr = got if isinstance(got, np.ndarray) else getattr(got, "_ary", None)
            if (rng := host_range(arr)) is not None:
                log.pinned.append(rng)
            return got

        return wrapper

    @contextlib.contextmanager
    def pinned(*arrays):
        ranges = [r for r in map(host_range, arrays) if r is not None]
        # the simulator's cuda.pinned takes one array (and does nothing): the check lends the real signature
        with orig["pinned"](*arrays) if env.on_gpu() else contextlib.nullcontext():
            log.pinned.extend(ranges)
            try:
                yield
            finally:
                for r in ranges:
                    log.pinned.remove(r)

    try:
        _swap(saved, cuda, "stream", make_stream)
        _swap(saved, cuda, "event", make_event)
        _swap(saved, cuda, "synchronize", synchronize_device)
        _swap(saved, cuda, "to_device", to_device)
        _swap(saved, cuda, "pinned", pinned)
        _swap(saved, cuda, "event_elapsed_time", elapsed)  # the simulator has none: the check lends it one
        for name in ("pinned_array", "pinned_array_like", "mapped_array", "mapped_array_like"):
            if hasattr(cuda, name):
                _swap(saved, cuda, name, pinned_alloc(getattr(cuda, name)))
        _swap(saved, array_cls, "copy_to_device", copy_to_device)
        _swap(saved, array_cls, "copy_to_host", copy_to_host)
        _swap(saved, stream_cls, "synchronize", synchronize_stream)
        _swap(saved, stream_cls, "auto_synchronize", auto_synchronize)
        _swap(saved, event_cls, "record", record)
        _swap(saved, event_cls, "wait", wait)
        _swap(saved, event_cls, "synchronize", synchronize_event)
        _swap(saved, event_cls, "elapsed_time", elapsed)
        yield log, spy
    finally:
        for owner, attr, fn, own in reversed(saved):
            if own:
                setattr(owner, attr, fn)
            else:
                delattr(owner, attr)


def finished_after(log: StreamLog, stream: str, i: int, j: int | None = None) -> bool:
    """Did the host wait, between op i and op j (or the end), for everything queued on `stream` up to op i:
    stream.synchronize(), cuda.synchronize(), or an event recorded on it after i and synchronized?"""
    j = len(log.ops) if j is None else j
    recorded = set()
    for op in log.ops[i + 1 : j]:
        if (op.kind == "sync" and op.stream == stream) or op.kind == "device_sync":
            return True
        if op.kind == "record":
            (recorded.add if op.stream == stream else recorded.discard)(op.event)
        if op.kind == "event_sync" and op.event in recorded:
            return True
    return False


def ordered_after(log: StreamLog, i: int, j: int) -> bool:
    """Is op j (on its stream) ordered after op i: the same stream, or an event recorded on i's stream
    after i and waited on j's stream before j, or the host waited for i's stream in between."""
    a, b = log.ops[i], log.ops[j]
    if a.stream == b.stream or finished_after(log, a.stream, i, j):
        return True
    recorded = set()
    for op in log.ops[i + 1 : j]:
        if op.kind == "record":
            (recorded.add if op.stream == a.stream else recorded.discard)(op.event)
        if op.kind == "wait" and op.stream == b.stream and op.event in recorded:
            return True
    return False


def unordered_reads(log: StreamLog):
    """The first (writer index, reader index) where an op reads device memory an earlier op on another stream
    wrote, with nothing ordering the two; None when every read waits for its write."""
    for j, op in enumerate(log.ops):
        for r in op.reads:
            writers = [i for i in range(j) if any(overlaps(r, w) for w in log.ops[i].writes)]
            if writers and not ordered_after(log, writers[-1], j):
                return writers[-1], j
    return None


# ----------------------------------------------------------------------------- timing one launch (notebook 16)


def one_launch_problem(log, name) -> str | None:
    """One launch, on the given stream, with threads for every element and no spare block."""
    launches = log.of("launch")
    if not launches:
        return f"{name} never launched the kernel: launch it once, kernel[blocks, threads, stream](d_x, d_out)."
    if len(launches) > 1:
        return f"{name} launched the kernel {len(launches)} times; time one launch between the two events."
    _, launch = launches[0]
    if launch.stream != "stream 1":
        return (
            f"the kernel ran on {where(launch.stream)}, not on the stream {name} was given: launch it as "
            "kernel[blocks, threads, stream](d_x, d_out)."
        )
    if launch.threads < launch.size:
        return (
            f"the launch starts {launch.threads} threads for {launch.size} elements: round the blocks up, "
            "(n + threads - 1) // threads."
        )
    return launch_shape_problem(f"for n = {launch.size}", launch.size, launch.threads, launch.block)


def where(stream: str) -> str:
    return {"default": "the default stream", "another stream": "a stream not made by cuda.stream()"}.get(stream, stream)


def timing_problem(log, got, name) -> str | None:
    if problem := one_launch_problem(log, name):
        return problem
    li, launch = log.of("launch")[0]
    records = log.of("record")
    before = [(i, op) for i, op in records if i < li]
    after = [(i, op) for i, op in records if i > li]
    if not before:
        return (
            "no event was recorded before the launch: call start.record(stream) before kernel[...], so "
            "the kernel lies between the two events."
        )
    if not after:
        return (
            "no event was recorded after the launch: call end.record(stream) after kernel[...], so "
            "the kernel lies between the two events."
        )
    (_, start), (ei, end) = before[-1], after[0]
    for op in (start, end):
        if op.stream != launch.stream:
            return (
                f"an event was recorded on {where(op.stream)} while the kernel ran on the stream you were given, "
                "so it marks another queue: pass that stream, start.record(stream) and end.record(stream)."
            )
    if {start.event, end.event} & log.untimed:
        return "an event made with cuda.event(timing=False) keeps no time: make both with cuda.event()."
    reads = [(i, op) for i, op in log.of("elapsed") if i > ei and set(op.pair) == {start.event, end.event}]
    if not reads:
        return "the time was never read: return start.elapsed_time(end), the milliseconds between the two events."
    xi, read = reads[-1]
    if read.pair != (start.event, end.event):
        return (
            "the events are swapped: start.elapsed_time(end) (or cuda.event_elapsed_time(start, end)) measures from "
            "start to end; end.elapsed_time(start) is that time negated."
        )
    waited = any(op.kind == "event_sync" and op.event == end.event for op in log.ops[ei + 1 : xi])
    if not (waited or finished_after(log, launch.stream, ei, xi)):
        return (
            "the time was read before the host waited for end: call end.synchronize() after end.record(stream) and "
            "before elapsed_time, or the read fails (CUDA_ERROR_NOT_READY) whenever the kernel is still running."
        )
    if isinstance(got, bool) or not isinstance(got, (float, np.floating)):
        return f"{name} returned {fmt(got)}; return the milliseconds elapsed_time gave (a float)."
    if float(got) != read.value:
        return (
            f"{name} returned {fmt(got)}, not the {read.value:g} ms elapsed_time gave: return that number itself "
            "(a host clock times the queueing of the launch, not the kernel)."
        )
    return None
