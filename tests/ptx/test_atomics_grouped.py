"""Atomics grouped by element (helpers/ptx/atomics.py) give what applying them one thread at a time gives.

The interpreter applies one instruction's atomics in thread order. Grouped, each element's chain of
updates is computed at once (a running sum, rounds, or NumPy's accumulate for long chains); the
old value every thread gets back, the memory after the launch, the access log and the stray
accesses must be those of the one-at-a-time path, which stays for what grouping cannot express.
"""

from __future__ import annotations

import functools

import numpy as np
import pytest

pytest.importorskip("cuda.bindings.nvrtc")

from helpers.ptx import atomics, compile_source, run  # noqa: E402

KERNELS = r"""
#define BODY(T)                                                               \
  int i = blockIdx.x * blockDim.x + threadIdx.x;                              \
  if (i >= n) return;                                                         \
  T* p = mem + slot[i];                                                       \
  T v = val[i];                                                               \
  T r = 0;                                                                    \
  switch (op) {                                                               \
    case 0: r = atomicAdd(p, v); break;                                       \
    OPS                                                                       \
  }                                                                           \
  old[i] = r;
#define OPS case 1: r = atomicExch(p, v); break;                                    \
  case 2: r = atomicMin(p, v); break; case 3: r = atomicMax(p, v); break;            \
  case 4: r = atomicCAS(p, v & 3, v); break; case 5: r = atomicAnd(p, v); break;     \
  case 6: r = atomicOr(p, v); break; case 7: r = atomicXor(p, v); break;             \
  case 8: r = atomicSub(p, v); break;
extern "C" __global__ void atoms_int(int* mem, int* old, const int* slot, const int* val, int op, int n) { BODY(int) }
#undef OPS
#define OPS case 1: r = atomicExch(p, v); break;                                    \
  case 2: r = atomicMin(p, v); break; case 3: r = atomicMax(p, v); break;            \
  case 4: r = atomicCAS(p, v & 3, v); break; case 5: r = atomicInc(p, v); break;     \
  case 6: r = atomicDec(p, v); break;
extern "C" __global__ void atoms_uint(unsigned* mem, unsigned* old, const int* slot, const unsigned* val, int op,
                                      int n) { BODY(unsigned) }
#undef OPS
#define OPS case 1: r = atomicExch(p, v); break;                                    \
  case 2: r = atomicMin(p, v); break; case 3: r = atomicMax(p, v); break;            \
  case 4: r = atomicCAS(p, v & 3, v); break;
extern "C" __global__ void atoms_u64(unsigned long long* mem, unsigned long long* old, const int* slot,
                                     const unsigned long long* val, int op, int n) { BODY(unsigned long long) }
#undef OPS
#define OPS case 1: r = atomicExch(p, v); break;
extern "C" __global__ void atoms_float(float* mem, float* old, const int* slot, const float* val, int op, int n) {
  BODY(float)
}
#undef OPS
#define OPS
extern "C" __global__ void atoms_double(double* mem, double* old, const int* slot, const double* val, int op, int n) {
  BODY(double)
}
"""
CASES = (
    [("atoms_int", np.int32, op) for op in range(9)]
    + [("atoms_uint", np.uint32, op) for op in range(7)]
    + [("atoms_u64", np.uint64, op) for op in range(5)]
    + [("atoms_float", np.float32, op) for op in range(2)]
    + [("atoms_double", np.float64, 0)]
)


@functools.cache
def _ptx():
    return compile_source(KERNELS)


def _values(rng, dtype, n):
    if np.dtype(dtype).kind == "f":
        v = rng.standard_normal(n).astype(dtype) * dtype(1e3)
        v[::17] = dtype(1e-30)  # rounding in a long float chain depends on the order
        return v
    return rng.integers(0, 50, n).astype(dtype)


def _launch(kernel, dtype, op, slots, grouped, monkeypatch):
    with monkeypatch.context() as m:
        if not grouped:
            m.setattr(atomics.Op, "grouped", lambda *a: None)
        rng = np.random.default_rng(op)
        n = len(slots)
        mem, old = _values(rng, dtype, 8), np.zeros(n, dtype)
        args = (mem, old, slots, _values(rng, dtype, n), np.int32(op), np.int32(n))
        r = run(_ptx(), kernel, -(-n // 128), 128, args, source=KERNELS)
        return r, mem, old


@pytest.mark.parametrize("kernel,dtype,op", CASES, ids=[f"{k}-{op}" for k, _, op in CASES])
@pytest.mark.parametrize("shape", ["scattered", "one-element"])
def test_grouped_atomics_match_one_at_a_time(kernel, dtype, op, shape, monkeypatch):
    """Scattered: a few threads per element and stray slots (outside the 8 elements); one element: a chain
    of 300 updates, longer than atomics.LONG, through accumulate or one by one."""
    rng = np.random.default_rng(7)
    slots = rng.integers(-3, 12, 300).astype(np.int32) if shape == "scattered" else np.zeros(300, np.int32)
    r1, mem1, old1 = _launch(kernel, dtype, op, slots, True, monkeypatch)
    r2, mem2, old2 = _launch(kernel, dtype, op, slots, False, monkeypatch)
    assert mem1.tobytes() == mem2.tobytes() and old1.tobytes() == old2.tobytes()
    assert np.array_equal(r1.table, r2.table)
    assert [(e.array, e.index, e.kind, e.thread) for e in r1.out_of_bounds] == [
        (e.array, e.index, e.kind, e.thread) for e in r2.out_of_bounds
    ]
    assert r1.schedule.whole_grid  # every update in one instruction, so in block order: blocks ran together


SCALAR_CASES = [
    (name, dt)
    for dt in (np.int32, np.uint32, np.int64, np.uint64)
    for name in ("add", "and", "or", "xor", "exch", "cas", "inc", "dec", "min", "max")
    if name not in ("inc", "dec") or dt == np.uint32
] + [(name, dt) for dt in (np.float32, np.float64) for name in ("add", "exch", "min", "max")]


def _operands(rng, dt, n):
    dt = np.dtype(dt)
    if dt.kind == "f":
        pool = np.array([np.nan, -np.nan, 0.0, -0.0, 1.0, -1.0, np.inf, -np.inf, 1e-30, 3.5], dt)
        return np.where(rng.random(n) < 0.5, pool[rng.integers(0, len(pool), n)], rng.standard_normal(n).astype(dt))
    info = np.iinfo(dt)
    edge = np.array([info.min, info.max, 0, 1, 2, 3], dt)
    return np.where(rng.random(n) < 0.3, edge[rng.integers(0, len(edge), n)], rng.integers(0, 6, n).astype(dt))


@pytest.mark.parametrize("name,dtype", SCALAR_CASES, ids=[f"{n}-{np.dtype(d).name}" for n, d in SCALAR_CASES])
def test_chains_apply_updates_in_thread_order(name, dtype):
    """Op.chains against the scalar rule applied thread after thread: NaN, signed zeros, wrap-around, and
    float min/max, which no CUDA C atomic reaches, included."""
    T = np.dtype(dtype)
    rng = np.random.default_rng(len(name))
    e = np.concatenate([rng.integers(0, 6, 200), np.full(60, 9)])  # element 9: a chain past atomics.LONG
    rng.shuffle(e)
    mem, b, c = _operands(rng, T, 10), _operands(rng, T, len(e)), _operands(rng, T, len(e))
    op = atomics.Op(name, T, 0, False)
    with np.errstate(all="ignore"):
        olds, elems, finals = op.chains(e, mem[e], b, c)
        want, now = [], mem.copy()
        for i, k in enumerate(e):
            want.append(now[k])
            now[k] = T.type(op.scalar(now[k], b[i], c[i]))
    assert olds.tobytes() == np.array(want, T).tobytes()
    assert finals.tobytes() == now[elems].tobytes()


STRAY = r"""
extern "C" __global__ void stray(int* bins, int* old, int k) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  old[i] = atomicAdd(&bins[k - (i & 1)], 1);
}
"""


@pytest.mark.parametrize("k", [-4, 8])
def test_atomics_whose_addresses_all_stray_change_nothing(k, monkeypatch):
    """Every thread's element outside the array (before it, or after it): each read gives 0 and is reported,
    nothing is written, as one at a time."""
    got = []
    for grouped in (True, False):
        with monkeypatch.context() as m:
            if not grouped:
                m.setattr(atomics.Op, "grouped", lambda *a: None)
            bins, old = np.zeros(4, np.int32), np.full(64, 7, np.int32)
            r = run(STRAY, "stray", 2, 32, (bins, old, np.int32(k)))
            got.append((bins.tolist(), old.tolist(), [(e.array, e.index, e.kind, e.thread) for e in r.out_of_bounds]))
    assert got[0] == got[1] and got[0][0] == [0] * 4 and got[0][1] == [0] * 64 and len(got[0][2]) == 64
