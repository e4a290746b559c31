"""cuda.compute in CPU mode (the stand-in) and the recorded GPU numbers notebook 14 reads.

The stand-in's calls are the real library's (cuda-cccl 1.2.1, keyword-only); that it computes what
the real one computes is checked by running notebook 14 on a GPU (`make test-gpu`), where `cc` is
the real module and the same cells and exercises run.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from bench import cccl as bench_cccl
from helpers.errors import LearnerError
from helpers.standins import cuda_compute as cc
from helpers.standins import cupy as cp

ROOT = Path(__file__).resolve().parents[2]
RECORD = json.loads((ROOT / "docs/data/cccl.json").read_text())


def test_reduce_scans_sort_and_iterator_compute_what_numpy_does():
    rng = np.random.default_rng(0)
    x = cp.asarray(rng.integers(-50, 50, size=1001).astype(np.int64))
    out = cp.empty(1, np.int64)
    cc.reduce_into(d_in=x, d_out=out, num_items=x.size, op=cc.OpKind.PLUS, h_init=np.full(1, 7, np.int64))
    assert out[0] == x.sum() + 7
    cc.reduce_into(d_in=x, d_out=out, num_items=x.size, op=cc.OpKind.MAXIMUM, h_init=np.full(1, -(10**9), np.int64))
    assert out[0] == x.max()
    inc, exc = cp.empty_like(x), cp.empty_like(x)
    cc.inclusive_scan(d_in=x, d_out=inc, op=cc.OpKind.PLUS, init_value=None, num_items=x.size)
    cc.exclusive_scan(d_in=x, d_out=exc, op=cc.OpKind.PLUS, init_value=np.zeros(1, np.int64), num_items=x.size)
    assert np.array_equal(inc, np.cumsum(x)) and np.array_equal(exc, np.concatenate(([0], np.cumsum(x)[:-1])))
    keys = cp.asarray(rng.standard_normal(300).astype(np.float32))
    vals = cp.arange(300, dtype=np.int32)
    k2, v2 = cp.empty_like(keys), cp.empty_like(vals)
    cc.radix_sort(
        d_in_keys=keys, d_out_keys=k2, d_in_values=vals, d_out_values=v2, num_items=300, order=cc.SortOrder.DESCENDING
    )
    assert np.array_equal(k2, np.sort(keys)[::-1]) and np.array_equal(keys[v2], k2)
    s = cp.empty(1, np.int64)
    cc.reduce_into(d_in=cc.CountingIterator(np.int64(1)), d_out=s, num_items=100, op=cc.OpKind.PLUS, h_init=None)
    assert s[0] == 5050


@pytest.mark.parametrize(
    "call, words",
    [
        (
            lambda: cc.reduce_into(d_in=cp.ones(4), d_out=cp.empty(1), num_items=4, op=lambda a, b: a + b),
            "numba-cuda-mlir",
        ),
        (lambda: cc.reduce_into(d_in=cp.ones(4), d_out=cp.empty(0), num_items=4, op=cc.OpKind.PLUS), "needs 1"),
        (lambda: cc.reduce_into(d_in=cp.ones(4), d_out=cp.empty(1), num_items=9, op=cc.OpKind.PLUS), "only 4"),
        (
            lambda: cc.exclusive_scan(
                d_in=cp.ones(4), d_out=cp.empty(4), op=cc.OpKind.PLUS, init_value=None, num_items=4
            ),
            "init_value is required",
        ),
        (
            lambda: cc.inclusive_scan(d_in=cp.ones(4), d_out=cp.empty(4), op=cc.OpKind.PLUS, init_value=0, num_items=4),
            "one-element NumPy array",
        ),
        (lambda: cc.CountingIterator(1), "NumPy scalar"),
        (lambda: cc.radix_sort(d_in_keys=cp.ones(3), d_out_keys=cp.empty(3), num_items=3, order="desc"), "SortOrder"),
    ],
)
def test_wrong_calls_are_one_sentence(call, words):
    with pytest.raises(LearnerError, match=words):
        call()


def test_the_record_supports_what_notebook_14_says():
    rows = {(r["algorithm"], r["library"], r["n"]): r for r in RECORD["rows"] if r["status"] == "ok"}

    def gbs(algo, lib, n):
        return rows[(algo, lib, n)]["gbs"]

    for n in (1 << 24, 1 << 27):  # "beats cupy.cumsum by about 2.4x at 2^24 and 2^27"
        assert (
            2.2
            < gbs("inclusive scan", "cuda.compute inclusive_scan", n) / gbs("inclusive scan", "cupy.cumsum", n)
            < 2.6
        )
    for n in (1 << 20, 1 << 24, 1 << 27):  # "its radix sort beats cupy.sort"
        assert gbs("radix sort (uint32)", "cuda.compute radix_sort", n) > gbs("radix sort (uint32)", "cupy.sort", n)
    small = 1 << 20  # "the two-phase object is about three times faster there", "the Numba kernel ... the slowest"
    ratio = gbs("reduce (sum)", "cuda.compute make_reduce_into", small) / gbs(
        "reduce (sum)", "cuda.compute reduce_into", small
    )
    assert 2.5 < ratio < 3.5
    assert min(r["gbs"] for k, r in rows.items() if k[0] == "reduce (sum)" and k[2] == small) == gbs(
        "reduce (sum)", "course two-pass kernel (Numba)", small
    )
    big = [r["of_copy"] for k, r in rows.items() if k[0] == "reduce (sum)" and k[2] == 1 << 27]
    assert len(big) == 4 and min(big) > 0.95  # "all three reductions reach about the copy ceiling"
    assert RECORD["features"]["custom Python operator (reduce with max_abs)"].startswith("fails: ImportError")
    assert RECORD["features_with_numba_cuda_mlir"]["custom Python operator (reduce with max_abs)"].startswith("works")


def test_the_record_renders_as_the_benchmarks_section():
    md = bench_cccl.markdown(RECORD)
    assert md.count("\n| ") == len(RECORD["rows"]) + 1 and "numba-cuda-mlir" in md
    assert md.splitlines()[0] in (ROOT / "docs/benchmarks-h100-80gb.md").read_text()
