"""helpers.tracer.spin: a barrier (or warp-call) loop that comes back with nothing changed is stopped
with one sentence naming its line; loops that change anything, in a variable, in shared memory or
in a global array, run to their end even when every round is compared."""

import numba
import numpy as np
import pytest
from numba import cuda

import helpers  # noqa: F401  - the course rule: helpers before numba.cuda
from helpers.errors import TookTooLong
from helpers.tracer import spin as spin_module
from helpers.tracer import trace

FULL = 0xFFFFFFFF


@cuda.jit
def tree_sum_never_ends(x, total):
    buf = cuda.shared.array(64, numba.float32)
    t = cuda.threadIdx.x
    buf[t] = x[t]
    cuda.syncthreads()
    s = 32
    while s >= 0:  # s reaches 0 and stays there
        if t < s:
            buf[t] += buf[t + s]
        cuda.syncthreads()
        s //= 2
    if t == 0:
        total[0] = buf[0]


@cuda.jit
def warp_sum_never_ends(x, total):
    v = x[cuda.threadIdx.x]
    delta = 16
    while delta >= 0:
        v += cuda.shfl_down_sync(FULL, v, delta) * 0
        delta //= 2
    if cuda.laneid == 0:
        total[0] = v


@cuda.jit
def counts_in_a_variable(out):
    k = 0
    while k < 300:
        cuda.syncthreads()
        k += 1
    out[cuda.threadIdx.x] = k


@cuda.jit
def counts_in_shared_memory(out):
    c = cuda.shared.array(1, numba.int32)
    if cuda.threadIdx.x == 0:
        c[0] = 0
    cuda.syncthreads()
    while c[0] < 300:
        cuda.syncthreads()
        if cuda.threadIdx.x == 0:
            c[0] += 1
        cuda.syncthreads()
    out[cuda.threadIdx.x] = c[0]


@cuda.jit
def counts_in_global_memory(out):
    while out[0] < 300:
        cuda.syncthreads()
        if cuda.threadIdx.x == 0:
            out[0] += 1
        cuda.syncthreads()


def test_a_barrier_loop_whose_exit_is_never_reached_is_stopped_at_its_barrier():
    x = np.ones(64, np.float32)
    with pytest.raises(TookTooLong) as stop:
        trace(tree_sum_never_ends, 1, 64, x, np.zeros(1, np.float32))
    assert "tree_sum_never_ends's threads keep coming back to line" in str(stop.value)
    assert "`cuda.syncthreads()`" in str(stop.value)
    assert "can never reach its exit" in str(stop.value)


def test_a_warp_call_loop_whose_exit_is_never_reached_is_stopped_at_the_call():
    with pytest.raises(TookTooLong) as stop:
        trace(warp_sum_never_ends, 1, 32, np.ones(32, np.float32), np.zeros(1, np.float32))
    assert "shfl_down_sync" in str(stop.value)


@pytest.mark.parametrize(
    "kernel", [counts_in_a_variable, counts_in_shared_memory, counts_in_global_memory], ids=lambda k: k.__name__
)
def test_loops_that_change_something_run_to_their_end_when_every_round_is_compared(kernel, monkeypatch):
    monkeypatch.setattr(spin_module, "EVERY_S", 0.0)
    out = np.zeros(64, np.int32)
    trace(kernel, 1, 64, out)
    assert out[0] == 300


def _kernel_in_a_function():
    from numba import cuda, float32  # names of this function: free variables of the kernel, in its frame's locals

    @cuda.jit
    def tile_sum(x, out):
        tile = cuda.shared.array(32, float32)
        t = cuda.threadIdx.x
        tile[t] = x[t]
        cuda.syncthreads()
        out[t] = tile[0] + tile[31]

    return tile_sum


def test_a_kernel_defined_in_a_function_is_compared_without_tripping_on_the_fake_cuda(monkeypatch):
    monkeypatch.setattr(spin_module, "EVERY_S", 0.0)
    out = np.zeros(32, np.float32)
    trace(_kernel_in_a_function(), 1, 32, np.arange(32, dtype=np.float32), out, watchdog=0)
    assert (out == 31).all()
