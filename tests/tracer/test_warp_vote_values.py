"""Warp votes give what a GPU gives (issue 27, fuzz leftovers): Numba types ballot_sync and
match_any_sync int32 and activemask / lanemask_lt uint32, so a mask with lane 31 stored into a
uint32 array is the mask itself (0xFFFFFFF0), into an int64 or float32 array the negative int32,
and cuda.popc counts its 32 bits. A store of an integer that does not fit keeps its low bits, as a
GPU's store does, instead of NumPy's OverflowError."""

import numpy as np
from numba import cuda

import helpers  # noqa: F401  - the course rule: helpers before numba.cuda
from helpers.tracer import trace

FULL = 0xFFFFFFFF


@cuda.jit
def ballot_into(out_u32, out_i64, out_f32, count):
    i = cuda.threadIdx.x
    b = cuda.ballot_sync(FULL, i >= 4)
    out_u32[i] = b
    out_i64[i] = b
    out_f32[i] = b
    count[i] = cuda.popc(cuda.ballot_sync(FULL, True))


@cuda.jit
def masks_into(active_i32, below_u32, match_u32):
    i = cuda.threadIdx.x
    active_i32[i] = cuda.activemask()
    below_u32[i] = cuda.lanemask_lt()
    match_u32[i] = cuda.match_any_sync(FULL, 7)


@cuda.jit
def store_too_big(out):
    i = cuda.threadIdx.x
    out[i] = 1 << 31


def test_a_ballot_with_lane_31_stores_as_the_gpu_stores_it():
    u32, i64, f32, count = np.zeros(32, np.uint32), np.zeros(32, np.int64), np.zeros(32, np.float32), np.zeros(32)
    t = trace(ballot_into, 1, 32, u32, i64, f32, count)
    assert t.ok, t.summary()
    assert list(u32) == [0xFFFFFFF0] * 32
    assert list(i64) == [-16] * 32 and list(f32) == [-16.0] * 32  # an int32 on the GPU
    assert list(count) == [32] * 32  # popc of an int32 counts 32 bits, not 64


def test_activemask_lanemask_and_match_store_into_32_bit_arrays():
    active, below, match = np.zeros(32, np.int32), np.zeros(32, np.uint32), np.zeros(32, np.uint32)
    t = trace(masks_into, 1, 32, active, below, match)
    assert t.ok, t.summary()
    assert list(active) == [-1] * 32  # uint32 0xFFFFFFFF stored into an int32
    assert below[31] == 0x7FFFFFFF and below[0] == 0
    assert list(match) == [FULL] * 32


def test_an_integer_too_big_for_its_array_keeps_its_low_bits():
    out = np.zeros(4, np.int32)
    t = trace(store_too_big, 1, 4, out)
    assert t.ok and list(out) == [-(1 << 31)] * 4
