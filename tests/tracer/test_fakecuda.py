"""helpers.tracer.fakecuda: the lanes of a warp meet at a compare-and-swap (so a CAS loop that
never retries loses updates, as on a GPU, where one thread at a time every CAS would succeed),
constant tables limited to 64 KiB, and dynamic shared memory sized by the launch."""

import numba
import numpy as np
import pytest
from numba import cuda

import helpers  # noqa: F401  - the course rule: helpers before numba.cuda
from helpers.errors import LearnerError, TookTooLong
from helpers.tracer import trace

P = 1_000_003


@cuda.jit
def mul_loop(x, prod):
    i = cuda.grid(1)
    if i < x.size:
        old = prod[0]
        while True:
            assumed = old
            old = cuda.atomic.cas(prod, 0, assumed, assumed * x[i] % P)
            if old == assumed:
                break


@cuda.jit
def mul_one_try(x, prod):
    i = cuda.grid(1)
    if i < x.size:
        old = prod[0]
        cuda.atomic.cas(prod, 0, old, old * x[i] % P)  # gives up when another lane got there first


@cuda.jit
def mul_stale_guess(x, prod):
    i = cuda.grid(1)
    if i < x.size:
        assumed = prod[0]
        while cuda.atomic.cas(prod, 0, assumed, assumed * x[i] % P) != assumed:
            pass  # retries with the same stale guess: fails forever once another lane wrote


def _product(x):
    want = 1
    for v in x.tolist():
        want = want * v % P
    return want


X = np.random.default_rng(0).integers(2, P, 100).astype(np.int64)


def test_a_cas_loop_that_retries_with_the_returned_value_is_right_and_race_free():
    prod = np.ones(1, np.int64)
    t = trace(mul_loop, 2, 64, X, prod)
    assert t.verdicts == [] and prod[0] == _product(X)


def test_a_single_cas_loses_the_updates_of_the_lanes_that_met_it_together():
    prod = np.ones(1, np.int64)
    trace(mul_one_try, 2, 64, X, prod)
    assert prod[0] != _product(X)
    # every lane of a block read its guess before the first CAS: only thread 0 of each block succeeds
    assert prod[0] == _product(X[[0, 64]])


def test_a_cas_loop_that_retries_with_a_stale_guess_never_ends():
    with pytest.raises(TookTooLong, match="unchanged"):
        trace(mul_stale_guess, 1, 64, X[:40], np.ones(1, np.int64))


TABLE = np.arange(16, dtype=np.float32)
FULL = np.zeros(16 * 1024, np.float32)  # 64 KiB exactly
OVER = np.zeros(16 * 1024 + 1, np.float32)


@cuda.jit
def lookup(idx, out):
    c = cuda.const.array_like(TABLE)
    i = cuda.grid(1)
    if i < out.size:
        out[i] = c[idx[i]]


@cuda.jit
def full_table(out):
    c = cuda.const.array_like(FULL)
    out[0] = c[cuda.threadIdx.x]


@cuda.jit
def too_big(out):
    c = cuda.const.array_like(OVER)
    out[0] = c[0]


@cuda.jit
def two_tables(out):
    a = cuda.const.array_like(FULL)
    b = cuda.const.array_like(TABLE)
    out[0] = a[0] + b[0]


def test_constant_tables_read_like_arrays_and_are_limited_to_64_kib():
    idx = np.array([3, 3, 15, 0, 7], np.int32)
    out = np.zeros(5, np.float32)
    t = trace(lookup, 1, 32, idx, out, outputs=("out",))
    assert t.verdicts == [] and out.tolist() == TABLE[idx].tolist()
    trace(full_table, 1, 32, np.zeros(1, np.float32))
    for kernel in (too_big, two_tables):  # one table too big, or two that are together
        with pytest.raises(LearnerError, match="64 KiB") as err:
            trace(kernel, 1, 32, np.zeros(1, np.float32))
        assert "0x10000 max" in str(err.value)


@cuda.jit
def dyn_reverse(x, out):
    tile = cuda.shared.array(0, numba.float32)
    t = cuda.threadIdx.x
    n = cuda.blockDim.x
    i = cuda.blockIdx.x * n + t
    tile[t] = x[i]
    cuda.syncthreads()
    out[i] = tile[n - 1 - t]


def test_dynamic_shared_memory_is_sized_by_the_launch():
    x = np.arange(32, dtype=np.float32)
    out = np.zeros_like(x)
    t = trace(dyn_reverse[2, 16, 0, 16 * 4], x, out, outputs=("out",))
    assert t.verdicts == [] and out.tolist() == np.r_[x[15::-1], x[:15:-1]].tolist()
    t = trace(dyn_reverse, 2, 16, x, np.zeros_like(x))  # no bytes given: an empty array
    assert [v.kind for v in t.verdicts] == ["out_of_bounds"] and "shape (0,)" in t.verdicts[0].message


@cuda.jit
def two_dynamic_views(x, out):
    a = cuda.shared.array(0, numba.float32)
    b = cuda.shared.array(0, numba.float32)  # the same memory as a: every dynamic shared array starts at one address
    t = cuda.threadIdx.x
    a[t] = x[t]
    out[t] = b[(t + 1) % cuda.blockDim.x]  # another thread's element of a, with no barrier between


def test_two_dynamic_shared_arrays_are_one_memory_and_race_as_one():
    x = np.arange(1, 17, dtype=np.float32)
    out = np.zeros_like(x)
    t = trace(two_dynamic_views[1, 16, 0, 16 * 4], x, out, outputs=("out",))
    races = [v for v in t.verdicts if v.kind == "race"]
    assert races, t.verdicts
    assert "wrote it at line" in races[0].message and "`out[t] = b[" in races[0].message, races[0].message
    assert out[15] == x[0]  # b[0] is a[0]: the values alias as on a GPU (thread 0 wrote it before thread 15 read)


BIG_TABLE = np.arange(20_000, dtype=np.float32)  # 80,000 bytes: Numba compiles it into constant memory
SMALL_TABLE = np.arange(4, dtype=np.float32)


@cuda.jit
def reads_a_big_global(out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = BIG_TABLE[i]


@cuda.jit
def full_table_and_small_global(out):
    c = cuda.const.array_like(FULL)  # 64 KiB: fits alone (full_table), not with SMALL_TABLE's 16 bytes
    out[0] = c[cuda.threadIdx.x] + SMALL_TABLE[cuda.threadIdx.x % 4]


@cuda.jit
def small_global(out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = SMALL_TABLE[i % 4] + TABLE[i % 16]


def test_global_arrays_count_against_constant_memory_as_numba_compiles_them():
    """Numba's PTX (compile_ptx, sm_90) holds `.const .b8 _cudapy_cmem[80000]` for reads_a_big_global and
    `_cudapy_cmem[65536]` plus `_cudapy_cmem_$_1[16]` for full_table_and_small_global: ptxas refuses both."""
    with pytest.raises(LearnerError, match=r"global arrays it reads \(BIG_TABLE\).*80,000 bytes.*64 KiB"):
        trace(reads_a_big_global, 1, 32, np.zeros(32, np.float32))
    with pytest.raises(LearnerError, match=r"global arrays it reads \(.*SMALL_TABLE.*\).*65,552 bytes"):
        trace(full_table_and_small_global, 1, 32, np.zeros(1, np.float32))
    out = np.zeros(32, np.float32)
    t = trace(small_global, 1, 32, out, outputs=("out",))  # small globals are fine
    assert t.verdicts == [] and out[5] == SMALL_TABLE[1] + TABLE[5]
