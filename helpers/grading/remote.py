"""Stand-ins for answers that live in the student's process, while the grader's judge holds the
exercise.

Why: a check that runs inside the student's process can be talked into a pass (its frames read,
its emitter called, its comparisons patched). The batch grader therefore keeps every exercise,
reference and expected value in its own process and gives the check these stand-ins instead of
the student's objects. A stand-in carries the description the student's process gave at
``check()`` (name, signature, source, whether it is a kernel: ``_numba.described`` reads it) and
runs a call where the function lives; every other operation on it (trace, launch, compile, count
library calls) is the judged executor's (``grading/executor.py``), which decides where each runs.

``channel.request(op, **fields)`` returns the decoded reply or raises ``RemoteFailure``; the
grading child (``grading/serve.py``) answers the same operations with the real objects.
"""

from __future__ import annotations

import inspect
import io
from typing import NamedTuple

import numpy as np

from ..exercises.executor import RemoteFailure

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

    def __init__(self, channel, desc: dict):
        self._channel, self._desc = channel, desc
        self._handle = desc.get("handle")
        self.__name__ = str(desc.get("name") or "<lambda>")
        self.__qualname__ = str(desc.get("qualname") or self.__name__)
        sig = _signature(desc.get("params"))
        if sig is not None:
            self.__signature__ = sig

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

    # what _numba reads of an answer of another process
    @property
    def course_description(self) -> dict:
        return self._desc

    def course_python_function(self):
        return None


class RemoteKernel(RemoteFunction):
    """A student's ``@cuda.jit`` object: traced, launched and compiled by the judged executor."""

    def course_python_function(self):
        plain = {**self._desc, "kind": "function", "cuda": False, "device": False, "configured": False}
        fn = RemoteFunction(self._channel, plain)  # the def behind the kernel: no longer a @cuda.jit object
        return fn

    def __call__(self, *args, **kwargs):
        raise TypeError("a kernel is launched with kernel[blocks, threads](...), not called")

    def __repr__(self):
        return f"<your kernel {self.__name__}>"


def write_back(call_args, arrays):
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
    from ..exercises.base import MISSING

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
