"""How many accesses a trace may record is sized from the launch, and only a thread that really
loops is asked whether a loop is missing its exit (issue 33: a 128x128 tiled matmul, 4.7 million
accesses of ordinary threads, was stopped at a fixed 4 million with that question).

The limits are made small here (and the log flushed often, where the limit is checked) so the
launches stay cheap; bench/trace_scale.py traces the real 128x128 matmul."""

import numba
import numpy as np
import pytest
from numba import cuda

from helpers.errors import KernelError
from helpers.tracer import arrays, records, trace

TILE = 8


@cuda.jit
def _matmul_tiled(A, B, C):
    sA = cuda.shared.array((TILE, TILE), numba.float32)
    sB = cuda.shared.array((TILE, TILE), numba.float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    row, col = cuda.blockIdx.y * TILE + ty, cuda.blockIdx.x * TILE + tx
    acc = numba.float32(0.0)
    for t0 in range(0, A.shape[1], TILE):
        sA[ty, tx] = A[row, t0 + tx]
        sB[ty, tx] = B[t0 + ty, col]
        cuda.syncthreads()
        for k in range(TILE):
            acc += sA[ty, k] * sB[k, tx]
        cuda.syncthreads()
    C[row, col] = acc


@cuda.jit
def _one_thread_spins(x, out):
    i = cuda.grid(1)
    if i == 3:
        while x[0] >= 0:  # x[0] never changes: no exit
            pass
    out[i] = x[i]


@cuda.jit
def _everyone_sums(x, out):
    i = cuda.grid(1)
    acc = 0.0
    for k in range(x.size):
        acc += x[k]
    out[i] = acc


@pytest.fixture
def small_limits(monkeypatch):
    """A launch may record 128 accesses a thread, at least 5,000; the limit is checked every 256."""
    monkeypatch.setattr(records, "LIMIT_MIN", 5_000)
    monkeypatch.setattr(records, "LIMIT_PER_THREAD", 128)
    monkeypatch.setattr(records, "LOOP_FLOOR", 1_000)
    monkeypatch.setattr(arrays, "FLUSH_EVERY", 256)


def test_the_limit_grows_with_the_launch_between_a_floor_and_a_ceiling():
    assert records.access_limit(1) == records.LIMIT_MIN
    assert records.access_limit(16_384) == 16_384 * records.LIMIT_PER_THREAD  # the 128x128 tiled matmul
    assert records.access_limit(16_384) > 128 * 128 * (128 // 16 * 36 + 1)  # ...and all its accesses
    assert records.access_limit(10**9) == records.LIMIT_MAX


def test_a_tiled_matmul_past_the_floor_is_traced_with_its_verdicts(small_limits):
    rng = np.random.default_rng(0)
    A, B = rng.random((32, 32), dtype=np.float32), rng.random((32, 32), dtype=np.float32)
    C = np.zeros((32, 32), np.float32)
    t = trace(_matmul_tiled, (4, 4), (TILE, TILE), A, B, C, watchdog=0)
    assert len(t.accesses) > records.LIMIT_MIN  # more than the floor, as 128x128 is past the old fixed limit
    assert t.verdicts == [] and np.allclose(C, A @ B, rtol=1e-4)
    assert t.metrics.bank_conflicted == 0 and t.metrics.shared_reads[1] == 32 * 2


def test_a_thread_that_loops_is_named_with_the_loop_question(small_limits):
    with pytest.raises(KernelError, match="loop missing its exit") as err:
        trace(_one_thread_spins, 2, 64, np.zeros(128, np.float32), np.zeros(128, np.float32), watchdog=0)
    assert "thread (3, 0, 0) of block 0 made" in str(err.value)


def test_a_big_launch_of_ordinary_threads_is_not_accused_of_looping(small_limits):
    x = np.ones(200, np.float32)
    with pytest.raises(KernelError) as err:
        trace(_everyone_sums, 2, 64, x, np.zeros(128, np.float32), watchdog=0)
    msg = str(err.value)
    assert "loop" not in msg and "trace a smaller problem" in msg and "max_accesses" in msg
    t = trace(_everyone_sums, 2, 64, x, np.zeros(128, np.float32), watchdog=0, max_accesses=10**6)
    assert len(t.accesses) == 128 * 201  # an explicit limit stands


def test_the_log_names_each_thread_and_epoch_as_the_accesses_were_made():
    rng = np.random.default_rng(1)
    A, B = rng.random((16, 16), dtype=np.float32), rng.random((16, 16), dtype=np.float32)
    t = trace(_matmul_tiled, (2, 2), (TILE, TILE), A, B, np.zeros((16, 16), np.float32), watchdog=0)
    a = t.accesses
    per_thread = np.bincount(a.gtid, minlength=t.nthreads)
    assert (per_thread == 2 * (2 + 2 + 2 * TILE) + 1).all()
    # two tiles, two barriers each: epochs 0 to 4, and C (array 2) is written after the last barrier
    assert set(a.epoch.tolist()) == {0, 1, 2, 3, 4} and set(a.epoch[a.array == 2].tolist()) == {4}
    assert (np.diff(a.gtid[a.epoch == 0]) >= 0).all()  # before the first barrier: thread after thread
    assert a.array.dtype == np.int32 and a.kind.dtype == np.int8  # the compact log
