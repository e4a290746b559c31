"""What the compile server needs to rebuild a kernel: its source, the device functions it calls,
the globals it reads, and the Numba types of the arguments, all as plain JSON.

Why not send the whole cell or module: a cell may hold a launch, plots or a `check(...)` call,
and re-running it elsewhere would run those too. Instead each global name the kernel (or a device
function it calls) reads is described by what it is: a module, a numeric constant, a Numba or
NumPy type, a device function (sent as source, recursively), or, for anything else, a stand-in of
the same kind so that Numba refuses it exactly as it would refuse the original.
"""

from __future__ import annotations

import ast
import builtins
import importlib
import inspect
import numbers
import textwrap

import numpy as np

from .. import _numba

# Packages the server imports itself; anything else (the learner's own modules) is not importable
# there, and is sent as a stand-in, which Numba refuses as it would refuse the original.
LIBRARIES = {"numpy", "math", "cmath", "numba", "operator"}
MAX_ARRAY = 4096  # elements of a global array sent as a constant; larger ones are not checked


class NotDescribable(Exception):
    """The kernel or an argument cannot be sent (no source, odd argument): skip the check."""


def _dtype_name(dtype):
    dtype = np.dtype(dtype)
    if dtype.fields is not None or dtype.kind not in "biufc":
        raise NotDescribable(f"arrays of {dtype}")
    return "boolean" if dtype.kind == "b" else dtype.name


def arg_type(value) -> str:
    """Numba type, as text the server evaluates in `numba.types`, of one launch argument."""
    if isinstance(value, (bool, np.bool_)):
        return "boolean"
    if isinstance(value, np.generic):
        return _dtype_name(value.dtype)
    if isinstance(value, numbers.Integral):
        return "int64"
    if isinstance(value, numbers.Real):
        return "float64"
    if isinstance(value, numbers.Complex):
        return "complex128"
    shape, dtype = getattr(value, "shape", None), getattr(value, "dtype", None)
    if shape is None or dtype is None:
        raise NotDescribable(type(value).__name__)
    ndim = len(shape)
    if ndim == 0:
        raise NotDescribable("0-d arrays")
    flags = getattr(value, "flags", None)
    c = flags is None or flags["C_CONTIGUOUS"]  # device arrays: contiguous
    f = flags is not None and flags["F_CONTIGUOUS"] and not c
    dims = [":"] * ndim
    if c:
        dims[-1] = "::1"
    elif f:
        dims[0] = "::1"
    return f"{_dtype_name(dtype)}[{', '.join(dims)}]"


def _literal(value):
    if value is None or isinstance(value, (bool, int, float, complex, str)):
        return True
    return isinstance(value, tuple) and all(_literal(v) for v in value)


def _importable(obj):
    """("attr", module, qualname) when importing module.qualname gives back `obj`."""
    mod, qual = getattr(obj, "__module__", None), getattr(obj, "__qualname__", None)
    if not mod or not qual or "<" in qual or mod.partition(".")[0] not in LIBRARIES:
        return None
    if mod.startswith("numba.cuda.simulator"):  # simulator stand-ins: the real thing has the name
        mod = "numba.cuda"
    try:
        found = importlib.import_module(mod)
        for part in qual.split("."):
            found = getattr(found, part)
    except (ImportError, AttributeError):
        return None
    return ("attr", mod, qual) if found is obj or mod == "numba.cuda" else None


def _spec(value, functions, seen):
    """JSON description of one global; device functions are added to `functions`."""
    if inspect.ismodule(value):
        name = value.__name__
        if _numba.is_cuda_module(value) or name.startswith("numba.cuda"):
            name = "numba.cuda"
        return ("module", name) if name.partition(".")[0] in LIBRARIES else ("opaque", "module")
    if _numba.is_cuda_function(value):
        fn = _numba.python_function(value)
        if _numba.is_device_function(value):
            _add_function(fn, True, functions, seen)
            return ("device", fn.__name__)
        return ("function", fn.__name__)  # a kernel called like a function
    if _numba.numba_type(value):
        return ("numba_type", repr(value))
    if isinstance(value, np.generic):
        return ("npscalar", value.dtype.str, repr(value.item()))
    if _literal(value):
        return ("literal", repr(value))
    if isinstance(value, np.dtype):
        return ("attr", "numpy", value.type.__name__)
    if isinstance(value, np.ndarray) and value.size <= MAX_ARRAY and value.dtype.kind in "biufc":
        return ("array", value.dtype.str, value.ravel().tolist(), list(value.shape))
    found = _importable(value)
    if found:
        return found
    if inspect.isfunction(value):
        return ("function", value.__name__)
    if isinstance(value, (list, dict, set)):
        return ("literal", repr(type(value)()))
    return ("opaque", type(value).__name__)


def _globals_of(fn):
    """Names `fn`'s code refers to in its module or closure, attribute names among them (see _add_function)."""
    cv = inspect.getclosurevars(fn)
    found = dict(cv.globals)
    found.update(cv.nonlocals)
    return found


def _add_function(fn, device, functions, seen):
    if fn in seen:
        return
    seen.add(fn)
    try:
        lines, first = inspect.getsourcelines(fn)
    except (OSError, TypeError):
        raise NotDescribable(f"no source for {fn.__name__}") from None
    entry = {
        "name": fn.__name__,
        "filename": fn.__code__.co_filename,
        "firstlineno": max(first, 1),
        "source": textwrap.dedent("".join(lines)),
        "device": device,
        "globals": {},
    }
    functions.append(entry)
    read = _names_read(entry["source"])
    local = set(fn.__code__.co_varnames) | set(fn.__code__.co_cellvars)
    for name, value in _globals_of(fn).items():
        # co_names holds attribute names too: cuda.threadIdx.x is no reason to send a global x (an array
        # the notebook made for another cell, which the vetting would refuse as a table), whether or not
        # the kernel has a parameter x
        if name in local or (read is not None and name not in read):
            continue
        if name != fn.__name__ or device:
            entry["globals"][name] = _spec(value, functions, seen)


def _names_read(source):
    """Every bare name in ``source`` (a function's text), or None when it does not parse."""
    try:
        return {n.id for n in ast.walk(ast.parse(source)) if isinstance(n, ast.Name)}
    except SyntaxError:
        return None


def _signature_text(source):
    """The source text of `@cuda.jit("void(...)")`'s signature argument, or None."""
    fn_def = ast.parse(source).body[0]
    for dec in fn_def.decorator_list:
        if isinstance(dec, ast.Call) and dec.args:
            return ast.get_source_segment(source, dec.args[0])
    return None


def _names_in(text) -> list:
    if not text:
        return []
    try:
        return [n.id for n in ast.walk(ast.parse(text.strip(), mode="eval")) if isinstance(n, ast.Name)]
    except SyntaxError:
        return []


def request(kernel, args) -> dict:
    """The JSON request for compiling `kernel` with these launch arguments."""
    return with_argtypes(kernel_description(kernel), args)


def with_argtypes(description: dict, args) -> dict:
    """A kernel's description completed with the Numba types of one launch's arguments. Why apart:
    the batch grader's judge takes the description from the student's process once, when the
    notebook calls check() and before any input exists, and adds the types of its own inputs here."""
    return {**description, "argtypes": [arg_type(a) for a in args]}


def kernel_description(kernel) -> dict:
    """Everything of a compile request that does not depend on the launch's arguments."""
    fn = _numba.python_function(kernel)
    if fn is None:
        raise NotDescribable("not a kernel")
    functions = []
    _add_function(fn, False, functions, set())
    names = {}
    for f in reversed(functions):  # the kernel's own view of a name wins
        names.update(f.pop("globals"))
    names = {k: v for k, v in names.items() if not hasattr(builtins, k) or v[0] != "function"}
    signature = _signature_text(functions[0]["source"])
    for name in _names_in(signature):  # @cuda.jit(SIG): the decorator's names are the module's too
        if name not in names and name in fn.__globals__:
            names[name] = _spec(fn.__globals__[name], functions, set())
    params = list(inspect.signature(fn).parameters)
    return {
        "kernel": fn.__name__,
        "functions": functions[::-1],  # device functions first, so the kernel can see them
        "globals": names,
        "params": params,
        "signature": signature,
        "line": functions[0]["firstlineno"],
    }
