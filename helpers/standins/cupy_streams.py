"""CuPy's streams, events and stream capture into CUDA Graphs, for the CPU stand-in (``cp.cuda``).

Why: notebook 16 captures a sequence of kernel launches into a graph and replays it. The CPU runs
each launch at once, so streams never overlap here and nothing is ever pending (``synchronize`` has
nothing to wait for), but capture is modelled as a GPU does it: while a stream captures, a launch
queued on it is recorded, not run, and ``Graph.launch`` replays the recorded launches in order. So an
answer that launches outside the capture changes its data at once, here as on a GPU, and a graph
that captured nothing replays nothing. The CUDA rules a learner can trip over raise CuPy's
``CUDARuntimeError`` with the CUDA error's name: capture on the default (null) stream, and a launch on
the null stream while a blocking stream captures (cudaErrorStreamCaptureImplicit, which also
invalidates that capture). Only RawKernel and ElementwiseKernel launches are captured (a ReductionKernel
inside a capture needs a GPU); array operations run at once, and timing needs a GPU.
"""

from __future__ import annotations

from . import _launch

SUPPORTED = (
    "for cupy.cuda models Stream (with, use, synchronize, begin_capture, end_capture), Event (record, "
    "synchronize) and Graph.launch; it captures RawKernel and ElementwiseKernel launches only and has no clock"
)


class CUDARuntimeError(RuntimeError):
    """The name of CuPy's error for a failed CUDA runtime call (cupy_backends.cuda.api.runtime)."""


_stack = []  # streams made current by `with stream:` (innermost last)
_base = [None]  # the stream made current by stream.use(); None: the null stream
_capturing = []  # streams capturing now


class Stream:
    """``cupy.cuda.Stream(null=False, non_blocking=False, ptds=False, priority=None)``."""

    null = None  # the singletons, set below
    ptds = None

    def __init__(self, null=False, non_blocking=False, ptds=False, priority=None):
        self._null, self._non_blocking = bool(null), bool(non_blocking) and not null and not ptds
        self.ptr = 0 if null else 2 if ptds else id(self)  # 2: cudaStreamPerThread's handle
        self.device_id = -1 if (null or ptds) else 0
        self._captured = None  # the launches recorded while capturing
        self._invalid = False

    def __repr__(self):
        return f"<Stream {self.ptr} (CPU stand-in)>"

    def __enter__(self):
        _stack.append(self)
        return self

    def __exit__(self, *exc):
        _stack.pop()

    def use(self):
        _base[0] = self
        return self

    def is_non_blocking(self):
        return self._non_blocking

    @property
    def done(self):
        return True  # every launch already ran

    def synchronize(self):
        if self._captured is not None:
            raise CUDARuntimeError(
                "cudaErrorStreamCaptureUnsupported: operation not permitted when stream is capturing"
            )

    def record(self, event=None):
        event = Event() if event is None else event
        event.record(self)
        return event

    def wait_event(self, event):
        return None  # the CPU ran everything before the event already

    def is_capturing(self):
        return self._captured is not None

    def begin_capture(self, mode=None):
        if self._null:  # CuPy refuses it itself (cupy/cuda/stream.pyx), as an H200 run showed
            raise RuntimeError("cannot capture on the default (legacy) stream")
        if self._captured is not None:
            raise CUDARuntimeError("cudaErrorIllegalState: this stream is already capturing")
        self._captured, self._invalid = [], False
        _capturing.append(self)

    def end_capture(self):
        if self._captured is None:
            raise CUDARuntimeError("cudaErrorIllegalState: end_capture on a stream that is not capturing")
        captured, self._captured = self._captured, None
        _capturing.remove(self)
        if self._invalid:
            raise CUDARuntimeError(
                "cudaErrorStreamCaptureInvalidated: operation failed due to a previous error during capture"
            )
        return Graph(captured)


Stream.null = Stream(null=True)
Stream.ptds = Stream(ptds=True)


class Event:
    """``cupy.cuda.Event(block=False, disable_timing=False, interprocess=False)``: ordering only, no clock."""

    def __init__(self, block=False, disable_timing=False, interprocess=False):
        self.disable_timing = disable_timing

    def record(self, stream=None):
        return None

    def synchronize(self):
        return None

    @property
    def done(self):
        return True


class Graph:
    """What ``Stream.end_capture()`` returns: the captured launches, replayed in order by ``launch``."""

    def __init__(self, captured):
        self._captured = list(captured)

    def __repr__(self):
        return f"<Graph of {len(self._captured)} kernel launch(es) (CPU stand-in)>"

    def launch(self, stream=None):
        target = get_current_stream() if stream is None else stream
        if target._captured is not None:  # a graph launched inside a capture becomes part of that capture
            target._captured.extend(self._captured)
            return
        for run in self._captured:
            run()

    def upload(self, stream=None):
        return None


def get_current_stream(device_id=-1):
    return _stack[-1] if _stack else _base[0] if _base[0] is not None else Stream.null


def get_elapsed_time(start_event, end_event):
    raise _launch.needs_gpu("cupy.cuda.get_elapsed_time (timing with CUDA events)", SUPPORTED)


def submit(run):
    """Run a launch now, or record it in the capture of the current stream; a launch on the null stream
    while a blocking stream captures fails as on a GPU, and spoils that capture."""
    stream = get_current_stream()
    if stream._captured is not None:
        stream._captured.append(run)
        return
    if stream._null:
        blocking = [s for s in _capturing if not s._non_blocking]
        if blocking:
            for s in blocking:
                s._invalid = True
            raise CUDARuntimeError(
                "cudaErrorStreamCaptureImplicit: operation would make the legacy stream depend on a capturing "
                "blocking stream"
            )
    run()


def refuse_sync_copy():
    """A copy to the host on a capturing stream waits for it, which a capture forbids."""
    if get_current_stream()._captured is not None:
        raise CUDARuntimeError("cudaErrorStreamCaptureUnsupported: operation not permitted when stream is capturing")


def reset():
    """Forget every capture and current stream (a check starts from a clean state)."""
    for s in list(_capturing):
        s._captured = None
    _capturing.clear()
    _stack.clear()
    _base[0] = None
