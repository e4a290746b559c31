"""Vet a compile request that came from a student's process before the grader's compile server
acts on it.

Why: in judged grading (``helpers/grading/judge.py``) the student's process only *describes* a
kernel (``describe.request``: source texts, globals, argument types); the compile itself runs in
a server the grader started, so a submission cannot forge "compiles for the GPU". That server
turns parts of the request into objects: it ``exec``s each function's ``def`` (decorators,
annotations and defaults stripped there), ``eval``s Numba type texts, imports the modules globals
name, and Numba parses a string signature with ``eval``. A request is therefore accepted only in
the shapes ``describe.request`` writes: one plain ``def`` per function, type texts made of Numba
type names, constants, calls and subscripts, and library modules. Anything else raises
``NotDescribable``: the kernel is then "unchecked", never passed.
"""

from __future__ import annotations

import ast
import functools

from .describe import LIBRARIES, NotDescribable

MAX_FUNCTIONS = 64
MAX_SOURCE = 200_000
MAX_TEXT = 2_000  # one type or signature text
# A kernel's constant tables are small (blur weights, a few coefficients); a larger global array could hold
# the check's expected outputs, made after the student's process saw the inputs (out[i] = ANSWERS[i]).
MAX_ARRAY = 256
_KEYS = {"kernel", "functions", "globals", "argtypes", "params", "signature", "line"}
_SPECS = {"module", "attr", "literal", "npscalar", "array", "numba_type", "function", "opaque", "device"}
# the nodes a Numba type or signature text is made of: float32[:, ::1], Array(float32, 2, 'C'), void(int32)
_TYPE_NODES = (
    ast.Expression,
    ast.Name,
    ast.Attribute,
    ast.Call,
    ast.Subscript,
    ast.Slice,
    ast.Tuple,
    ast.Constant,
    ast.keyword,
    ast.Load,
)


@functools.cache
def _type_names() -> frozenset:
    """The names of numba.core.types that are types or type classes (what type texts may use)."""
    from numba.core import types

    return frozenset(
        k
        for k, v in vars(types).items()
        if not k.startswith("_") and (isinstance(v, types.Type) or (isinstance(v, type) and issubclass(v, types.Type)))
    )


def _name(x, what: str, limit: int = 200) -> str:
    if not isinstance(x, str) or not x.isidentifier() or len(x) > limit:
        raise NotDescribable(f"{what} is not a name")
    return x


def type_text(text, names=frozenset(), what="a type") -> str:
    """``text`` when it is a Numba type expression over type names (and ``names``)."""
    if not isinstance(text, str) or len(text) > MAX_TEXT:
        raise NotDescribable(f"{what} is not a type")
    try:
        tree = ast.parse(text.strip(), mode="eval")
    except (SyntaxError, ValueError):
        raise NotDescribable(f"{what} is not a type") from None
    allowed = _type_names() | names
    for node in ast.walk(tree):
        if not isinstance(node, _TYPE_NODES):
            raise NotDescribable(f"{what} uses {type(node).__name__}")
        if isinstance(node, ast.Name) and node.id not in allowed:
            raise NotDescribable(f"{what} names {node.id!r}")
        if isinstance(node, ast.Attribute) and node.attr.startswith("_"):
            raise NotDescribable(f"{what} reads {node.attr!r}")
        if isinstance(node, ast.Constant) and not isinstance(node.value, (int, float, str, bool, type(None))):
            raise NotDescribable(f"{what} holds {type(node.value).__name__}")
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and node is not tree.body:
            if not (node.value.isidentifier() or node.value in ("C", "F", "A")):  # a layout like 'C'
                raise NotDescribable(f"{what} holds a string")
        if isinstance(node, ast.keyword) and (node.arg is None or node.arg.startswith("_")):
            raise NotDescribable(f"{what} passes **kwargs")
    if isinstance(tree.body, ast.Constant) and isinstance(tree.body.value, str):  # "void(float32[:])"
        type_text(tree.body.value, names, what)  # Numba evals that string too
    return text


def _function(f: dict) -> None:
    if not isinstance(f, dict) or set(f) - {"name", "filename", "firstlineno", "source", "device"}:
        raise NotDescribable("a function is described oddly")
    name = _name(f.get("name"), "a function")
    if not isinstance(f.get("filename"), str) or len(f["filename"]) > 1000:
        raise NotDescribable("a function's file is not a path")
    if type(f.get("firstlineno")) is not int or not 1 <= f["firstlineno"] <= 10**7:
        raise NotDescribable("a function's line is not a number")
    if type(f.get("device")) is not bool:
        raise NotDescribable("a function's kind is not said")
    source = f.get("source")
    if not isinstance(source, str) or len(source) > MAX_SOURCE:
        raise NotDescribable(f"no source for {name}")
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        raise NotDescribable(f"the source of {name} does not parse") from None
    if len(tree.body) != 1 or not isinstance(tree.body[0], ast.FunctionDef) or tree.body[0].name != name:
        raise NotDescribable(f"the source of {name} is not one def")


def _global(name: str, spec, signature_names: set) -> None:
    _name(name, "a global")
    if not isinstance(spec, (list, tuple)) or not spec or spec[0] not in _SPECS:
        raise NotDescribable(f"global {name} is described oddly")
    kind, rest = spec[0], list(spec[1:])
    if kind == "module":
        if len(rest) != 1 or not isinstance(rest[0], str) or rest[0].partition(".")[0] not in LIBRARIES:
            raise NotDescribable(f"global {name} is not a library module")
        if any(not p.isidentifier() or p.startswith("__") for p in rest[0].split(".")):
            raise NotDescribable(f"global {name} is not a library module")
    elif kind == "attr":
        if len(rest) != 2 or not all(isinstance(r, str) for r in rest) or rest[0].partition(".")[0] not in LIBRARIES:
            raise NotDescribable(f"global {name} is not from a library")
        if any(not p.isidentifier() or p.startswith("__") for p in (rest[0] + "." + rest[1]).split(".")):
            raise NotDescribable(f"global {name} is not from a library")
    elif kind == "numba_type":
        if len(rest) != 1:
            raise NotDescribable(f"global {name} is described oddly")
        type_text(rest[0], what=f"global {name}")
        signature_names.add(name)
    elif kind in ("literal", "npscalar"):
        if not all(isinstance(r, str) and len(r) <= MAX_SOURCE for r in rest) or len(rest) != (
            1 if kind == "literal" else 2
        ):
            raise NotDescribable(f"global {name} is described oddly")
        try:
            value = ast.literal_eval(rest[-1])
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            raise NotDescribable(f"global {name} is not a constant") from None
        if isinstance(value, (tuple, list)) and _count(value) > MAX_ARRAY:  # a table written as a tuple
            raise NotDescribable(
                f"global {name} is a tuple of {_count(value)} values; the grader takes constant tables of at most "
                f"{MAX_ARRAY} (pass larger data to the kernel as an argument)"
            )
        if kind == "npscalar":
            _dtype(rest[0], name)
        elif isinstance(value, str):
            signature_names.add(name)  # @cuda.jit(SIG) with SIG = "void(...)": checked when used
    elif kind == "array":
        if len(rest) != 3 or not isinstance(rest[1], list) or not isinstance(rest[2], list):
            raise NotDescribable(f"global {name} is described oddly")
        _dtype(rest[0], name)
        if not all(type(s) is int and s >= 0 for s in rest[2]):
            raise NotDescribable(f"global {name} has an odd shape")
        if len(rest[1]) > MAX_ARRAY:
            raise NotDescribable(
                f"global {name} is an array of {len(rest[1])} values; the grader takes constant tables of at most "
                f"{MAX_ARRAY} (pass larger data to the kernel as an argument)"
            )
    elif len(rest) != 1 or not isinstance(rest[0], str) or len(rest[0]) > 200:  # function, opaque, device
        raise NotDescribable(f"global {name} is described oddly")


def _count(value) -> int:
    """The values in a (nested) tuple, as a kernel would index them."""
    return sum(_count(v) if isinstance(v, (tuple, list)) else 1 for v in value)


def _dtype(text, name) -> None:
    import numpy as np

    try:
        dt = np.dtype(str(text))
    except TypeError:
        raise NotDescribable(f"global {name} has an odd dtype") from None
    if dt.kind not in "biufc" or dt.fields:
        raise NotDescribable(f"global {name} has an odd dtype")


def vet(request) -> dict:
    """``request`` when the grader's compile server may act on it; else NotDescribable."""
    if not isinstance(request, dict) or set(request) != _KEYS:
        raise NotDescribable("the kernel was described oddly")
    functions = request["functions"]
    if not isinstance(functions, list) or not 1 <= len(functions) <= MAX_FUNCTIONS:
        raise NotDescribable("the kernel was described oddly")
    for f in functions:
        _function(f)
    kernel = _name(request["kernel"], "the kernel")
    if functions[-1]["name"] != kernel:
        raise NotDescribable("the kernel was described oddly")
    if not isinstance(request["globals"], dict) or len(request["globals"]) > 10_000:
        raise NotDescribable("the kernel's globals were described oddly")
    signature_names: set = set()
    for name, spec in request["globals"].items():
        _global(name, spec, signature_names)
    if not isinstance(request["argtypes"], list) or not isinstance(request["params"], list):
        raise NotDescribable("the kernel's arguments were described oddly")
    for t in request["argtypes"]:
        type_text(t, what="an argument type")
    for p in request["params"]:
        _name(p, "a parameter")
    if type(request["line"]) is not int:
        raise NotDescribable("the kernel's line is not a number")
    sig = request["signature"]
    if sig is not None:
        text = type_text(sig, frozenset(signature_names), what="the signature")
        body = ast.parse(text.strip(), mode="eval").body
        if isinstance(body, ast.Name) and request["globals"][body.id][0] == "literal":
            type_text(ast.literal_eval(request["globals"][body.id][1]), what="the signature")
    return request
