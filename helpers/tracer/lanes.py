"""`Lanes`: one value per thread of a block (or of several blocks), as NumPy arrays, with the
meaning each thread's own value has in the per-thread tracer.

The vectorized tracer (helpers.tracer.vector) runs a kernel's Python once for many threads, with
`threadIdx` and `blockIdx` as Lanes. Every operation on Lanes must give, lane by lane, exactly what
the per-thread tracer's Python gives each thread, so a Lanes value remembers the type each lane
would hold: a Python int, float or bool (`weak`, NumPy's NEP 50 rules make those adapt to the other
operand) or a NumPy scalar of the array's dtype. The result type is taken from running the operation
on lane 0's own value; the arrays are cast to it, and lane 0's result is compared with the scalar
one as a check. Where lanes would need different control flow (an `if`, a loop bound, an `int()`),
or anything is not plainly equivalent, `Diverged` or `VectorFallback` is raised and the caller runs
those threads one at a time instead.
"""

import operator

import numpy as np

from .records import VectorFallback

_DTYPES = frozenset("?bhilqBHI" + "fd")  # bool, signed ints, unsigned up to 32 bits, float32/64 (no uint64)
_WEAK_DTYPE = {int: np.dtype(np.int64), float: np.dtype(np.float64), bool: np.dtype(np.bool_)}
_BIG = 1 << 62  # a Python int result at least this large could leave int64: not vectorized
_COMPARE = frozenset({operator.lt, operator.le, operator.gt, operator.ge, operator.eq, operator.ne})
_DIVIDE = frozenset({operator.truediv, operator.floordiv, operator.mod})


class Diverged(VectorFallback):
    """Lanes disagree where a thread needs one Python value (a branch, a loop bound, an int())."""


def supported(dtype):
    """Can Lanes hold values of this array dtype (the per-thread tracer's NumPy scalars)?"""
    return dtype.char in _DTYPES and dtype.byteorder in "=|"


def first(value):
    """Lane 0's value of a Lanes, or the value itself: what messages show for "the thread"."""
    return value.scalar(0) if isinstance(value, Lanes) else value


class Lanes:
    """One value per lane: `v` a 1-D NumPy array, `weak` the Python type each lane's value has
    in the per-thread tracer (int, float, bool), or None for NumPy scalars of `v.dtype`."""

    __slots__ = ("v", "weak")
    __array_ufunc__ = None  # NumPy hands its operators to us, and refuses its ufuncs (a fallback)
    __hash__ = None

    def __init__(self, v, weak=None):
        self.v, self.weak = v, weak

    def scalar(self, lane):
        """The value lane `lane` has in the per-thread tracer."""
        x = self.v[lane]
        return self.weak(x) if self.weak is not None else x

    def _uniform(self):
        v = self.v
        if len(v) and not (v == v[0]).all():
            raise Diverged("lanes differ where one value is needed")
        return self.scalar(0)

    def __bool__(self):
        v = self.v
        truth = v if v.dtype == np.bool_ else v != 0
        if truth.all():
            return True
        if not truth.any():
            return False
        raise Diverged("lanes take different branches")

    def __index__(self):
        if self.v.dtype.kind not in "iu" or self.weak is bool:
            raise VectorFallback("not an integer")
        return int(self._uniform())

    def __int__(self):
        return int(self._uniform())

    def __float__(self):
        if self.v.dtype == np.float32:  # float32 -> float would lose the type a NumPy call keeps
            raise VectorFallback("float32 lanes as a Python float")
        return float(self._uniform())

    def __repr__(self):
        return f"<lanes {self.v!r}>"

    # arithmetic: Python calls these for every operator on a Lanes, on either side
    def __add__(self, o):
        return binary(operator.add, self, o)

    def __radd__(self, o):
        return binary(operator.add, o, self)

    def __sub__(self, o):
        return binary(operator.sub, self, o)

    def __rsub__(self, o):
        return binary(operator.sub, o, self)

    def __mul__(self, o):
        return binary(operator.mul, self, o)

    def __rmul__(self, o):
        return binary(operator.mul, o, self)

    def __truediv__(self, o):
        return binary(operator.truediv, self, o)

    def __rtruediv__(self, o):
        return binary(operator.truediv, o, self)

    def __floordiv__(self, o):
        return binary(operator.floordiv, self, o)

    def __rfloordiv__(self, o):
        return binary(operator.floordiv, o, self)

    def __mod__(self, o):
        return binary(operator.mod, self, o)

    def __rmod__(self, o):
        return binary(operator.mod, o, self)

    def __and__(self, o):
        return binary(operator.and_, self, o)

    def __rand__(self, o):
        return binary(operator.and_, o, self)

    def __or__(self, o):
        return binary(operator.or_, self, o)

    def __ror__(self, o):
        return binary(operator.or_, o, self)

    def __xor__(self, o):
        return binary(operator.xor, self, o)

    def __rxor__(self, o):
        return binary(operator.xor, o, self)

    def __lt__(self, o):
        return binary(operator.lt, self, o)

    def __le__(self, o):
        return binary(operator.le, self, o)

    def __gt__(self, o):
        return binary(operator.gt, self, o)

    def __ge__(self, o):
        return binary(operator.ge, self, o)

    def __eq__(self, o):
        return binary(operator.eq, self, o)

    def __ne__(self, o):
        return binary(operator.ne, self, o)

    def __neg__(self):
        return unary(operator.neg, self)

    def __pos__(self):
        return unary(operator.pos, self)

    def __abs__(self):
        return unary(operator.abs, self)


def _sample(x):
    return x.scalar(0) if isinstance(x, Lanes) else x


def _result(r):
    """(dtype, weak) of a per-thread result, or a fallback for anything but a plain number."""
    t = type(r)
    if t in _WEAK_DTYPE:
        return _WEAK_DTYPE[t], t
    if isinstance(r, np.generic) and supported(r.dtype):
        return r.dtype, None
    raise VectorFallback(f"a result of type {t.__name__}")


def _cast(x, dtype):
    """Operand `x` (Lanes or a uniform scalar) as values of `dtype`, or a fallback where the
    per-thread tracer's NumPy would have refused the conversion (a Python int out of range)."""
    if not isinstance(x, Lanes):
        try:
            return dtype.type(x)
        except (OverflowError, TypeError, ValueError):  # NumPy 2 compares such an int exactly: not here
            raise VectorFallback(f"{x!r} as {dtype}") from None
    v = x.v
    if v.dtype == dtype:
        return v
    if x.weak is int and dtype.kind in "iu":
        info = np.iinfo(dtype)
        if v.min() < info.min or v.max() > info.max:
            raise VectorFallback("a Python int out of the range of the other operand's type")
    return v.astype(dtype)


def _too_big(op, a, b):
    """Could a Python-int operation leave int64 (where Python's ints grow and NumPy's wrap)?"""

    def top(x):
        return int(np.abs(x.v).max()) if isinstance(x, Lanes) else abs(int(x))

    ta, tb = top(a), top(b)
    if op is operator.mul:
        return ta * tb >= _BIG
    return ta >= _BIG or tb >= _BIG


def _inexact_int(x):
    """A Python int (of lanes or alone) past 2**53: Python divides it exactly, float64 first rounds it."""
    if isinstance(x, Lanes):
        return x.weak is int and int(np.abs(x.v).max()) >= 1 << 53
    return type(x) is int and abs(x) >= 1 << 53


def binary(op, a, b):
    """`op(a, b)` lane by lane, typed as each thread's Python would type it."""
    sa, sb = _sample(a), _sample(b)
    if op in _DIVIDE:
        d = b.v if isinstance(b, Lanes) else np.asarray(b)
        if (d == 0).any():
            raise VectorFallback("a division by zero (the per-thread tracer's gpu_div decides)")
    try:
        r = op(sa, sb)  # lane 0 as the per-thread tracer computes it: its type is every lane's
    except Exception as exc:
        raise VectorFallback(f"{op.__name__} raised {type(exc).__name__}") from None
    dtype, weak = _result(r)
    if op in _COMPARE:
        try:
            work = np.result_type(sa, sb)  # NEP 50: the dtype the scalars are compared in
        except (TypeError, OverflowError):
            raise VectorFallback("operands without a common dtype") from None
    else:
        work = dtype
        if weak is int and _too_big(op, a, b):
            raise VectorFallback("a Python int that may outgrow int64")
        if op is operator.truediv and (_inexact_int(a) or _inexact_int(b)):
            raise VectorFallback("a Python int too large for a float64 to hold exactly")
    if not supported(work):
        raise VectorFallback(f"arithmetic in {work}")
    out = op(_cast(a, work), _cast(b, work))
    if not isinstance(out, np.ndarray) or out.dtype != dtype:
        raise VectorFallback("NumPy's array result differs in type from the scalar one")
    _check_lane0(out, r)
    return Lanes(out, weak)


def unary(op, a):
    """`op(a)` lane by lane (negation, +, abs)."""
    try:
        r = op(a.scalar(0))
    except Exception as exc:
        raise VectorFallback(f"{op.__name__} raised {type(exc).__name__}") from None
    dtype, weak = _result(r)
    out = op(_cast(a, dtype))
    if out.dtype != dtype:
        raise VectorFallback("NumPy's array result differs in type from the scalar one")
    _check_lane0(out, r)
    return Lanes(out, weak)


def _check_lane0(out, r):
    """Lane 0 of the array result must be the per-thread result itself (bit for bit, nan too)."""
    got = out[0]
    if got == r or (got != got and r != r):
        return
    raise VectorFallback("lane 0 differs from the per-thread result")


def _kind(x):
    """The per-thread type of an operand: (dtype, weak) of lanes, (type, None) of a plain value."""
    return (x.v.dtype, x.weak) if isinstance(x, Lanes) else (type(x), None)


def _same_kind(a, b):
    ka, kb = _kind(a), _kind(b)
    if ka == kb:
        return True
    lanes, plain = (a, b) if isinstance(a, Lanes) else (b, a)
    if isinstance(plain, Lanes) or not isinstance(lanes, Lanes):
        return False
    if lanes.weak is not None:
        return type(plain) is lanes.weak
    return isinstance(plain, np.generic) and plain.dtype == lanes.v.dtype


def _pick(op, a, b):
    """Python's two-argument min (op <) or max (op >): b where op(b, a) holds, else a, each lane
    keeping the value (and type) it picked; a fallback where lanes would pick values of two types."""
    take_b = binary(op, b, a).v
    if take_b.all():
        return b
    if not take_b.any():
        return a
    if not _same_kind(a, b):
        raise VectorFallback("min or max of two types, picked differently by different lanes")
    model = a if isinstance(a, Lanes) else b
    dtype = model.v.dtype
    return Lanes(np.where(take_b, _cast(b, dtype), _cast(a, dtype)), model.weak)


def lanes_min(*args, **kwargs):
    """The kernel's `min`: the builtin, and lane by lane for two operands of which one is lanes."""
    if len(args) == 2 and not kwargs and (args[0].__class__ is Lanes or args[1].__class__ is Lanes):
        return _pick(operator.lt, *args)
    return min(*args, **kwargs)


def lanes_max(*args, **kwargs):
    """The kernel's `max`, as lanes_min."""
    if len(args) == 2 and not kwargs and (args[0].__class__ is Lanes or args[1].__class__ is Lanes):
        return _pick(operator.gt, *args)
    return max(*args, **kwargs)
