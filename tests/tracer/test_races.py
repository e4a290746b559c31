"""helpers.tracer.races, on the compare-and-swap loop: the CUDA Programming Guide's idiom (a plain
read as the first guess, then atomicCAS until it sticks) is not a race, in Numba or in CUDA C; a
plain read of the result after the thread's last CAS, or a plain read beside another atomic, is."""

import numpy as np
import pytest
from numba import cuda

import helpers  # noqa: F401  - the course rule: helpers before numba.cuda
from helpers.tracer import trace


@cuda.jit
def cas_max(x, mx):
    i = cuda.grid(1)
    if i < x.size:
        old = mx[0]  # a first guess: the CAS below checks it
        while True:
            assumed = old
            old = cuda.atomic.cas(mx, 0, assumed, max(assumed, x[i]))
            if old == assumed:
                break


@cuda.jit
def cas_max_then_reads_result(x, mx, out):
    i = cuda.grid(1)
    if i < x.size:
        old = mx[0]
        while True:
            assumed = old
            old = cuda.atomic.cas(mx, 0, assumed, max(assumed, x[i]))
            if old == assumed:
                break
        out[i] = mx[0]  # read before every thread's CAS is done: no barrier orders it


@cuda.jit
def read_beside_add(x, total, seen):
    i = cuda.grid(1)
    if i < x.size:
        seen[i] = total[0]
        cuda.atomic.add(total, 0, x[i])


def _races(t):
    return [v for v in t.verdicts if v.kind == "race"]


def test_a_numba_cas_loop_is_not_a_race_and_computes_the_max():
    x = np.random.default_rng(1).integers(0, 1000, 200).astype(np.int32)
    mx = np.zeros(1, np.int32)
    t = trace(cas_max, 2, 128, x, mx)
    assert _races(t) == []
    assert mx[0] == x.max()


def test_reading_the_result_after_the_last_cas_still_races():
    x = np.arange(200, dtype=np.int32)
    t = trace(cas_max_then_reads_result, 2, 128, x, np.zeros(1, np.int32), np.zeros(200, np.int32))
    assert _races(t)


def test_a_plain_read_beside_an_atomic_add_still_races():
    x = np.ones(200, np.int32)
    t = trace(read_beside_add, 2, 128, x, np.zeros(1, np.int32), np.zeros(200, np.int32))
    assert _races(t)


@cuda.jit
def stale_exchange(x, prod):
    i = cuda.grid(1)
    if i < x.size:
        old = prod[0]
        cuda.atomic.exch(prod, 0, old * x[i])  # atomic, but computed from a read another thread can overtake


@cuda.jit
def adds_then_reads(x, total, seen):
    i = cuda.grid(1)
    if i < x.size:
        cuda.atomic.add(total, 0, x[i])
        seen[i] = total[0]  # the result, read before every thread's add is done


def test_a_read_that_feeds_an_atomic_below_it_is_told_to_become_one_atomic_or_a_cas_loop():
    (race,) = _races(trace(stale_exchange, 1, 64, np.full(64, 2, np.int64), np.ones(1, np.int64)))
    assert "then updates it atomically" in race.message and "cuda.atomic.cas loop" in race.message
    # a read of the result after the atomic keeps the barrier advice alone
    (race,) = _races(
        trace(adds_then_reads, 1, 64, np.ones(64, np.int32), np.zeros(1, np.int32), np.zeros(64, np.int32))
    )
    assert "cas loop" not in race.message and "between the atomics and the read" in race.message


GUIDE = r"""
extern "C" __global__ void max_float(const float* x, float* mx, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  int* addr = (int*)mx;
  int old = *addr, assumed;
  do {
    assumed = old;
    old = atomicCAS(addr, assumed, __float_as_int(fmaxf(x[i], __int_as_float(assumed))));
  } while (assumed != old);
}
extern "C" __global__ void max_then_read(const float* x, float* mx, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  int* addr = (int*)mx;
  int old = *addr, assumed;
  do {
    assumed = old;
    old = atomicCAS(addr, assumed, __float_as_int(fmaxf(x[i], __int_as_float(assumed))));
  } while (assumed != old);
  out[i] = *mx;
}
"""


def test_the_programming_guides_float_max_cas_loop_in_cuda_c_is_not_a_race():
    pytest.importorskip("cuda.bindings.nvrtc")
    from helpers import ptx

    x = np.random.default_rng(2).standard_normal(300).astype(np.float32)
    mx = np.full(1, -np.inf, np.float32)
    t = ptx.trace(GUIDE, "max_float", 3, 128, x, mx, np.int32(300))
    assert _races(t) == []
    assert mx[0] == x.max()


def test_a_cuda_c_read_of_the_result_after_the_cas_loop_still_races():
    pytest.importorskip("cuda.bindings.nvrtc")
    from helpers import ptx

    x = np.random.default_rng(2).standard_normal(300).astype(np.float32)
    out = np.zeros(300, np.float32)
    t = ptx.trace(GUIDE, "max_then_read", 3, 128, x, np.full(1, -np.inf, np.float32), out, np.int32(300))
    assert _races(t)


def _random_log(rng):
    from helpers.accesses import ATOMIC, READ, WRITE, ArrayInfo
    from helpers.tracer.result import Location, Trace

    n, tpb = int(rng.integers(1, 400)), 8
    arrays = [ArrayInfo(f"a{k}", "global" if k else "shared", (30,), np.dtype(np.float32), (4,)) for k in range(3)]
    table = [
        rng.integers(0, 3, n),
        rng.integers(0, 30, n),
        rng.choice([READ, READ, READ, WRITE, ATOMIC], n),
        np.sort(rng.integers(0, 4 * tpb, n)),  # blocks one after another, as the tracer runs them
        rng.integers(0, 2, n),
        rng.integers(0, 3, n),
    ]
    return Trace.from_table("k", (4, 1, 1), (tpb, 1, 1), arrays, table, [Location("k.py", i, "k") for i in range(3)])


@pytest.mark.parametrize("seed", range(40))
def test_contended_rows_are_the_accesses_to_written_elements_two_actors_touched(seed):
    from helpers.accesses import READ
    from helpers.tracer.races import contended_rows

    a = _random_log(np.random.default_rng(seed)).accesses
    for by_block in (False, True):
        actor = a.gtid // a.tpb if by_block else a.gtid
        want = []
        for r in range(len(a)):
            same = (a.array == a.array[r]) & (a.index == a.index[r])
            if np.any(same & (a.kind != READ)) and len(np.unique(actor[same])) > 1:
                want.append(r)
        assert contended_rows(a, by_block=by_block).tolist() == want


@pytest.mark.parametrize("seed", range(40))
def test_race_verdicts_a_chunk_of_blocks_at_a_time_equal_the_whole_log(seed, monkeypatch):
    from helpers.tracer import findings
    from helpers.tracer.races import find_races

    def verdicts():
        t = _random_log(np.random.default_rng(seed))
        return [(v.kind, v.message, v.count, v.accesses.tolist()) for v in find_races(t)]

    whole = verdicts()
    monkeypatch.setattr(findings, "CHUNK", 16)
    assert verdicts() == whole
