"""How trace() reads the launch: `trace(kernel, griddim, blockdim, *args)` or `trace(kernel[griddim, blockdim], *args)`.

A GPU's `kernel[g, b]` is a launch configuration of its own; the simulator's configures the kernel
itself, and the kernel keeps it after the launch. So in CPU mode a kernel launched before still
"looks configured", and only the call to trace says whether that launch is meant: its source is read.
"""

import ast
import inspect
import linecache
import numbers
import sys
import types as pytypes
from pathlib import Path

from .. import _numba
from ..errors import LearnerError, shown
from .watchdog import HELPERS

_PACKAGE_INIT = str(Path(HELPERS) / "__init__.py")


def split(kernel, args):
    """(python function, griddim, blockdim, sharedmem, kernel args) from either call style."""
    config = _numba.launch_configuration(kernel)
    func = _numba.python_function(kernel)
    if func is None:
        if isinstance(kernel, pytypes.FunctionType):
            func = kernel
        else:
            raise LearnerError(f"trace() needs a @cuda.jit kernel, not {type(kernel).__name__}.")
    if _numba.is_device_function(kernel):
        raise LearnerError(
            f"{func.__name__} is a device function (device=True); trace the kernel that calls it instead."
        )
    nparams = len(inspect.signature(func).parameters)
    simulated = type(kernel).__name__ == "FakeCUDAKernel"
    if config is not None and simulated:
        # The simulator's kernel[g, b] configures the kernel itself and the kernel keeps it after the
        # launch, where a GPU's kernel[g, b] is a launch of its own: only the call to trace says which.
        stated = _launch_in_call(func.__name__)
        if stated is not None and stated[0] is False and len(args) == nparams:
            raise LearnerError(
                f"trace({stated[1]}, ...) names no launch: write trace({stated[1]}[griddim, blockdim], ...) or "
                f"trace({stated[1]}, griddim, blockdim, ...); in CPU mode {stated[1]} still holds the "
                f"[{_dims(config[1])}, {_dims(config[2])}] of an earlier launch, which a GPU kernel does not keep, "
                "so trace() does not use it."
            )
        if stated is not None and stated[0] is True and len(args) == nparams + 2:
            raise LearnerError(_twice(stated[1], args))
    if config is not None and (len(args) == nparams or not simulated):
        if not simulated and len(args) == nparams + 2 and _dims_like(args[0], args[1]):
            raise LearnerError(_twice(func.__name__, args))
        _, griddim, blockdim, sharedmem = config
        return func, griddim, blockdim, sharedmem, args
    if len(args) < 2:
        raise LearnerError(
            "Give the launch: trace(kernel, griddim, blockdim, *args) or trace(kernel[griddim, blockdim], *args)."
        )
    return func, args[0], args[1], 0, args[2:]


def _twice(name, args):
    return (
        f"trace() was given the launch twice, as {name}[...] and as {shown(args[0])}, {shown(args[1])}: give it "
        "once, trace(kernel[griddim, blockdim], *args) or trace(kernel, griddim, blockdim, *args)."
    )


def _dims_like(*values):
    ok = (numbers.Integral, tuple)
    return all(isinstance(v, ok) and not isinstance(v, bool) for v in values)


def _dims(d):
    """(4, 1, 1) -> '4', (16, 16, 1) -> '(16, 16)': a launch dimension as a learner writes it."""
    d = tuple(int(x) for x in d)
    while len(d) > 1 and d[-1] == 1:
        d = d[:-1]
    return str(d[0]) if len(d) == 1 else str(d)


def _launch_in_call(name):
    """Did the learner's call to trace write the launch, `trace(k[4, 256], ...)`? (True, "k") when it
    did, (False, "k") when it passed the kernel by its own name `name`, None when that cannot be read
    (no source, a call from helpers' own code, another name: `cfg = k[4, 256]` is a launch too)."""
    frame = sys._getframe(3)  # _launch_in_call <- split <- trace <- its caller
    if frame is not None and frame.f_code.co_filename == _PACKAGE_INIT and frame.f_code.co_name == "trace":
        frame = frame.f_back  # helpers.trace, the learner's entry point
    if frame is None or frame.f_code.co_filename.startswith(HELPERS):
        return None
    call = _call_source(frame)
    if not isinstance(call, ast.Call) or not call.args:
        return None
    f = call.func
    if (f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else None) != "trace":
        return None
    first = call.args[0]
    if isinstance(first, ast.Subscript):
        return True, ast.unparse(first.value)
    if isinstance(first, ast.Starred):
        return None
    last = first.id if isinstance(first, ast.Name) else first.attr if isinstance(first, ast.Attribute) else None
    return (False, ast.unparse(first)) if last == name else None


def _call_source(frame):
    """The AST of the call the frame is making now (its source span, Python 3.11+), or None."""
    try:
        positions = list(frame.f_code.co_positions())
        lineno, end_lineno, col, end_col = positions[frame.f_lasti // 2]
        lines = linecache.getlines(frame.f_code.co_filename, frame.f_globals)
        if None in (lineno, end_lineno, col, end_col) or end_lineno > len(lines):
            return None
        text = [line.encode() for line in lines[lineno - 1 : end_lineno]]
        text[-1] = text[-1][:end_col]
        text[0] = text[0][col:]
        return ast.parse(b"".join(text).decode(), mode="eval").body
    except (AttributeError, IndexError, ValueError, SyntaxError, UnicodeDecodeError):
        return None
