"""helpers.standins.cupy_linalg: CuPy's compute types with CuPy's own numbers and rules, and a product whose
rounding is each format's: TF32 inputs rounded to 11 significant bits (checked against exact fractions),
float16 products rounded to float16, float32 plain."""

from __future__ import annotations

import subprocess
import sys
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

from helpers.standins import cupy as cp
from helpers.standins import cupy_linalg as cl

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(autouse=True)
def _fresh_types():
    saved = list(cl._types)
    cl._types[:] = [cl.COMPUTE_TYPE_TBD] * 3
    yield
    cl._types[:] = saved


def test_the_constants_are_cupys_own():
    real = pytest.importorskip("cupy._core._routines_linalg")
    for name in cl._NAMES.values():
        assert getattr(cl, name) == getattr(real, name), name


def _tf32_exact(v: float) -> float:
    """v rounded to nearest even with 11 significant bits, by fractions."""
    if v == 0:
        return 0.0
    f, e = abs(Fraction(v)), 0
    while f >= 2:
        f, e = f / 2, e + 1
    while f < 1:
        f, e = f * 2, e - 1
    q, r = divmod(f * 1024, 1)
    if r > Fraction(1, 2) or (r == Fraction(1, 2) and q % 2 == 1):
        q += 1
    return float((1 if v > 0 else -1) * q / 1024 * Fraction(2) ** e)


def test_tf32_rounding_is_to_nearest_even_at_eleven_bits():
    rng = np.random.default_rng(0)
    x = (rng.standard_normal(2000) * 10.0 ** rng.integers(-20, 20, 2000)).astype(np.float32)
    x[:2] = [1 + 2.0**-11, 1 + 3 * 2.0**-11]  # ties: down to 1, up to 1 + 2^-9
    got = cl.round_to_tf32(x)
    assert [float(g) for g in got] == [_tf32_exact(float(v)) for v in x]
    assert got[0] == 1.0 and got[1] == np.float32(1 + 2.0**-9)


def test_the_product_rounds_as_the_compute_type_says():
    rng = np.random.default_rng(1)
    a64, b64 = rng.standard_normal((32, 256)), rng.standard_normal((256, 16))
    a, b = cp.asarray(a64, cp.float32), cp.asarray(b64, cp.float32)
    assert cl.compute_type_to_str(cl.get_compute_type(np.float32)) == "COMPUTE_TYPE_DEFAULT"
    plain = cp.asnumpy(a @ b)
    assert np.array_equal(plain, np.asarray(a) @ np.asarray(b))
    cp._core.set_compute_type(cp.float32, cp._core._routines_linalg.COMPUTE_TYPE_TF32)
    tf32 = cp.asnumpy(cp.matmul(a, b))
    assert np.array_equal(tf32, cl.round_to_tf32(np.asarray(a)) @ cl.round_to_tf32(np.asarray(b)))
    ref = np.asarray(a, np.float64) @ np.asarray(b, np.float64)
    assert np.abs(tf32 - ref).max() > 100 * np.abs(plain - ref).max()  # 13 fewer bits show
    h = cp.asarray(a64, cp.float16) @ cp.asarray(b64, cp.float16)
    assert h.dtype == np.float16
    want = (np.asarray(a64, np.float16).astype(np.float32) @ np.asarray(b64, np.float16).astype(np.float32)).astype(
        np.float16
    )
    assert np.array_equal(cp.asnumpy(h), want)


def test_refusals_match_cupys():
    with pytest.raises(ValueError, match="Unknown compute type: 9"):
        cl.set_compute_type(np.float32, 9)
    with pytest.raises(TypeError, match="dtype is not supported"):
        cl.get_compute_type(np.int32)
    a = cp.asarray(np.ones((2, 3), np.float32))
    with pytest.raises(Exception, match="not aligned"):
        cp.matmul(a, a)
    v = cp.asarray(np.ones(3, np.float32))
    assert float(v @ v) == 3.0  # a 1-D dot product is NumPy's, as before


def test_cupy_tf32_in_the_environment_makes_float32_products_tf32():
    code = (
        "from helpers.standins import cupy_linalg as cl; import numpy as np; "
        "print(cl.compute_type_to_str(cl.get_compute_type(np.float32)), "
        "cl.compute_type_to_str(cl.get_compute_type(np.float16)))"
    )
    for env, want in (
        ("1", "COMPUTE_TYPE_TF32 COMPUTE_TYPE_DEFAULT"),
        ("0", "COMPUTE_TYPE_DEFAULT COMPUTE_TYPE_DEFAULT"),
    ):
        out = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, env={"CUPY_TF32": env, "PATH": ""}, cwd=ROOT
        )
        assert out.stdout.split() == want.split(), out.stderr
