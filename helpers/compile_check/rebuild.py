"""Rebuild a described kernel (``describe.request``) as Python functions in a fresh namespace.

Why a module of its own: two processes of the grader's act on a kernel that the student's
process only described: the compile server (``server.py``, which Numba compiles it in) and the
judge's tracer worker (``grading/workers.py``, which runs it on the CPU tracer). Both rebuild it the
same way, and neither may run anything of the student's while doing so: a ``def`` is executed
without its decorators, annotations and default values, and type texts are evaluated without
builtins. Imports only NumPy and Numba, so the compile server can load it as a plain script's
neighbour without importing ``helpers`` (whose ``__init__`` switches the simulator on).
"""

import ast
import linecache
import sys

import numpy
from numba.core import types


def _value(spec, cuda):
    kind = spec[0]
    if kind == "module":
        __import__(spec[1])
        return sys.modules[spec[1]]
    if kind == "attr":
        __import__(spec[1])
        obj = sys.modules[spec[1]]
        for part in spec[2].split("."):
            obj = getattr(obj, part)
        return obj
    if kind == "literal":
        return ast.literal_eval(spec[1])
    if kind == "npscalar":
        return numpy.dtype(spec[1]).type(ast.literal_eval(spec[2]))
    if kind == "array":
        return numpy.array(spec[2], dtype=spec[1]).reshape(spec[3])
    if kind == "numba_type":
        return numba_type(spec[1])
    if kind == "function":

        def stub(*args):
            pass

        stub.__name__ = spec[1]
        return stub
    # "opaque": an object Numba cannot type, as the learner's was
    return type(spec[1], (), {})()


def numba_type(text):
    """A Numba type from its text (vetted by trust.py when it came from a student's process), with no
    builtins in reach."""
    return eval(text, {"__builtins__": {}}, dict(vars(types)))  # noqa: S307 - a type text


def plain_def(tree, name):
    """The one ``def`` of a function's source, without what a ``def`` statement would run: its
    decorators, annotations and default values (a kernel is launched with every argument, and
    Numba ignores annotations)."""
    if len(tree.body) != 1 or not isinstance(tree.body[0], ast.FunctionDef) or tree.body[0].name != name:
        raise ValueError(f"the source of {name} is not one def")
    fn_def = tree.body[0]
    fn_def.decorator_list = []
    fn_def.returns = None
    a = fn_def.args
    for arg in a.posonlyargs + a.args + a.kwonlyargs + [a.vararg, a.kwarg]:
        if arg is not None:
            arg.annotation = None
    a.defaults, a.kw_defaults = [], [None] * len(a.kwonlyargs)
    return fn_def


def build(request, cuda, numba):
    """Rebuild the learner's functions in a fresh namespace: globals first, then each function's
    source at its own line numbers (so Numba's line numbers are the learner's)."""
    ns = {"__builtins__": __builtins__, "cuda": cuda, "numba": numba}
    for name, spec in request["globals"].items():
        if spec[0] != "device":  # defined below, from its source
            ns[name] = _value(spec, cuda)
    files = {}
    for f in request["functions"]:
        tree = ast.parse(f["source"])
        plain_def(tree, f["name"])
        ast.increment_lineno(tree, f["firstlineno"] - 1)  # source line 1 is the first decorator
        code = compile(tree, f["filename"], "exec")
        exec(code, ns)  # noqa: S102 - a def without decorators, annotations or defaults: runs nothing
        lines = files.setdefault(f["filename"], [])
        src_lines = f["source"].splitlines(True)
        start = f["firstlineno"] - 1
        while len(lines) < start + len(src_lines):
            lines.append("\n")
        lines[start : start + len(src_lines)] = src_lines
        if f["device"]:
            ns[f["name"]] = cuda.jit(device=True)(ns[f["name"]])
    for filename, lines in files.items():
        linecache.cache[filename] = (sum(map(len, lines)), None, lines, filename)
    return ns
