"""A Numba kernel run from the PTX Numba's own compiler makes, on the PTX interpreter.

    t = helpers.ptx.numba_run.trace(saxpy, 4, 256, np.float32(2), x, y, out, outputs=(3,))

The same call as ``helpers.tracer.trace`` and the same ``Trace`` back (verdicts, metrics, pictures),
but what runs is not the learner's Python under an emulation of GPU arithmetic: it is the PTX a GPU
would run, compiled by the compile server (the real NVVM, no GPU needed) with line info, so every
access and verdict names the learner's own Python line.

How a launch is made: Numba passes each array as its data model, flattened into parameters
(meminfo, parent, nitems, itemsize, data pointer, then shape and strides, one per dimension); a
scalar as one parameter of its Numba type (a Python int is int64, a float float64). The
interpreter sees the data pointer as the array, so the access log, the out-of-bounds checks and
the write-back work as for CUDA C; the arrays are then named after the kernel's parameters.

Where Numba's PTX uses something the interpreter cannot run, ``UnsupportedByTracer`` names the
instruction; the caller falls back to the tracer and says so.
"""

from __future__ import annotations

import inspect
import numbers
import re
from dataclasses import replace

import numpy as np

from .. import _numba
from ..compile_check import client, describe
from ..errors import LearnerError, UnsupportedByTracer
from ..tracer.result import Trace
from . import run
from .adapter import to_trace

__all__ = ["compile", "compile_described", "entry", "flatten", "trace"]


def compile(kernel, args) -> str:  # noqa: A001 - the verb this module is about
    """PTX text of ``kernel`` for the types of ``args``, with line info, from the compile server."""
    try:
        request = describe.request(kernel, args)
    except describe.NotDescribable as e:
        raise UnsupportedByTracer(f"this kernel cannot be sent to Numba's compiler ({e})") from None
    return compile_described(request)


def compile_described(request, *, optimise=False, fastmath=False) -> str:
    """PTX text for a ``describe.request``; ``optimise``: -O3 as a GPU launch compiles (the server's
    default is unoptimised), ``fastmath``: the kernel's ``@cuda.jit(fastmath=True)``. Raises
    ``client.Unavailable`` when the server cannot answer."""
    flags = {"optimise": True} if optimise else {}
    if fastmath:
        flags["fastmath"] = True
    answer = client.compile_request({**request, "want_ptx": True, **flags})
    if answer.get("ok") is None:
        raise UnsupportedByTracer(f"Numba's compiler is not available here ({answer.get('message', '')})")
    if not answer["ok"]:
        raise LearnerError(f"Numba's CUDA compiler refused the kernel: {answer.get('message', '')}".strip())
    return answer["ptx"]


def entry(text: str) -> str:
    """The name of the one kernel in Numba's PTX."""
    found = re.search(r"\.entry\s+([\w$]+)\s*\(", text)
    if found is None:
        raise UnsupportedByTracer("Numba's PTX has no kernel entry")
    return found.group(1)


def flatten(args) -> tuple[list, dict]:
    """The kernel's parameters as Numba's data model passes them, and for each flattened position
    of a data pointer the position of the argument it came from."""
    flat, origin = [], {}
    for pos, a in enumerate(args):
        if isinstance(a, np.ndarray):
            host = a if a.flags.c_contiguous else np.ascontiguousarray(a)  # the interpreter runs on this copy
            shape = a.shape or (1,)
            origin[len(flat) + 4] = pos
            flat += [np.uint64(0), np.uint64(0), np.int64(a.size), np.int64(a.itemsize), a]
            flat += [np.int64(s) for s in shape] + [np.int64(s) for s in (host.strides or (a.itemsize,))]
        elif isinstance(a, (bool, np.bool_)):
            flat.append(np.uint8(bool(a)))
        elif isinstance(a, np.generic):
            flat.append(a)
        elif isinstance(a, numbers.Integral):
            flat.append(np.int64(a))
        elif isinstance(a, numbers.Real):
            flat.append(np.float64(a))
        else:
            raise LearnerError(f"argument {pos} is a {type(a).__name__}; a kernel takes NumPy arrays and numbers.")
    return flat, origin


def trace(kernel, griddim, blockdim, *args, outputs=()) -> Trace:
    """Compile ``kernel`` with Numba, run its PTX on the CPU and return the Trace; ``outputs``:
    positions (or names) of the parameters every thread must fill."""
    fn = _numba.python_function(kernel) or kernel
    names = list(inspect.signature(fn).parameters)
    text = compile(kernel, args)
    flat, origin = flatten(args)
    r = run(text, entry(text), griddim, blockdim, flat)
    r.kernel_name = fn.__name__
    r.arrays = [
        replace(a, name=names[origin[a.param]], var=names[origin[a.param]] if a.var else "", param=origin[a.param])
        if a.param in origin
        else a
        for a in r.arrays
    ]
    wanted = [names[o] if isinstance(o, int) else o for o in outputs]
    return to_trace(r, wanted, language="python")
