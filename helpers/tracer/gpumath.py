"""GPU arithmetic for traced kernels: `math` functions and division give inf/nan where Python raises.

A kernel compiled by numba-cuda uses NumPy's error model: `math.sqrt(-1.0)` is nan, `math.log(0.0)`
is -inf, `1.0 / 0.0` is inf, and an integer `//` or `%` by zero is 0 (numba's _int_divmod_impl).
Python would raise instead, so the tracer swaps `math` for `FakeMath` and `/ // %` for `gpu_div`.
"""

import math

import numpy as np

# math functions with a NumPy ufunc of the same meaning: NumPy gives inf/nan and keeps float32.
_UFUNC = {
    "sqrt": np.sqrt,
    "exp": np.exp,
    "expm1": np.expm1,
    "log2": np.log2,
    "log10": np.log10,
    "log1p": np.log1p,
    "sin": np.sin,
    "cos": np.cos,
    "tan": np.tan,
    "asin": np.arcsin,
    "acos": np.arccos,
    "atan": np.arctan,
    "sinh": np.sinh,
    "cosh": np.cosh,
    "tanh": np.tanh,
    "asinh": np.arcsinh,
    "acosh": np.arccosh,
    "atanh": np.arctanh,
    "atan2": np.arctan2,
    "hypot": np.hypot,
    "fmod": np.fmod,
    "pow": np.power,
}


def _floats(args):
    """Python ints become float64 (math.* returns floats); NumPy scalars keep their type."""
    return [a if isinstance(a, np.floating) else np.float64(a) for a in args]


def _ufunc(f):
    def call(*args):
        with np.errstate(all="ignore"):
            return f(*_floats(args))

    return call


def _log(x, base=None):
    with np.errstate(all="ignore"):
        (x,) = _floats((x,))
        return np.log(x) if base is None else np.log(x) / np.log(np.float64(base))


def _guarded(f):
    """A math function with no ufunc (gamma, erf...): a domain error is nan, an overflow inf."""

    def call(*args):
        try:
            return f(*args)
        except ValueError:
            return math.nan
        except OverflowError:
            return math.inf

    return call


class FakeMath:
    """What `math` means inside a traced kernel."""

    def __getattr__(self, name):
        real = getattr(math, name)
        if name == "log":
            return _log
        if name in _UFUNC:
            return _ufunc(_UFUNC[name])
        if name in ("gamma", "lgamma", "erf", "erfc", "ldexp", "frexp"):
            return _guarded(real)
        return real


FAKE_MATH = FakeMath()


def gpu_div(a, b, op):
    """`a / b`, `a // b` or `a % b` as a GPU computes them: no ZeroDivisionError."""
    try:
        if op == "/":
            return a / b
        if op == "//":
            return a // b
        return a % b
    except ZeroDivisionError:
        pass
    ints = isinstance(a, (int, np.integer)) and isinstance(b, (int, np.integer))
    if op != "/" and ints:
        return 0
    with np.errstate(all="ignore"):
        x, y = np.float64(a), np.float64(b)
        return x / y if op == "/" else (x // y if op == "//" else np.fmod(x, y))
