"""helpers.standins.cuda_compute where a learner's answer can tell it from cuda.compute. Read from
cuda-cccl 1.2.1's source and run on an H200 with CuPy 14.2.0: a NumPy array as d_in or d_out raises
AttributeError ('numpy.ndarray' object has no attribute '__cuda_array_interface__'); reduce_into
writes the accumulator (h_init's dtype) into d_out unconverted (a float32 sum in a float64 d_out read
5.6e-315, in an int32 d_out 1140892980); radix_sort writes the keys unconverted (float32 keys into
float64 read 2.7e17); the scans convert (an int32 scan into float64 was exact); with no items and
no h_init, d_out is left as it was (1.2.1's docstring).
"""

from __future__ import annotations

import numpy as np
import pytest

from helpers.errors import LearnerError
from helpers.standins import cuda_compute as cc
from helpers.standins import cupy as cp

RNG = np.random.default_rng(3)
X = RNG.uniform(0, 1, 1000).astype(np.float32)
KEYS = (RNG.standard_normal(300) * 100).astype(np.float32)
FLAGS = (RNG.random(50) < 0.5).astype(np.int32)
F32 = np.zeros(1, np.float32)


@pytest.mark.parametrize(
    "call",
    [
        lambda: cc.reduce_into(d_in=cp.asarray(X), d_out=np.zeros(1, np.float32), num_items=9, op=cc.OpKind.PLUS),
        lambda: cc.reduce_into(d_in=X, d_out=cp.zeros(1, np.float32), num_items=9, op=cc.OpKind.PLUS, h_init=F32),
        lambda: cc.exclusive_scan(
            d_in=cp.asarray(FLAGS), d_out=np.zeros(50, np.int32), op=cc.OpKind.PLUS, init_value=F32, num_items=50
        ),
        lambda: cc.radix_sort(
            d_in_keys=cp.asarray(KEYS),
            d_out_keys=np.zeros(300, np.float32),
            num_items=300,
            order=cc.SortOrder.ASCENDING,
        ),
    ],
    ids=["reduce d_out", "reduce d_in", "scan d_out", "sort d_out_keys"],
)
def test_host_arrays_are_refused_as_by_cuda_compute(call):
    with pytest.raises(AttributeError, match="NumPy array in host memory.*__cuda_array_interface__") as e:
        call()
    assert isinstance(e.value, LearnerError)


def test_reduce_into_writes_the_accumulators_bytes_unconverted():
    out = cp.zeros(1, np.float64)
    cc.reduce_into(d_in=cp.asarray(X), d_out=out, num_items=X.size, op=cc.OpKind.PLUS, h_init=F32)
    total = np.add.reduce(X, initial=np.float32(0))
    assert out.view(np.float32)[0] == total and float(out[0]) < 1e-300  # garbage as a float64, as on the H200
    cc.reduce_into(d_in=cp.asarray(X), d_out=out, num_items=X.size, op=cc.OpKind.PLUS, h_init=np.zeros(1))
    assert float(out[0]) == pytest.approx(X.astype(np.float64).sum())  # a float64 h_init: a float64 sum
    small = cp.zeros(1, np.float32)
    with pytest.raises(LearnerError, match="8 bytes of float64.*give d_out the dtype float64"):
        cc.reduce_into(d_in=cp.asarray(X), d_out=small, num_items=X.size, op=cc.OpKind.PLUS, h_init=np.zeros(1))


def test_reduce_into_with_nothing_leaves_d_out_alone():
    out = cp.full(1, 7.0, np.float32)
    cc.reduce_into(d_in=cp.asarray(X), d_out=out, num_items=0, op=cc.OpKind.PLUS)
    assert float(out[0]) == 7.0


def test_radix_sort_writes_the_keys_bytes_unconverted():
    want = np.sort(KEYS)[::-1]
    out = cp.zeros(300, np.float64)
    cc.radix_sort(d_in_keys=cp.asarray(KEYS), d_out_keys=out, num_items=300, order=cc.SortOrder.DESCENDING)
    assert np.array_equal(cp.asnumpy(out).view(np.float32)[:300], want)
    assert not np.array_equal(cp.asnumpy(out), want.astype(np.float64))
    with pytest.raises(LearnerError, match="1200 bytes of float32.*holds only 600 bytes of float16"):
        cc.radix_sort(
            d_in_keys=cp.asarray(KEYS),
            d_out_keys=cp.zeros(300, np.float16),
            num_items=300,
            order=cc.SortOrder.ASCENDING,
        )


def test_scans_convert_to_d_outs_dtype():
    out = cp.zeros(50, np.float64)
    cc.exclusive_scan(
        d_in=cp.asarray(FLAGS), d_out=out, op=cc.OpKind.PLUS, init_value=np.zeros(1, np.int32), num_items=50
    )
    assert np.array_equal(cp.asnumpy(out), np.concatenate(([0], np.cumsum(FLAGS)[:-1])).astype(np.float64))


def test_a_count_read_from_the_offsets_is_a_0d_device_array():
    offsets = cp.empty(50, np.int32)
    flags = cp.asarray(FLAGS)
    cc.exclusive_scan(d_in=flags, d_out=offsets, op=cc.OpKind.PLUS, init_value=np.zeros(1, np.int32), num_items=50)
    count = offsets[49] + flags[49]
    assert type(count) is cp.ndarray and count.shape == () and int(count) == FLAGS.sum()
