"""values.round_odd moves an even float64 sum one step toward the exact value by its bit pattern: the same
result as np.nextafter toward the exact sum, which it replaced (fma.f32 and directed-rounding adds use it)."""

from __future__ import annotations

import numpy as np

from helpers.ptx.values import add_to_f32, round_odd, two_sum


def test_round_odd_by_bits_is_nextafter_toward_the_exact_sum():
    rng = np.random.default_rng(5)
    n = 200_000
    a = rng.standard_normal(n) * 10.0 ** rng.integers(-300, 300, n)
    b = rng.standard_normal(n) * 10.0 ** rng.integers(-300, 300, n)
    b[:1000] = -a[:1000]  # exact zeros
    b[1000:2000] = np.inf
    with np.errstate(all="ignore"):  # the interpreter runs with NumPy's warnings off: inf - inf is a value here
        s, e = two_sum(a, b)
    fix = (e != 0) & ((s.view(np.uint64) & 1) == 0) & np.isfinite(s)
    want = s.copy()
    want[fix] = np.nextafter(s[fix], np.where(e[fix] > 0, np.inf, -np.inf))
    assert fix.sum() > 1000
    assert round_odd(s, e).tobytes() == want.tobytes()


def test_fma_sum_halfway_between_two_floats_rounds_once():
    """1.000244140625 squared is 1 + 2^-11 + 2^-24, halfway between two float32 numbers; adding 2^-60 must
    round up. Rounded to float64 first the sum is the halfway point itself, and ties-to-even would round
    down: add_to_f32 works out the exact error where the float64 sum is such a halfway point."""
    a = np.float32(1 + 2.0**-12)
    p = np.array([a], np.float64) * np.float64(a)
    for c, want in ((2.0**-60, 1 + 2.0**-11 + 2.0**-23), (-(2.0**-60), 1 + 2.0**-11), (0.0, 1 + 2.0**-11)):
        got = add_to_f32(p, np.array([c]))
        assert got.dtype == np.float32 and got[0] == np.float32(want), (c, got)
    tiny = np.array([2.0**-149 * 1.5])  # halfway between the two smallest float32 subnormals, then nudged
    assert add_to_f32(tiny, np.array([2.0**-210]))[0] == np.float32(2.0**-148)
    assert add_to_f32(tiny, np.array([-(2.0**-210)]))[0] == np.float32(2.0**-149)
