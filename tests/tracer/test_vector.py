"""The vectorized tracer (helpers.tracer.vector) against the per-thread one: for every kernel here,
those that run as lanes and those that must fall back, the access log, the verdicts, the metrics and
the arrays the kernel wrote are identical, and the lanes run where they should."""

import numpy as np
import pytest
from numba import cuda, float32

from helpers.tracer import trace, vector

TILE = 8


@cuda.jit
def saxpy(a, x, y, out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = a * x[i] + y[i]


@cuda.jit
def mixed_types(x, out, counts):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = x[i] * i + i / 3 - (i // 3) % 5  # float32 with Python ints: float32 stays float32
        counts[i] = i * 7 - (i % 3)  # Python ints into an int32 array
        out[i] = out[i] + x[0]  # every lane reads x[0]


@cuda.jit
def add_2d(a, b, c):
    x, y = cuda.grid(2)
    if x < c.shape[0] and y < c.shape[1]:
        c[x, y] = a[x, y] + b[x, y]


@cuda.jit
def clamped_neighbours(x, out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = x[max(i - 1, 0)] + x[min(i + 1, x.size - 1)]  # clamped at both ends: lanes pick per lane


@cuda.jit
def matmul_tiled(A, B, C):
    sA = cuda.shared.array((TILE, TILE), float32)
    sB = cuda.shared.array((TILE, TILE), float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    row = cuda.blockIdx.y * TILE + ty
    col = cuda.blockIdx.x * TILE + tx
    acc = float32(0.0)
    for t0 in range(0, A.shape[1], TILE):
        sA[ty, tx] = A[row, t0 + tx]
        sB[ty, tx] = B[t0 + ty, col]
        cuda.syncthreads()
        for k in range(TILE):
            acc += sA[ty, k] * sB[k, tx]
        cuda.syncthreads()
    C[row, col] = acc


@cuda.jit
def reverse_no_sync(x, out):
    tile = cuda.shared.array(32, float32)
    t = cuda.threadIdx.x
    tile[t] = x[cuda.grid(1)]
    out[cuda.grid(1)] = tile[31 - t]  # a race: another thread's element, no syncthreads


@cuda.jit
def neighbour_in_place(x):
    i = cuda.grid(1)
    if 0 < i < x.size:
        x[i] = x[i - 1] + 1.0  # reads what another thread writes: the thread order decides


@cuda.jit
def data_branch(x, out):
    i = cuda.grid(1)
    if x[i] > 0.5:  # a branch on loaded data: lanes diverge
        out[i] = 1.0
    else:
        out[i] = -1.0


@cuda.jit
def missing_guard(x, out):
    i = cuda.grid(1)
    out[i] = 2 * x[i]  # the last block reads and writes past the end


@cuda.jit
def histogram(x, bins):
    i = cuda.grid(1)
    if i < x.size:
        cuda.atomic.add(bins, x[i] % 4, 1)  # atomics: never vectorized


@cuda.jit
def uninitialised_halo(x, out):
    tile = cuda.shared.array(34, float32)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    tile[t + 1] = x[i]
    cuda.syncthreads()
    out[i] = tile[t] + tile[t + 2]  # tile[0] and tile[33] were never written


@cuda.jit
def prints(x, out):
    i = cuda.grid(1)
    if i < out.size:
        print(i)  # once per thread: never once for all lanes
        out[i] = x[i]


WEIGHTS = np.array([0.25, 0.5, 0.25], dtype=np.float32)


@cuda.jit
def const_smooth(x, out):
    w = cuda.const.array_like(WEIGHTS)  # the first thread to get here copies the table
    i = cuda.grid(1)
    if 0 < i < x.size - 1:
        out[i] = w[0] * x[i - 1] + w[1] * x[i] + w[2] * x[i + 1]


def _launches():
    rng = np.random.default_rng(5)
    f = lambda *s: rng.random(s, dtype=np.float32)  # noqa: E731
    n = 1000
    return {
        "saxpy": (saxpy, 8, 128, (np.float32(2.0), f(n), f(n), np.zeros(n, np.float32))),
        "clamped_neighbours": (clamped_neighbours, 2, 64, (f(128), np.zeros(128, np.float32))),
        "mixed_types": (mixed_types, 4, 64, (f(200), np.zeros(200, np.float32), np.zeros(200, np.int32))),
        "add_2d": (add_2d, (3, 2), (8, 8), (f(20, 12), f(20, 12), np.zeros((20, 12), np.float32))),
        "matmul_tiled": (matmul_tiled, (2, 2), (TILE, TILE), (f(16, 16), f(16, 16), np.zeros((16, 16), np.float32))),
        "reverse_no_sync": (reverse_no_sync, 2, 32, (f(64), np.zeros(64, np.float32))),
        "neighbour_in_place": (neighbour_in_place, 2, 32, (f(64),)),
        "data_branch": (data_branch, 2, 32, (f(64), np.zeros(64, np.float32))),
        "missing_guard": (missing_guard, 3, 32, (f(80), np.zeros(80, np.float32))),
        "histogram": (histogram, 2, 32, (rng.integers(0, 100, 64).astype(np.int32), np.zeros(4, np.int32))),
        "uninitialised_halo": (uninitialised_halo, 2, 32, (f(64), np.zeros(64, np.float32))),
        "prints": (prints, 1, 4, (f(4), np.zeros(4, np.float32))),
        "const_smooth": (const_smooth, 1, 32, (f(32), np.zeros(32, np.float32))),
    }


# kernels whose blocks run as lanes (some of them), and kernels that must run thread by thread
VECTORIZED = {"saxpy", "clamped_neighbours", "mixed_types", "add_2d", "matmul_tiled", "uninitialised_halo"}
PER_THREAD = {"reverse_no_sync", "neighbour_in_place", "data_branch", "histogram", "prints", "const_smooth"}


def _traced(name, enabled, monkeypatch):
    monkeypatch.setattr(vector, "ENABLED", enabled)
    ran = []
    attempt = vector.VectorRun.attempt

    def counting(self):
        ok = attempt(self)
        ran.append(ok)
        return ok

    monkeypatch.setattr(vector.VectorRun, "attempt", counting)
    kernel, grid, block, args = _launches()[name]
    t = trace(kernel, grid, block, *args, watchdog=0)
    a = t.accesses
    return {
        "log": [np.asarray(c, np.int64).tolist() for c in (a.array, a.index, a.kind, a.gtid, a.epoch, a.loc)],
        "verdicts": [(v.kind, v.message, v.count, np.asarray(v.accesses).tolist()) for v in t.verdicts],
        "metrics": str(t.metrics),
        "arrays": [np.asarray(x).tobytes() for x in args if isinstance(x, np.ndarray)],
        "locations": [(loc.line, loc.function) for loc in t.locations],
    }, ran


@pytest.mark.parametrize("name", sorted(_launches()))
def test_lanes_and_threads_leave_the_same_trace(name, monkeypatch):
    fast, ran = _traced(name, True, monkeypatch)
    slow, ran_slow = _traced(name, False, monkeypatch)
    assert ran_slow == []
    assert fast["log"] == slow["log"]
    assert fast["verdicts"] == slow["verdicts"]
    assert fast["metrics"] == slow["metrics"]
    assert fast["arrays"] == slow["arrays"]
    assert fast["locations"] == slow["locations"]
    if name in VECTORIZED:
        assert any(ran), "no block ran as lanes"
    if name in PER_THREAD:
        assert not any(ran), "a block ran as lanes where the thread order decides"


def test_the_kernels_cover_verdicts_and_clean_runs(monkeypatch):
    kinds = {name: {v[0] for v in _traced(name, True, monkeypatch)[0]["verdicts"]} for name in _launches()}
    assert kinds["saxpy"] == set() and kinds["matmul_tiled"] == set()
    assert "race" in kinds["reverse_no_sync"] and "race" in kinds["neighbour_in_place"]
    assert "out_of_bounds" in kinds["missing_guard"]
    assert "uninitialized_shared" in kinds["uninitialised_halo"]


def test_a_printing_kernel_prints_once_per_thread(capsys, monkeypatch):
    _traced("prints", True, monkeypatch)
    assert capsys.readouterr().out.split() == ["0", "1", "2", "3"]


def test_a_failed_run_of_lanes_leaves_memory_as_it_was(monkeypatch):
    # the lanes of neighbour_in_place all write before the race is seen: the per-thread rerun must start
    # from the original x, or the values below come out shifted
    monkeypatch.setattr(vector, "ENABLED", True)
    x = np.arange(64, dtype=np.float32)
    trace(neighbour_in_place, 2, 32, x, watchdog=0)
    want = np.arange(64, dtype=np.float32)
    for i in range(1, 64):  # threads in order, each sees the previous thread's write
        want[i] = want[i - 1] + 1.0
    assert np.array_equal(x, want)


def test_edge_blocks_that_fall_back_do_not_stop_the_blocks_between_them(monkeypatch):
    # a 13 x 3 grid of 8 x 8 blocks over 100 x 24 elements: the last block of each row (x = 12) has idle
    # threads and runs per thread; every other block runs as lanes, found by halving the failed runs
    monkeypatch.setattr(vector, "ENABLED", True)
    blocks = []
    attempt = vector.VectorRun.attempt

    def counting(self):
        ok = attempt(self)
        blocks.extend(range(self.b0, self.b0 + self.count) if ok else ())
        return ok

    monkeypatch.setattr(vector.VectorRun, "attempt", counting)
    rng = np.random.default_rng(1)
    a, b = rng.random((100, 24), dtype=np.float32), rng.random((100, 24), dtype=np.float32)
    c = np.zeros((100, 24), np.float32)
    trace(add_2d, (13, 3), (8, 8), a, b, c, watchdog=0)
    assert np.array_equal(c, a + b)
    assert sorted(blocks) == [k for k in range(39) if k % 13 != 12]
