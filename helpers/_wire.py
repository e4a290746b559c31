"""Plain data across a process boundary: JSON with tagged NumPy arrays and scalars, no pickle.

Why: the grader's trusted process and the process that runs a student's code (``grading/``)
exchange inputs, outputs and trace summaries. Nothing decoded here can run code or carry a
home-made ``__eq__``: every value comes back as a built-in type, an exact NumPy array or scalar
of a numeric dtype, or an ``Opaque`` stand-in that equals nothing. Encoding turns subclasses
(``class Liar(int)``) into their base value, so a result can only be right by being right.
"""

from __future__ import annotations

import base64
import json
import math

import numpy as np

MAX_DEPTH = 32
MAX_ITEMS = 1_000_000  # elements of containers in one message
_KINDS = "biufc"  # bool, int, uint, float, complex: the dtypes arrays and scalars may have
_MODULES = ("numpy", "cupy")  # a module passed as an argument (``fn(xp, ...)``) travels by name
# cuda.bindings result codes travel by class and member name, so ``err.name`` still works there
# (notebook 10 hands a learner's check_result an ``(err, *values)`` tuple); only these modules' classes
_ENUM_MODULES = ("cuda.bindings.driver", "cuda.bindings.runtime", "cuda.bindings.nvrtc")


class WireError(ValueError):
    """A message that is not plain data as this module writes it."""


class Opaque:
    """Something that was not plain data (an object, a class, a function): equal to nothing."""

    def __init__(self, name: str, text: str = ""):
        self.name, self.text = str(name)[:80], str(text)[:200]

    def __eq__(self, other):
        return False

    __hash__ = object.__hash__

    def __repr__(self):
        return self.text or f"<a {self.name} object>"


def type_name(x) -> str:
    """The name of ``x``'s type, or of the type it had before crossing as an ``Opaque``: a check's
    sentence ("return bytes, not ObjectCode") reads the same for a stand-in's result."""
    return x.name if isinstance(x, Opaque) else type(x).__name__


class Interface:
    """An object that carries only a ``__cuda_array_interface__`` dict (no memory behind it)."""

    _wire_interface = True

    def __init__(self, cai: dict):
        self.__cuda_array_interface__ = cai

    def __repr__(self):
        cai = self.__cuda_array_interface__
        return f"<array shape={cai.get('shape')} typestr={cai.get('typestr')!r} strides={cai.get('strides')}>"


def encode(x, depth: int = 0, budget: list | None = None):
    """``x`` as JSON-able plain data (see the module docstring)."""
    budget = [MAX_ITEMS] if budget is None else budget
    budget[0] -= 1
    if budget[0] < 0:
        raise WireError("too many values in one message")
    if depth > MAX_DEPTH:
        return {"$opaque": "nesting", "text": "<nested too deeply>"}
    if x is None or type(x) is bool or type(x) is str:
        return x
    if x is Ellipsis:
        return {"$ellipsis": 1}
    if isinstance(x, bool):
        return bool(x)
    if type(x).__module__ in _ENUM_MODULES and isinstance(getattr(x, "name", None), str):
        return {"$enum": f"{type(x).__module__}:{type(x).__name__}", "name": x.name}
    if isinstance(x, np.ndarray):
        return _array(x)
    if isinstance(x, np.generic):
        if x.dtype.kind not in _KINDS:
            return {"$opaque": type(x).__name__, "text": str(x)[:200]}
        return {"$scalar": x.dtype.str, "data": base64.b64encode(np.asarray(x).tobytes()).decode()}
    if isinstance(x, int):
        return {"$int": str(int.__int__(x))} if abs(int.__int__(x)) >= 2**53 else int.__int__(x)
    if isinstance(x, float):
        v = float.__float__(x)
        return v if math.isfinite(v) else {"$float": repr(v)}
    if isinstance(x, complex):
        v = complex.__complex__(x)
        return {"$complex": [repr(v.real), repr(v.imag)]}
    if isinstance(x, str):
        return str.__str__(x)
    if isinstance(x, (bytes, bytearray)):
        return {"$bytes": base64.b64encode(bytes(x)).decode()}
    if isinstance(x, tuple):
        return {"$tuple": [encode(v, depth + 1, budget) for v in tuple.__iter__(x)]}
    if isinstance(x, list):
        return [encode(v, depth + 1, budget) for v in list.__iter__(x)]
    if isinstance(x, dict):
        return {"$dict": [[encode(k, depth + 1, budget), encode(v, depth + 1, budget)] for k, v in dict.items(x)]}
    if isinstance(x, (set, frozenset)):
        return {"$set": [encode(v, depth + 1, budget) for v in x]}
    if type(x).__name__ == "module" and getattr(x, "__name__", None) in _MODULES:
        return {"$module": x.__name__}
    if getattr(type(x), "_wire_interface", False):  # an exercise's input that is only an interface dict
        return {"$cai": encode(dict(x.__cuda_array_interface__), depth + 1, budget)}
    if hasattr(x, "__cuda_array_interface__") and hasattr(x, "get"):  # a CuPy array: its values
        try:
            return _array(np.asarray(x.get()), device=True)
        except Exception:  # a broken device array is no value
            pass
    if str(type(x).__module__).startswith("cuda."):
        # no repr: without a driver, cuda.core 1.2's ObjectCode.__repr__ loads the module, fails, and
        # leaves cuda.bindings' driver-loading lock held, so the process's next driver call hangs
        return {"$opaque": type(x).__name__, "text": f"<a {type(x).__name__} object>"}
    try:
        text = repr(x)
    except Exception:  # a student's __repr__ may raise
        text = ""
    return {"$opaque": type(x).__name__, "text": text[:200]}


def _array(a: np.ndarray, device: bool = False):
    if a.dtype.kind not in _KINDS or a.dtype.hasobject:
        return {"$opaque": "ndarray", "text": f"<an array of {a.dtype}>"}
    a = np.ascontiguousarray(a).reshape(a.shape)  # ascontiguousarray makes a 0-d array (CuPy's x[i]) 1-d
    out = {"$array": a.dtype.str, "shape": list(a.shape), "data": base64.b64encode(a.tobytes()).decode()}
    if device:
        out["device"] = True
    return out


def decode(x, depth: int = 0, modules: dict | None = None):
    """The inverse of ``encode``; raises WireError on anything it did not write."""
    if depth > MAX_DEPTH + 2:
        raise WireError("nested too deeply")
    if x is None or isinstance(x, (bool, int, float, str)):
        return x
    if isinstance(x, list):
        return [decode(v, depth + 1, modules) for v in x]
    if not isinstance(x, dict) or len(x) == 0:
        raise WireError(f"unexpected {type(x).__name__}")
    if "$array" in x:
        dt = _dtype(x["$array"])
        shape = tuple(int(s) for s in x["shape"])
        data = base64.b64decode(x["data"])
        if len(data) != dt.itemsize * math.prod(shape):
            raise WireError("array data of the wrong length")
        return np.frombuffer(data, dt).reshape(shape).copy()
    if "$scalar" in x:
        dt = _dtype(x["$scalar"])
        data = base64.b64decode(x["data"])
        if len(data) != dt.itemsize:
            raise WireError("scalar data of the wrong length")
        return np.frombuffer(data, dt)[0]
    if "$ellipsis" in x:
        return Ellipsis
    if "$int" in x:
        return int(str(x["$int"]))
    if "$float" in x:
        return float(str(x["$float"]))
    if "$complex" in x:
        re_, im = x["$complex"]
        return complex(float(re_), float(im))
    if "$bytes" in x:
        return base64.b64decode(x["$bytes"])
    if "$tuple" in x:
        return tuple(decode(v, depth + 1, modules) for v in x["$tuple"])
    if "$dict" in x:
        out = {}
        for k, v in x["$dict"]:
            key = decode(k, depth + 1, modules)
            try:
                hash(key)
            except TypeError:
                key = repr(key)
            out[key] = decode(v, depth + 1, modules)
        return out
    if "$set" in x:
        items = [decode(v, depth + 1, modules) for v in x["$set"]]
        try:
            return set(items)
        except TypeError:
            return Opaque("set")
    if "$module" in x:
        name = str(x["$module"])
        if name not in _MODULES:
            raise WireError(f"module {name!r} cannot be passed")
        if modules is not None and name in modules:
            return modules[name]
        return __import__(name)
    if "$opaque" in x:
        return Opaque(x["$opaque"], x.get("text", ""))
    if "$enum" in x:
        return _enum(str(x["$enum"]), str(x.get("name")))
    if "$cai" in x:
        cai = decode(x["$cai"], depth + 1, modules)
        if not isinstance(cai, dict):
            raise WireError("an interface that is not a dict")
        return Interface(cai)
    raise WireError(f"unknown tag {sorted(x)[:3]}")


def _enum(where: str, name: str):
    """The member ``name`` of a cuda.bindings result-code class, looked up, never built."""
    import importlib

    module, _, cls_name = where.partition(":")
    if module not in _ENUM_MODULES or not cls_name.isidentifier() or not name.isidentifier():
        raise WireError(f"enum {where!r} cannot be passed")
    try:
        cls = getattr(importlib.import_module(module), cls_name)
        member = getattr(cls, name)
    except (ImportError, AttributeError):
        raise WireError(f"no enum member {cls_name}.{name}") from None
    if not isinstance(cls, type) or type(member) is not cls:
        raise WireError(f"{cls_name}.{name} is not an enum member")
    return member


def _dtype(s) -> np.dtype:
    try:
        dt = np.dtype(str(s))
    except TypeError as e:
        raise WireError(f"bad dtype {s!r}") from e
    if dt.kind not in _KINDS or dt.hasobject or dt.fields:
        raise WireError(f"dtype {dt} is not plain data")
    return dt


def dumps(obj) -> bytes:
    """One message as one line (the caller encodes values inside it with ``encode``)."""
    return json.dumps(obj, ensure_ascii=True, separators=(",", ":")).encode() + b"\n"


def loads(line: bytes):
    try:
        return json.loads(line)
    except (ValueError, RecursionError) as e:
        raise WireError(f"not a message: {type(e).__name__}") from None
