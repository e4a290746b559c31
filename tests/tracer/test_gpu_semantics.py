"""What real kernels use, traced with GPU semantics: negative indices that wrap, record fields and
xoroshiro RNG states, captured global arrays, math and division giving inf/nan, ufuncs with an
output array, local and constant arrays, 3-D launches and every atomic numba-cuda offers."""

import math

import numpy as np
import pytest
from numba import cuda
from numba.cuda.random import create_xoroshiro128p_states, xoroshiro128p_uniform_float32

from helpers.errors import KernelError
from helpers.tracer import VERDICT_KINDS, trace


def _kinds(t):
    return sorted(v.kind for v in t.verdicts)


# -- negative indices ------------------------------------------------------------------------


@cuda.jit
def diff(x, out):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = x[i] - x[i - 1]


def test_negative_index_wraps_and_is_its_own_verdict():
    x = np.arange(1, 9, dtype=np.float32) ** 2
    out = np.zeros(8, np.float32)
    t = trace(diff, 1, 8, x, out, outputs=("out",))
    assert "negative_index" in VERDICT_KINDS
    assert _kinds(t) == ["negative_index"], t.summary()
    v = t.verdicts[0]
    assert v.index == (-1,) and v.thread == (0, 0, 0) and v.block == (0, 0, 0) and v.line is not None
    assert "`x[-1]` in thread 0 of block 0" in v.message and "wraps to the last element in Numba" in v.message
    assert "CUDA C" in v.message and "`if i > 0:`" in v.message and "does not wrap" not in v.message
    assert out[0] == x[0] - x[7]  # the wrapped value, as numba-cuda computes it on a GPU


@cuda.jit
def write_negative(out):
    i = cuda.grid(1)
    out[i - 2, 0] = i


def test_negative_index_write_wraps_in_2d():
    out = np.zeros((4, 2), np.int64)
    t = trace(write_negative, 1, 4, out)
    assert _kinds(t) == ["negative_index"]
    assert t.verdicts[0].count == 2 and "out[-2, 0]" in t.verdicts[0].message
    np.testing.assert_array_equal(out[:, 0], [2, 3, 0, 1])


@cuda.jit
def far_negative(x, out):
    i = cuda.grid(1)
    out[i] = x[i - 10]


def test_index_below_minus_size_is_out_of_bounds():
    x, out = np.ones(4, np.float32), np.zeros(4, np.float32)
    t = trace(far_negative, 1, 4, x, out)
    assert _kinds(t) == ["out_of_bounds"]
    assert "wraps a negative index once" in t.verdicts[0].message
    assert "does not wrap" not in t.verdicts[0].message


# -- record fields and the xoroshiro RNG ----------------------------------------------------

POINT = np.dtype([("x", np.float32), ("y", np.float32)])


@cuda.jit
def move_points(pts, dx):
    i = cuda.grid(1)
    if i < pts.size:
        pts[i].x = pts[i].x + dx[i]
        pts[i]["y"] = 2 * pts[i]["y"]


def test_record_fields_are_read_and_written():
    pts = np.zeros(4, POINT)
    pts["x"], pts["y"] = [1, 2, 3, 4], [5, 6, 7, 8]
    t = trace(move_points, 1, 4, pts, np.full(4, 10, np.float32), outputs=("pts",))
    assert t.ok, t.summary()
    np.testing.assert_array_equal(pts["x"], [11, 12, 13, 14])
    np.testing.assert_array_equal(pts["y"], [10, 12, 14, 16])
    a = t.accesses
    fields = np.isin(a.array, [t.array_id("pts.x"), t.array_id("pts.y")])  # each field is logged on its own
    assert np.count_nonzero(a.kind[fields] == 1) == 8  # two field writes per thread


@cuda.jit
def shared_point(pts):
    pts[0].x = cuda.threadIdx.x


def test_two_threads_writing_one_record_race():
    t = trace(shared_point, 1, 4, np.zeros(1, POINT))
    assert _kinds(t) == ["race"] and "pts[0].x" in t.verdicts[0].message


@cuda.jit
def split_point(pts):
    t = cuda.threadIdx.x
    if t % 2 == 0:
        pts[t // 2].x = 1.0  # even threads own the x of a record, odd threads its y: different bytes
    else:
        pts[t // 2].y = 2.0


def test_threads_writing_different_fields_of_one_record_do_not_race():
    pts = np.zeros(4, POINT)
    t = trace(split_point, 1, 8, pts, outputs=("pts",))
    assert t.ok, t.summary()
    assert np.all(pts["x"] == 1) and np.all(pts["y"] == 2)


@cuda.jit
def uniforms(states, out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = xoroshiro128p_uniform_float32(states, i)


@cuda.jit
def uniforms_one_state(states, out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = xoroshiro128p_uniform_float32(states, 0)  # every thread advances the same state


def _states(n, seed):
    s = create_xoroshiro128p_states(n, seed=seed)
    return s.copy_to_host() if hasattr(s, "copy_to_host") else np.asarray(s)


def test_xoroshiro_states_advance_like_numba():
    states, out = _states(16, 7), np.zeros(16, np.float32)
    before = states.copy()
    t = trace(uniforms, 1, 16, states, out, outputs=("out",))
    assert t.ok, t.summary()
    assert np.all((out >= 0) & (out < 1)) and len(np.unique(out)) == 16
    assert np.all(states["s0"] != before["s0"])  # the state writes are visible
    ref = before.copy()
    for i in range(16):  # numba's own CPU implementation gives the same numbers
        assert out[i] == xoroshiro128p_uniform_float32.py_func(ref, i)


def test_threads_sharing_one_rng_state_race():
    t = trace(uniforms_one_state, 1, 8, _states(8, 1), np.zeros(8, np.float32))
    assert _kinds(t) == ["race"], t.summary()
    assert "states[0]" in t.verdicts[0].message


# -- captured globals --------------------------------------------------------------------------

PRICES = np.array([10.0, 11.0, 12.5, 12.0], np.float64)


@cuda.jit
def returns(out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = PRICES[i] / PRICES[i - 1] - 1.0


@cuda.jit
def returns_guarded(out):
    i = cuda.grid(1)
    if 0 < i < out.size:
        out[i] = PRICES[i] / PRICES[i - 1] - 1.0


@cuda.jit
def past_global(out):
    i = cuda.grid(1)
    out[i] = PRICES[i + 1]


@cuda.jit
def writes_global(out):
    i = cuda.grid(1)
    PRICES[i] = 0.0


def test_captured_global_is_traced_and_bounds_checked():
    out = np.zeros(4)
    t = trace(returns, 1, 4, out)
    assert _kinds(t) == ["negative_index"] and "PRICES[-1]" in t.verdicts[0].message
    assert trace(returns_guarded, 1, 4, np.zeros(4)).ok
    t = trace(past_global, 1, 4, np.zeros(4))
    assert _kinds(t) == ["out_of_bounds"] and "PRICES[4]" in t.verdicts[0].message
    assert np.count_nonzero(t.accesses.array == t.array_id("PRICES")) == 3


def test_captured_global_is_read_only():
    with pytest.raises(KernelError, match="PRICES is read-only"):
        trace(writes_global, 1, 4, np.zeros(4))
    assert PRICES[0] == 10.0


# -- math, division and ufuncs -----------------------------------------------------------------


@cuda.jit
def gpu_math(x, out):
    out[0] = math.sqrt(-1.0)
    out[1] = math.log(0.0)
    out[2] = 1.0 / 0.0
    out[3] = -1.0 / 0.0
    out[4] = 0.0 / 0.0
    out[5] = math.acos(2.0)
    out[6] = math.exp(1000.0)
    out[7] = x[0] / x[1]
    out[8] = math.sqrt(x[0])
    out[9] = math.log(x[0], 2.0)


def test_math_and_float_division_give_inf_and_nan():
    out = np.zeros(10)
    t = trace(gpu_math, 1, 1, np.array([4.0, 0.0]), out)
    assert t.ok, t.summary()
    assert math.isnan(out[0]) and out[1] == -math.inf and out[2] == math.inf and out[3] == -math.inf
    assert math.isnan(out[4]) and math.isnan(out[5]) and out[6] == math.inf and out[7] == math.inf
    assert out[8] == 2.0 and out[9] == 2.0


@cuda.jit
def int_division(a, out):
    i = cuda.grid(1)
    d = i - 2
    out[i, 0] = a[i] // d
    out[i, 1] = a[i] % d
    q = 7
    q //= d
    out[i, 2] = q


def test_integer_division_by_zero_is_zero_like_numba_cuda():
    out = np.full((4, 3), -9, np.int64)
    t = trace(int_division, 1, 4, np.full(4, 7, np.int64), out)
    assert t.ok, t.summary()
    np.testing.assert_array_equal(out[2], [0, 0, 0])  # numba's numpy error model: 0, no exception
    np.testing.assert_array_equal(out[3], [7, 0, 7])


@cuda.jit
def float32_math(x, out):
    i = cuda.grid(1)
    out[i] = math.sqrt(x[i])


def test_math_keeps_float32():
    x = np.array([2.0, -1.0], np.float32)
    out = np.zeros(2, np.float32)
    trace(float32_math, 1, 2, x, out)
    assert out[0] == np.sqrt(np.float32(2.0)) and math.isnan(out[1])


@cuda.jit
def ufunc_out(x, r):
    if cuda.grid(1) == 0:
        np.sin(x, r)


def test_ufunc_with_output_array():
    x, r = np.linspace(0, 3, 8), np.zeros(8)
    t = trace(ufunc_out, 1, 1, x, r, outputs=("r",))
    assert t.ok, t.summary()
    np.testing.assert_allclose(r, np.sin(x))
    assert len(t.accesses) == 16


# -- local and constant arrays, 3-D launches -------------------------------------------------

TABLE = np.array([1, 2, 4, 8], np.int32)


@cuda.jit
def local_and_const(out):
    i = cuda.grid(1)
    tmp = cuda.local.array(3, np.int32)
    c = cuda.const.array_like(TABLE)
    for k in range(3):
        tmp[k] = c[k] * i
    out[i] = tmp[0] + tmp[1] + tmp[2] + c[i]


def test_local_and_const_arrays():
    out = np.zeros(4, np.int32)
    t = trace(local_and_const, 1, 4, out, outputs=("out",))
    assert t.ok, t.summary()
    np.testing.assert_array_equal(out, 7 * np.arange(4) + TABLE)


@cuda.jit
def const_past_end(out):
    i = cuda.grid(1)
    c = cuda.const.array_like(TABLE)
    out[i] = c[i + 1]


@cuda.jit
def const_write(out):
    c = cuda.const.array_like(TABLE)
    c[0] = 3


def test_const_array_is_bounds_checked_and_read_only():
    t = trace(const_past_end, 1, 4, np.zeros(4, np.int32))
    assert _kinds(t) == ["out_of_bounds"] and "const c[4]" in t.verdicts[0].message
    with pytest.raises(KernelError, match="read-only"):
        trace(const_write, 1, 1, np.zeros(1, np.int32))


@cuda.jit
def local_past_end(out):
    tmp = cuda.local.array(2, np.int32)
    tmp[2] = 1
    out[0] = tmp[0]


def test_local_array_is_bounds_checked():
    t = trace(local_past_end, 1, 1, np.zeros(1, np.int32))
    assert _kinds(t) == ["out_of_bounds"] and "local tmp[2]" in t.verdicts[0].message


@cuda.jit
def fill_3d(out):
    x, y, z = cuda.grid(3)
    if x < out.shape[2] and y < out.shape[1] and z < out.shape[0]:
        out[z, y, x] = x + 10 * y + 100 * z


def test_3d_launch():
    out = np.zeros((3, 5, 6), np.int32)
    t = trace(fill_3d, (2, 3, 2), (4, 2, 2), out, outputs=("out",))
    assert t.ok, t.summary()
    z, y, x = np.indices(out.shape)
    np.testing.assert_array_equal(out, x + 10 * y + 100 * z)
    assert t.nthreads == 12 * 16


# -- atomics -----------------------------------------------------------------------------------


@cuda.jit
def every_atomic(f, i, old):
    cuda.atomic.add(f, 0, 1.5)
    cuda.atomic.sub(f, 1, 1.0)
    cuda.atomic.max(f, 2, 7.0)
    cuda.atomic.min(f, 3, -7.0)
    cuda.atomic.nanmax(f, 4, 3.0)
    cuda.atomic.nanmin(f, 5, -3.0)
    old[0] = cuda.atomic.exch(i, 0, 42)
    cuda.atomic.inc(i, 1, 3)
    cuda.atomic.dec(i, 2, 9)
    old[1] = cuda.atomic.cas(i, 3, 0, 5)
    cuda.atomic.and_(i, 4, 0b0110)
    cuda.atomic.or_(i, 5, 0b0001)
    cuda.atomic.xor(i, 6, 0b0011)


def test_every_atomic():
    f = np.array([0.0, 0.0, 0.0, 0.0, np.nan, np.nan])
    i = np.array([1, 0, 0, 0, 0b1111, 0b1000, 0b0101], np.int64)
    old = np.zeros(2, np.int64)
    t = trace(every_atomic, 1, 4, f, i, old)
    assert _kinds(t) == ["race"], t.summary()  # old[] is written by all four threads
    np.testing.assert_array_equal(f, [6.0, -4.0, 7.0, -7.0, 3.0, -3.0])
    # exch: 42; inc wraps at 3: 0->1->2->3->0; dec from 0 wraps to 9, then 8, 7, 6; cas sets 5 once
    np.testing.assert_array_equal(i, [42, 0, 6, 5, 0b0110, 0b1001, 0b0101])
    assert old[1] == 5 and old[0] == 42


def test_a_shared_rng_state_is_one_verdict_that_says_one_state_per_thread():
    t = trace(uniforms_one_state, 1, 8, _states(8, 1), np.zeros(8, np.float32))
    assert len(t.verdicts) == 1, t.summary()
    msg = t.verdicts[0].message
    assert "give each thread its own state" in msg and "cuda.atomic.add" not in msg, msg
