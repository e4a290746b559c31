"""`normalize_rows` asks for xp.… so the same code runs on CuPy: only real NumPy calls in the
code fail it, not np.newaxis, dtypes or a docstring that mentions np. (issue 13, false fails)."""

import numpy as np  # noqa: E402

import helpers  # noqa: E402, F401
from helpers.problems import nb08  # noqa: E402


def with_newaxis(xp, a):
    n = xp.sqrt((a * a).sum(axis=1))
    return a / n[:, np.newaxis]


def with_docstring(xp, a):
    """Like np.linalg.norm, but written with xp."""
    return a / xp.sqrt((a * a).sum(axis=1, keepdims=True)).astype(np.float32)  # np. in a comment


def with_numpy_call(xp, a):
    return a / np.sqrt((a * a).sum(axis=1, keepdims=True))


def test_newaxis_and_dtypes_are_not_numpy_calls(progress_file):
    r = nb08.normalize_rows.grade(with_newaxis, seed=2)
    assert r.status == "passed", r.message
    r = nb08.normalize_rows.grade(with_docstring, seed=2)
    assert r.status == "passed", r.message


def test_a_real_numpy_call_still_fails(progress_file):
    r = nb08.normalize_rows.grade(with_numpy_call, seed=2)
    assert r.status == "failed" and "calls NumPy directly" in r.message, r.message
