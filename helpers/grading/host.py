"""A learner's host function (notebook 14's library exercises) described in the student's process
and run again in the judge's own worker, so that the library calls it makes are counted there.

Why: counting ``cuda.compute`` calls in the student's process believes that process, which can
patch ``json.dumps``, replace the counted functions, or call once on nothing (issue 29 item 2).
The description is taken when check() is called, before any input exists (``serve.py``): the
function's source, the plain functions it calls, and its globals by kind. The judge's tracer worker
(``workers.py``) rebuilds it from that description, with the libraries behind views that hand out
no module and nothing private, and builtins that cannot reach a frame, a module or a file.

``vet`` accepts only what ``describe`` writes and only source that stays inside that: no imports,
no names or attributes with underscores, no attribute assignment, no frame or code attributes,
no class or generator machinery. Anything else is refused with the reason; the exercise then
fails with one sentence (``exercises/library_calls.py``), never passes.
"""

from __future__ import annotations

import ast
import builtins
import importlib
import inspect
import textwrap

import numpy as np

# module globals a host function may use, by the name the worker gives them (stand-ins by the real name)
LIBRARIES = {
    "numpy": "numpy",
    "math": "math",
    "cupy": "cupy",
    "helpers.standins.cupy": "cupy",
    "cuda.compute": "cuda.compute",
    "helpers.standins.cuda_compute": "cuda.compute",
    "numba.cuda": "numba.cuda",
}
# np.random.default_rng(...), cp.cuda.Stream(...) and the like, behind a view too
SUBMODULES = {"random", "linalg", "fft", "cuda"}
# numba.cuda as a host function sees it (notebook 16): streams, events, copies and host memory, nothing
# that compiles, launches a kernel of its own, or takes a raw pointer
NUMBA_CUDA = {
    "stream", "default_stream", "event", "event_elapsed_time", "synchronize", "to_device", "device_array",
    "device_array_like", "pinned_array", "pinned_array_like", "mapped_array", "mapped_array_like", "pinned",
}  # fmt: skip
SAFE_BUILTINS = (
    "abs all any bool dict divmod enumerate float int isinstance len list max min print range repr reversed "
    "round set slice sorted str sum tuple zip ArithmeticError AssertionError AttributeError Exception IndexError "
    "KeyError LookupError RuntimeError TypeError ValueError ZeroDivisionError True False None"
).split()
# attributes that reach a frame, code or globals without an underscore
BLOCKED_ATTRS = {
    "gi_frame", "gi_code", "cr_frame", "cr_code", "ag_frame", "ag_code", "f_back", "f_globals", "f_locals",
    "f_builtins", "f_code", "tb_frame", "tb_next", "format", "format_map", "mro",
}  # fmt: skip
BLOCKED_NODES = (
    ast.Import, ast.ImportFrom, ast.Global, ast.Nonlocal, ast.ClassDef, ast.AsyncFunctionDef, ast.Await,
    ast.Yield, ast.YieldFrom, ast.AsyncFor, ast.AsyncWith,
)  # fmt: skip
MAX_FUNCTIONS, MAX_SOURCE, MAX_VALUES = 16, 100_000, 256
_NOT_THEIRS = {"numpy", "cupy", "cuda", "numba", "math", "helpers"}  # functions of libraries and the course
_SPECS = {"module", "literal", "npscalar", "array", "function", "opaque"}


class NotRebuildable(Exception):
    """The function cannot be run again from its description; the message says why."""


def describe(fn) -> dict:
    """The description of a plain function, taken in the student's process."""
    if not inspect.isfunction(fn):
        raise NotRebuildable("it is not a plain Python function")
    functions, names, seen = [], {}, set()
    _add(fn, functions, names, seen)
    return {"function": fn.__name__, "functions": functions, "globals": names}


def _add(fn, functions, names, seen):
    if fn in seen:
        return
    seen.add(fn)
    if len(seen) > MAX_FUNCTIONS:
        raise NotRebuildable("it calls too many functions of its own")
    try:
        source = textwrap.dedent(inspect.getsource(fn))
    except (OSError, TypeError):
        raise NotRebuildable(f"the source of {fn.__name__} is not available") from None
    functions.append({"name": fn.__name__, "source": source})
    cv = inspect.getclosurevars(fn)
    for name, value in {**cv.globals, **cv.nonlocals}.items():
        if inspect.isfunction(value) and str(value.__module__).partition(".")[0] not in _NOT_THEIRS:
            _add(value, functions, names, seen)  # a function of the learner's own: sent as source
            names[name] = ("function", value.__name__)
        else:
            names.setdefault(name, _spec(value))


def _spec(value):
    if inspect.ismodule(value):
        name = LIBRARIES.get(value.__name__)
        return ("module", name) if name else ("opaque", "module")
    if isinstance(value, np.generic) and value.dtype.kind in "biufc":
        return ("npscalar", value.dtype.str, repr(value.item()))
    if value is None or isinstance(value, (bool, int, float, complex, str)):
        return ("literal", repr(value))
    if isinstance(value, np.ndarray) and value.size <= MAX_VALUES and value.dtype.kind in "biufc":
        return ("array", value.dtype.str, value.ravel().tolist(), list(value.shape))
    return ("opaque", type(value).__name__[:100])


def vet(desc) -> dict:
    """``desc`` when the judge's worker may run it; else NotRebuildable with the reason."""
    if not isinstance(desc, dict) or set(desc) != {"function", "functions", "globals"}:
        raise NotRebuildable("it was described oddly")
    functions, names = desc["functions"], desc["globals"]
    if not isinstance(functions, list) or not 1 <= len(functions) <= MAX_FUNCTIONS or not isinstance(names, dict):
        raise NotRebuildable("it was described oddly")
    defined = set()
    for f in functions:
        if not isinstance(f, dict) or set(f) != {"name", "source"} or not isinstance(f["source"], str):
            raise NotRebuildable("it was described oddly")
        _vet_source(f["name"], f["source"])
        defined.add(f["name"])
    if desc["function"] != functions[0]["name"]:
        raise NotRebuildable("it was described oddly")
    for name, spec in names.items():
        _vet_global(name, spec, defined)
    return desc


def _vet_source(name, source) -> None:
    if not isinstance(name, str) or not name.isidentifier() or len(source) > MAX_SOURCE:
        raise NotRebuildable("it was described oddly")
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        raise NotRebuildable(f"the source of {name} does not parse") from None
    if len(tree.body) != 1 or not isinstance(tree.body[0], ast.FunctionDef) or tree.body[0].name != name:
        raise NotRebuildable(f"the source of {name} is not one def")
    tree.body[0].decorator_list = []
    for node in ast.walk(tree):
        if isinstance(node, BLOCKED_NODES):
            raise NotRebuildable(f"{name} uses {type(node).__name__.lower()}, which the grader does not run")
        if isinstance(node, ast.Attribute) and (node.attr.startswith("_") or node.attr in BLOCKED_ATTRS):
            raise NotRebuildable(f"{name} reads .{node.attr}, which the grader does not run")
        if isinstance(node, ast.Attribute) and not isinstance(node.ctx, ast.Load):
            raise NotRebuildable(f"{name} assigns to .{node.attr}, which the grader does not run")
        if isinstance(node, ast.Name) and node.id.startswith("__"):
            raise NotRebuildable(f"{name} uses {node.id}, which the grader does not run")


def _vet_global(name, spec, defined) -> None:
    if not isinstance(name, str) or not name.isidentifier() or name.startswith("__"):
        raise NotRebuildable("a global was described oddly")
    if not isinstance(spec, (list, tuple)) or not spec or spec[0] not in _SPECS:
        raise NotRebuildable(f"global {name} was described oddly")
    kind, rest = spec[0], list(spec[1:])
    if kind == "module" and (len(rest) != 1 or rest[0] not in set(LIBRARIES.values())):
        raise NotRebuildable(f"global {name} is not a library the grader provides")
    if kind == "function" and (len(rest) != 1 or rest[0] not in defined):
        raise NotRebuildable(f"global {name} was described oddly")
    if kind in ("literal", "npscalar"):
        try:
            value = ast.literal_eval(str(rest[-1])[:MAX_SOURCE])
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            raise NotRebuildable(f"global {name} is not a constant") from None
        if isinstance(value, (tuple, list, dict, set)) or len(rest) != (1 if kind == "literal" else 2):
            raise NotRebuildable(f"global {name} was described oddly")
        if kind == "npscalar" and np.dtype(str(rest[0])).kind not in "biufc":
            raise NotRebuildable(f"global {name} was described oddly")
    if kind == "array":
        if len(rest) != 3 or not isinstance(rest[1], list) or len(rest[1]) > MAX_VALUES:
            raise NotRebuildable(f"global {name} is an array larger than {MAX_VALUES} values")
        if np.dtype(str(rest[0])).kind not in "biufc" or not all(type(s) is int and s >= 0 for s in rest[2]):
            raise NotRebuildable(f"global {name} was described oddly")


class _View:
    """A library module as the rebuilt function sees it: attributes (of ``only``, when given), but no
    module and nothing private."""

    __slots__ = ("_module", "_only")

    def __init__(self, module, only=None):
        object.__setattr__(self, "_module", module)
        object.__setattr__(self, "_only", only)

    def __getattr__(self, attr):
        only = object.__getattribute__(self, "_only")
        if attr.startswith("_") or (only is not None and attr not in only):
            raise AttributeError(f"{attr} is not available while the grader runs your function")
        value = getattr(object.__getattribute__(self, "_module"), attr)
        if inspect.ismodule(value):
            if attr in SUBMODULES:
                return _View(value)
            raise AttributeError(f"{attr} (a module) is not available while the grader runs your function")
        return value

    def __setattr__(self, attr, value):
        raise AttributeError("library modules are read-only while the grader runs your function")


def rebuild(desc):
    """The described function, defined again in a namespace of this process (a vetted description)."""
    from ..standins import library

    vet(desc)
    safe = {k: getattr(builtins, k) for k in SAFE_BUILTINS if hasattr(builtins, k)}
    # A library's C code that imports lazily (PyImport_Import) looks up __import__ in the builtins of the
    # Python frame calling it, which is this function's: without it CuPy or cuda.compute fail with
    # KeyError: '__import__' on a GPU. The vetted source cannot name it (no underscores).
    safe["__import__"] = builtins.__import__
    ns = {"__builtins__": safe}
    for name, spec in desc["globals"].items():
        kind = spec[0]
        if kind == "module":
            mod = library(spec[1]) if spec[1] in ("cupy", "cuda.compute") else importlib.import_module(spec[1])
            ns[name] = _View(mod, NUMBA_CUDA if spec[1] == "numba.cuda" else None)
        elif kind == "literal":
            ns[name] = ast.literal_eval(spec[1])
        elif kind == "npscalar":
            ns[name] = np.dtype(spec[1]).type(ast.literal_eval(spec[2]))
        elif kind == "array":
            ns[name] = np.array(spec[2], dtype=spec[1]).reshape(spec[3])
        elif kind == "opaque":
            ns[name] = type(str(spec[1]), (), {})()
    for f in desc["functions"]:
        tree = ast.parse(f["source"])
        tree.body[0].decorator_list = []
        exec(compile(tree, f"<your {f['name']}>", "exec"), ns)  # noqa: S102 - vetted source, no decorators
    for name, spec in desc["globals"].items():
        if spec[0] == "function":  # a helper read under another name
            ns[name] = ns[spec[1]]
    return ns[desc["function"]]
