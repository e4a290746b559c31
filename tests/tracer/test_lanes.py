"""Lanes (helpers.tracer.lanes): every operation, lane by lane, gives the value and type the
per-thread tracer's own Python gives that thread, or refuses (a fallback), never something else."""

import operator

import numpy as np
import pytest

from helpers.tracer.lanes import Diverged, Lanes, binary, first, lanes_max, lanes_min, unary
from helpers.tracer.records import VectorFallback

RNG = np.random.default_rng(3)
N = 64

# (name, lanes, the per-thread value of lane k)
OPERANDS = {
    "py int": Lanes(RNG.integers(-40, 40, N), int),
    "py float": Lanes(RNG.normal(size=N) * 7, float),
    "py bool": Lanes(RNG.random(N) < 0.5, bool),
    "float32": Lanes(RNG.normal(size=N).astype(np.float32) * 3),
    "float64": Lanes(RNG.normal(size=N)),
    "int32": Lanes(RNG.integers(-(2**31), 2**31, N).astype(np.int32)),
    "int64": Lanes(RNG.integers(-1000, 1000, N)),
    "uint8": Lanes(RNG.integers(0, 256, N).astype(np.uint8)),
}
UNIFORM = [3, -2, 2.5, True, np.float32(1.5), np.int32(7), np.uint8(200), np.float64(-0.25)]
OPS = [
    operator.add,
    operator.sub,
    operator.mul,
    operator.truediv,
    operator.floordiv,
    operator.mod,
    operator.and_,
    operator.or_,
    operator.lt,
    operator.ge,
    operator.eq,
    operator.ne,
]


def _same(got, want):
    """Equal value and equal type, as a thread would see it (nan equals nan)."""
    if type(got) is not type(want):
        return False
    return got == want or (got != got and want != want)


def _check(op, a, b):
    """op on lanes: either a fallback, or every lane exactly the scalar result."""
    try:
        with np.errstate(all="ignore"):
            out = binary(op, a, b)
    except VectorFallback:
        return "fallback"
    for k in range(N):
        sa = a.scalar(k) if isinstance(a, Lanes) else a
        sb = b.scalar(k) if isinstance(b, Lanes) else b
        with np.errstate(all="ignore"):
            want = op(sa, sb)
        assert _same(out.scalar(k), want), (op.__name__, sa, sb, out.scalar(k), want)
    return "ok"


@pytest.mark.parametrize("op", OPS, ids=lambda o: o.__name__)
def test_binary_lane_by_lane(op):
    results = []
    for a in OPERANDS.values():
        for b in list(OPERANDS.values()) + UNIFORM:
            results.append(_check(op, a, b))
            results.append(_check(op, b, a))
    assert "ok" in results  # the common cases run as lanes, not only as fallbacks


def test_float32_with_python_int_stays_float32():
    # the case NumPy arrays get wrong without NEP 50's weak Python ints: x[i] * i with i a thread index
    x = Lanes(np.full(4, 16777217.0, np.float64).astype(np.float32))
    i = Lanes(np.array([16777217, 3, 5, 7]), int)
    out = x * i
    assert out.v.dtype == np.float32 and out.weak is None
    assert _same(out.scalar(0), np.float32(16777216.0) * 16777217)


def test_division_by_zero_is_left_to_the_per_thread_path():
    i = Lanes(np.array([1, 0, 2]), int)
    with pytest.raises(VectorFallback):
        _ = 6 // i


def test_python_ints_that_may_outgrow_int64_fall_back():
    big = Lanes(np.array([2**40, 3]), int)
    with pytest.raises(VectorFallback):
        _ = big * big


def test_branches_and_integers_need_every_lane_to_agree():
    same = Lanes(np.array([4, 4, 4]), int)
    assert bool(same) is True and int(same) == 4 and list(range(same)) == [0, 1, 2, 3]
    split = Lanes(np.array([0, 1, 1]), int)
    with pytest.raises(Diverged):
        bool(split)
    with pytest.raises(Diverged):
        range(split)
    assert not Lanes(np.zeros(3, bool), bool)


def test_float32_lanes_refuse_to_become_a_python_float():
    # np.float64(x) of a thread's float32 keeps float32 semantics nowhere: better run per thread
    with pytest.raises(VectorFallback):
        float(Lanes(np.ones(2, np.float32)))


def test_unary_and_numpy_ufuncs():
    x = Lanes(np.array([True, False]), bool)
    neg = -x
    assert neg.weak is int and [neg.scalar(k) for k in range(2)] == [-1, 0]
    f = Lanes(np.array([-1.5, 2.0], np.float32))
    assert unary(operator.abs, f).v.dtype == np.float32
    with pytest.raises(TypeError):
        np.sqrt(f)  # NumPy's ufuncs refuse lanes: the run falls back rather than guess


def test_first_is_lane_zero_or_the_value():
    assert first(Lanes(np.array([5, 6]), int)) == 5 and first(9) == 9


@pytest.mark.parametrize("pick,builtin", [(lanes_min, min), (lanes_max, max)], ids=["min", "max"])
def test_min_and_max_pick_lane_by_lane_what_the_builtins_pick(pick, builtin):
    nan = Lanes(np.where(RNG.random(N) < 0.2, np.nan, RNG.normal(size=N)), float)
    for a, b in [
        (OPERANDS["py int"], 0),
        (5, OPERANDS["py int"]),
        (OPERANDS["float32"], OPERANDS["float32"] * np.float32(-1)),
        (nan, 0.5),
        (0.5, nan),
    ]:
        out = pick(a, b)
        for k in range(N):
            sa = a.scalar(k) if isinstance(a, Lanes) else a
            sb = b.scalar(k) if isinstance(b, Lanes) else b
            assert _same(out.scalar(k), builtin(sa, sb)), (sa, sb)
    assert pick(3, 4) == builtin(3, 4) and pick([5, 1, 7]) == builtin([5, 1, 7])


def test_min_of_two_types_picked_differently_falls_back():
    # per thread, min(np.float32(v), 0.0) is sometimes a float32 and sometimes a Python float
    v = Lanes(np.array([-1.0, 2.0], np.float32))
    with pytest.raises(VectorFallback):
        lanes_min(v, 0.0)
    assert lanes_min(v, 5.0) is v  # every lane picks v: its type stays


def test_types_and_sizes_numpy_would_treat_otherwise_fall_back():
    from helpers.tracer.lanes import supported

    # uint64 against signed ints: float64 in NumPy's promotion, exact comparisons in its scalars
    assert supported(np.dtype(np.uint32)) and not supported(np.dtype(np.uint64))
    assert not supported(np.dtype(np.float16))
    big = Lanes(np.array([2**53 + 1, 3]), int)  # Python divides it exactly, float64 first rounds it
    with pytest.raises(VectorFallback):
        _ = big / 3
    assert (Lanes(np.array([7, 3]), int) / 2).weak is float
