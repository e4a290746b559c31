"""Answers that live in another process: the grader's judge holds the exercise, the student's
process holds the code.

Why: a check that runs inside the student's process can be talked into a pass (its frames read,
its emitter called, its comparisons patched). The batch grader therefore keeps every exercise,
reference and expected value in its own process and gives the check these stand-ins instead of
the student's objects. Each stand-in forwards exactly the operations the checks perform on an
answer (call it, trace it as a kernel, launch it on the GPU, compile it, read its source and
signature) to the student's process over a ``channel`` and gets plain data back
(``helpers._wire``): the student's process sees inputs, never what they should give.

``channel.request(op, **fields)`` returns the decoded reply or raises ``RemoteFailure``; the
grading child (``grading/serve.py``) answers the same operations with the real objects.
"""

from __future__ import annotations

import inspect
import io
from typing import NamedTuple

import numpy as np

from .. import _elsewhere
from ..errors import CourseError


class RemoteFailure(CourseError):
    """The student's process failed in a way that is not the student's code raising (it died,
    stopped answering, or answered with something that is not plain data)."""


def raised(error: dict) -> BaseException:
    """The exception the student's code raised there, rebuilt here under the same class name so
    the checks' sentences ("raised ZeroDivisionError: ...") read as they do in a notebook."""
    name = str(error.get("type") or "Exception")[:60]
    message = str(error.get("message") or "")[:1500]
    if error.get("course"):  # LearnerError, KernelError, TookTooLong...: the sentence is ours already
        exc = CourseError(message)
    else:
        if not name.isidentifier():
            name = "Exception"
        exc = type(name, (Exception,), {"__module__": "builtins"})(message)
    if error.get("refused") is True:
        exc.refused = True
    frames = error.get("frames")
    exc.course_frames = tuple(str(f)[:80] for f in frames[-40:]) if isinstance(frames, list) else ()
    return exc


def frames_of(exc: BaseException) -> tuple:
    """The names of the functions an exception passed through, here or (for one rebuilt by
    ``raised``) in the student's process: a check may tell errors apart by where they came from."""
    names, tb = [], exc.__traceback__
    while tb is not None:
        names.append(tb.tb_frame.f_code.co_name)
        tb = tb.tb_next
    return tuple(getattr(exc, "course_frames", ())) + tuple(names)


_KINDS = {
    "POSITIONAL_ONLY": inspect.Parameter.POSITIONAL_ONLY,
    "POSITIONAL_OR_KEYWORD": inspect.Parameter.POSITIONAL_OR_KEYWORD,
    "VAR_POSITIONAL": inspect.Parameter.VAR_POSITIONAL,
    "KEYWORD_ONLY": inspect.Parameter.KEYWORD_ONLY,
    "VAR_KEYWORD": inspect.Parameter.VAR_KEYWORD,
}


_HAS_DEFAULT = type("Default", (), {"__repr__": lambda self: "<a default>"})()  # the value stays there


def _signature(params):
    if params is None:
        return None
    out = []
    for item in params:
        name, kind = item[0], item[1]
        default = _HAS_DEFAULT if len(item) > 2 and item[2] else inspect.Parameter.empty
        try:
            out.append(
                inspect.Parameter(
                    str(name), _KINDS.get(str(kind), inspect.Parameter.POSITIONAL_OR_KEYWORD), default=default
                )
            )
        except ValueError:  # not an identifier: keep the count, which is what the checks use
            out.append(inspect.Parameter(f"arg{len(out)}", inspect.Parameter.POSITIONAL_OR_KEYWORD))
    try:
        return inspect.Signature(out)
    except ValueError:
        return inspect.Signature(
            [inspect.Parameter(f"arg{i}", inspect.Parameter.POSITIONAL_OR_KEYWORD) for i in range(len(out))]
        )


class RemoteFunction:
    """A student's plain function: calling it runs it in the student's process."""

    _course_remote = True

    def __init__(self, channel, desc: dict):
        self._channel, self._desc = channel, desc
        self._handle = desc.get("handle")
        self.__name__ = str(desc.get("name") or "<lambda>")
        self.__qualname__ = str(desc.get("qualname") or self.__name__)
        sig = _signature(desc.get("params"))
        if sig is not None:
            self.__signature__ = sig

    # what the checks ask of a function
    @property
    def course_source(self) -> str | None:
        return self._desc.get("source")

    @property
    def course_file(self) -> str:
        return str(self._desc.get("file") or "")

    def __call__(self, *args, **kwargs):
        reply = self._channel.request("call", handle=self._handle, args=list(args), kwargs=dict(kwargs))
        if not isinstance(reply, dict) or "value" not in reply:
            raise RemoteFailure("the grading process answered a call without a value")
        return reply["value"]

    def __repr__(self):
        return f"<your function {self.__name__}>"

    def array_call(self, inputs):
        """Call it as ``fn(xp, *arrays)`` there, xp CuPy on a GPU (else NumPy): its value as a NumPy
        array (or None), whether it was a CuPy array, and its type's name."""
        reply = self._channel.request("array_call", handle=self._handle, args=list(inputs))
        if not isinstance(reply, dict) or "device" not in reply:
            raise RemoteFailure("the grading process answered an array call without its value")
        return reply

    def call_with_pycuda_kernel(self, kernel: dict, args: list):
        """``fn(kernel, *args)`` there, with the course's PyCUDA kernel built there from its source:
        the name of the type it returned (None for None or an array) and the arguments afterwards."""
        reply = self._channel.request("pycuda_call", handle=self._handle, kernel=kernel, args=list(args))
        if not isinstance(reply, dict) or not isinstance(reply.get("args"), list) or len(reply["args"]) != len(args):
            raise RemoteFailure("the grading process answered a call without its arguments")
        return reply

    def live_fact(self, name: str):
        reply = self._channel.request("facts", handle=self._handle)
        if not isinstance(reply, dict) or name not in reply:
            raise RemoteFailure("the grading process did not say what was asked of the answer")
        return reply[name]

    def library_call(self, host_args: list, count: list):
        """``fn(*device arrays)`` run again by the judge's own worker from the description the student's
        process gave at check(), library calls counted there (grading/host.py)."""
        reply = self.judge_run("library_call", "its library calls", "cp, cc and np", args=list(host_args), count=count)
        if not {"result", "calls", "args", "on_device"} <= set(reply):
            raise RemoteFailure("the grader's worker answered a library call without its counts")
        return reply

    def judge_run(self, op: str, watching: str, uses: str, **fields) -> dict:
        """``op`` on the function run again by the judge's own worker from the vetted description the
        student's process gave at check() (grading/host.py): what it records is the judge's record."""
        from ..errors import LearnerError

        described = self._desc.get("host")
        tracer = getattr(self._channel, "tracer", None)
        if not isinstance(described, dict) or not isinstance(described.get("request"), dict) or tracer is None:
            why = described.get("skipped") if isinstance(described, dict) else None
            raise LearnerError(
                f"the grader runs {self.__name__} itself to watch {watching}, and could not rebuild it "
                f"({why or 'it was not described'}): write it as one plain def that uses {uses}."
            )
        reply = tracer.request(op, function=described["request"], **fields)
        if not isinstance(reply, dict):
            raise RemoteFailure("the grader's worker answered without a record")
        return reply

    def device_call(self, host_args: list, count: list):
        """``fn(*device arrays)`` there with cuda.compute calls counted (exercises/library_calls.py)."""
        reply = self._channel.request("device_call", handle=self._handle, args=list(host_args), count=list(count))
        if not isinstance(reply, dict) or not {"result", "calls", "args", "on_device"} <= set(reply):
            raise RemoteFailure("the grading process answered a device call without its counts")
        return reply

    def storage_call(self, args: list, sizes: list):
        """``fn(*args)`` there, returning (addresses, storage): the regions and bytes read there
        (exercises/library_calls.py)."""
        reply = self._channel.request("storage_call", handle=self._handle, args=list(args), sizes=list(sizes))
        if (
            not isinstance(reply, dict)
            or not {"value", "regions", "reads"} <= set(reply)
            or not isinstance(reply["regions"], list)
            or not all(isinstance(r, (list, tuple)) and len(r) == 2 for r in reply["regions"])
            or not isinstance(reply["reads"], list)
        ):
            raise RemoteFailure("the grading process answered a storage call without its memory")
        return reply

    def core_launch(self, kernel: dict, arrays: list, extra: list):
        """``fn(stream, kernel, *device arrays, *extra)`` there with cuda.core (exercises/library_calls.py)."""
        reply = self._channel.request("core_launch", handle=self._handle, kernel=kernel, args=list(arrays), extra=extra)
        got = reply.get("arrays") if isinstance(reply, dict) else None
        if (
            not isinstance(got, list)
            or len(got) != len(arrays)
            or not all(isinstance(g, np.ndarray) and g.shape == np.shape(a) for g, a in zip(got, arrays))
        ):
            raise RemoteFailure("the grading process answered a cuda.core launch without its arrays")
        return reply

    def pipeline(self, kernel: dict, x):
        """Run it as ``fn(spy_kernel, x)`` there with copies counted (exercises/pipeline.py)."""
        reply = self._channel.request("pipeline", handle=self._handle, kernel=kernel, x=x)
        if not isinstance(reply, dict) or not {"launches", "copies", "x"} <= set(reply):
            raise RemoteFailure("the grading process answered a pipeline run without its counts")
        return reply

    # the _numba adapters (python_function, is_cuda_function...) read these
    def _python_function(self):
        return None

    _is_cuda = False
    _is_device = False


class RemoteKernel(RemoteFunction):
    """A student's ``@cuda.jit`` object: traced, launched and compiled in the student's process."""

    @property
    def _is_cuda(self):
        return bool(self._desc.get("cuda")) and not self._desc.get("configured")

    @property
    def _is_device(self):
        return bool(self._desc.get("device"))

    def _python_function(self):
        fn = RemoteFunction(self._channel, {**self._desc, "kind": "function"})
        fn._call_as_kernel = True
        return fn

    def __call__(self, *args, **kwargs):
        raise TypeError("a kernel is launched with kernel[blocks, threads](...), not called")

    def __repr__(self):
        return f"<your kernel {self.__name__}>"

    def trace(self, grid, block, call_args, outputs):
        """The CPU tracer's run; the arrays come back into ``call_args`` as a kernel's writes would.

        Where it runs decides whom its verdicts and counts come from. Once the grader's own
        compiler has accepted the kernel's description, the judge's own tracer process runs the
        kernel rebuilt from that description (grading/workers.py): a kernel Numba compiles can
        only do what a GPU kernel can, so nothing of the student's can reach that tracer. Only a
        kernel the grader's compiler refused or could not check (it then fails, or stays
        unchecked, whatever its trace says) is traced in the student's process."""
        where, kernel = self._runner(call_args)
        reply = where.request("trace", **kernel, grid=grid, block=block, args=list(call_args), outputs=list(outputs))
        _write_back(call_args, reply.get("args"))
        return RemoteTrace(where, reply)

    def _runner(self, call_args):
        """Where to run the kernel and how to name it there: the judge's tracer process with the
        vetted description once the grader's compiler accepted it, else the student's process."""
        tracer = getattr(self._channel, "tracer", None)
        if tracer is not None:
            pending = self.compile_check(call_args)
            if pending.result().ok is True:
                return tracer, {"request": pending.req}
        return self._channel, {"handle": self._handle}

    def run_gpu(self, grid, block, call_args):
        """A launch on the GPU with guard bands: by the judge's own process from the accepted
        description, as ``trace``, else in the student's process (a refused or unchecked kernel)."""
        where, kernel = self._runner(call_args)
        reply = where.request("gpu", **kernel, grid=grid, block=block, args=list(call_args))
        _write_back(call_args, reply.get("args"))
        return [(int(p), int(e)) for p, e in reply.get("hits") or ()]

    def compile_check(self, call_args):
        """The grader's own compile server, never the student's process, says whether the kernel
        compiles, for the kernel as the student's process described it when check() was called
        (source, globals): that description was made before any input existed and is the only
        one taken, so no table of answers can be in it. The argument types are the judge's."""
        from .. import compile_check
        from ..compile_check import describe

        described = self._desc.get("compile")
        if not isinstance(described, dict) or not isinstance(described.get("request"), dict):
            why = described.get("skipped") if isinstance(described, dict) else None
            return compile_check.skipped(str(why or "the kernel was not described"))
        try:
            req = describe.with_argtypes(described["request"], call_args)
        except describe.NotDescribable as e:
            return compile_check.skipped(str(e))
        return compile_check.start_request(req, getattr(self._channel, "compiler", None))


def _write_back(call_args, arrays):
    if not isinstance(arrays, list) or len(arrays) != len(call_args):
        raise RemoteFailure("the grading process sent back the wrong number of arrays")
    for mine, theirs in zip(call_args, arrays):
        if isinstance(mine, np.ndarray):
            if not isinstance(theirs, np.ndarray) or theirs.shape != mine.shape or theirs.dtype != mine.dtype:
                raise RemoteFailure("the grading process sent back an array of another shape or type")
            mine[...] = theirs


class _Verdict:
    """A tracer verdict as it came back: the fields the checks' sentences use."""

    def __init__(self, d: dict):
        self.kind = str(d.get("kind") or "")
        self.message = str(d.get("message") or "")
        self.array = d.get("array")
        self.block = tuple(d["block"]) if isinstance(d.get("block"), (list, tuple)) else d.get("block")
        self.thread = tuple(d["thread"]) if isinstance(d.get("thread"), (list, tuple)) else d.get("thread")
        self.line = d.get("line")
        self.count = int(d.get("count") or 1)
        self.details = d.get("details") if isinstance(d.get("details"), dict) else {}

    def __str__(self):
        return self.message


class RemoteTrace:
    """What the checks read from a Trace: verdicts, the metrics, the grid, and a picture on demand."""

    _course_remote = True

    def __init__(self, channel, reply: dict):
        self._channel = channel
        self._id = reply.get("trace")
        self.verdicts = [_Verdict(v) for v in reply.get("verdicts") or () if isinstance(v, dict)]
        self.metrics_plain = {str(k): v for k, v in (reply.get("metrics") or {}).items()}
        self.griddim = tuple(int(g) for g in reply.get("griddim") or (1, 1, 1))
        self.arrays = _arrays(reply.get("arrays"))

    def show(self, block=0, **_):
        reply = self._channel.request("show", trace=self._id, block=int(block))
        png = reply.get("png") if isinstance(reply, dict) else None
        return Picture(png) if isinstance(png, bytes) and png.startswith(b"\x89PNG") else None


class ArrayKind(NamedTuple):
    """What the technique checks read of a traced array (exercises/technique.py: wide_scratch)."""

    space: str
    var: str
    dtype: np.dtype


def _arrays(reply) -> list:
    out = []
    for item in reply if isinstance(reply, list) else ():
        try:
            space, var, dtype = item
            out.append(ArrayKind(str(space), str(var), np.dtype(str(dtype))))
        except (TypeError, ValueError):
            raise RemoteFailure("the grading process described a traced array in an unknown form") from None
    return out


class Picture:
    """A picture drawn in the student's process, as PNG bytes: saved like a matplotlib figure."""

    def __init__(self, png: bytes):
        self.png = png

    def savefig(self, target, **_):
        if isinstance(target, io.IOBase):
            target.write(self.png)
            return
        with open(target, "wb") as f:
            f.write(self.png)


def answer_from(channel, desc):
    """The stand-in for what the student passed, from the student's process's description of it."""
    from .base import MISSING

    if not isinstance(desc, dict):
        raise RemoteFailure("the grading process described an answer in an unknown form")
    kind = desc.get("kind")
    if kind == "missing":
        return MISSING
    if kind == "value":
        return desc.get("value")
    if kind == "kernel":
        return RemoteKernel(channel, desc)
    if kind == "function":
        return RemoteFunction(channel, desc)
    from .._wire import Opaque

    return Opaque(str(desc.get("type") or "object"), str(desc.get("text") or ""))


is_remote = _elsewhere.is_remote
