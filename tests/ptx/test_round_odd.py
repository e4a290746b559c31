"""values.round_odd moves an even float64 sum one step toward the exact value by its bit pattern: the same
result as np.nextafter toward the exact sum, which it replaced (fma.f32 and directed-rounding adds use it)."""

from __future__ import annotations

import numpy as np

from helpers.ptx.values import round_odd, two_sum


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
