"""Blocks run together (helpers/ptx/grid.py) give exactly what block-by-block execution gives.

Every case of the differential corpus (tests/ptx_corpus: the hand-written kernels and every CUDA C
source of the course) runs twice on the same inputs, once as the interpreter chooses and once with
whole_grid=False: outputs bit for bit, the access log, out-of-bounds accesses, divergent barriers,
warp misuse, printf lines, step counts and errors must be identical. Kernels written to make blocks
see each other's writes check that such launches fall back to one block at a time.
"""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("cuda.bindings.nvrtc")

import ptx_corpus  # noqa: E402
from helpers.errors import KernelError, LearnerError  # noqa: E402
from helpers.ptx import compile_source, run  # noqa: E402
from ptx_corpus.replay import nvrtc_options  # noqa: E402

CASES = [c for c in ptx_corpus.cases() if not c.refused]


def _launch(ptx, source, kernel, grid, block, args, **kw):
    """(PtxRun or the error raised, the arrays after the launch)."""
    args = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    try:
        return run(ptx, kernel, grid, block, args, source=source, **kw), args
    except Exception as e:  # noqa: BLE001 - both schedules must raise the same error
        return e, args


def _unlabelled(records):
    """Each run() names its source file anew (a counter): records compare by function name."""
    return [{**r, "code": r["code"].co_name} for r in records]


def _same(one, other):
    """Assert two launches did the same; returns the first one's PtxRun (or error)."""
    (a, args_a), (b, args_b) = one, other
    if isinstance(a, Exception) or isinstance(b, Exception):
        assert type(a) is type(b) and str(a) == str(b), (a, b)
        return a
    for x, y in zip(args_a, args_b):
        if isinstance(x, np.ndarray):
            assert x.dtype == y.dtype and x.tobytes() == y.tobytes(), "outputs differ"
    assert np.array_equal(a.table, b.table), "access logs differ"
    assert [e._replace(code=e.code.co_name) for e in a.out_of_bounds] == [
        e._replace(code=e.code.co_name) for e in b.out_of_bounds
    ]
    assert _unlabelled(a.divergent) == _unlabelled(b.divergent)
    assert _unlabelled(a.warp_misuse) == _unlabelled(b.warp_misuse)
    assert a.printed == b.printed
    assert a.steps == b.steps
    assert [(i.name, i.space, i.shape) for i in a.arrays] == [(i.name, i.space, i.shape) for i in b.arrays]
    return a


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_corpus_case_runs_the_same_together_and_block_by_block(case):
    ptx = compile_source(case.source, options=nvrtc_options(case))
    args = list(case.inputs().values())
    kw = {"shared_bytes": case.shared_bytes}
    got = _same(
        _launch(ptx, case.source, case.kernel, case.grid, case.block, args, **kw),
        _launch(ptx, case.source, case.kernel, case.grid, case.block, args, whole_grid=False, **kw),
    )
    if not isinstance(got, Exception):
        assert "raised" not in got.schedule.why, f"running together failed where block by block did not: {got.schedule}"


def test_most_barrier_free_corpus_kernels_run_together():
    """The check above would pass vacuously if nothing ran together."""
    together = apart = 0
    for case in CASES:
        src = case.source
        if "__shared__" in src or "__syncthreads" in src or "clock" in src or "__syncwarp" in src:
            continue
        ptx = compile_source(src, options=nvrtc_options(case))
        r, _ = _launch(ptx, src, case.kernel, case.grid, case.block, list(case.inputs().values()))
        if isinstance(r, Exception) or r.schedule.why == "one block":
            continue
        together += r.schedule.whole_grid
        apart += not r.schedule.whole_grid
    assert together >= 20 and together > 4 * apart, (together, apart)


CROSSING = r"""
extern "C" __global__ void publish(int* data, int* seen, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (blockIdx.x == 0 && threadIdx.x == 0) data[0] = 42;     // block 0 writes
  else if (i < n) seen[i] = data[0];                         // every other block reads it
}
extern "C" __global__ void take_slots(int* counter, int* owner, int rounds) {
  for (int r = 0; r < rounds; ++r)                           // block 1's first slot comes before block 0's last
    owner[atomicAdd(counter, 1)] = blockIdx.x;
}
extern "C" __global__ void histogram(const int* x, int* bins, int n) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
    atomicAdd(&bins[x[i] & 7], 1);                           // result unused: order cannot matter
}
"""


def test_a_block_reading_another_blocks_write_runs_block_by_block():
    n = 256
    data, seen = np.zeros(1, np.int32), np.zeros(n, np.int32)
    r = run(CROSSING, "publish", 4, 64, (data, seen, np.int32(n)))
    assert not r.schedule.whole_grid and "data[0]" in r.schedule.why
    assert (seen[64:] == 42).all()  # block 0 ran before the other blocks read, as block by block does


def test_atomics_interleaved_across_blocks_run_block_by_block():
    counter, owner = np.zeros(1, np.int32), np.full(8 * 64, -1, np.int32)
    r = run(CROSSING, "take_slots", 2, 32, (counter, owner, np.int32(8)))
    assert not r.schedule.whole_grid and "atomics" in r.schedule.why
    assert (owner[:256] == 0).all() and (owner[256:] == 1).all()


def test_order_free_atomics_from_many_blocks_stay_together():
    x = np.random.default_rng(3).integers(0, 1000, 5000, dtype=np.int32)
    bins = np.zeros(8, np.int32)
    r = run(CROSSING, "histogram", 5, 128, (x, bins, np.int32(len(x))))
    assert r.schedule.whole_grid, r.schedule
    np.testing.assert_array_equal(bins, np.bincount(x & 7, minlength=8))


WARPS = r"""
extern "C" __global__ void warp_sums(const float* x, float* out, float* total, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  float v = i < n ? x[i] : 0.0f;
  unsigned mask = __ballot_sync(0xffffffffu, i < n);
  for (int d = 16; d > 0; d /= 2) v += __shfl_down_sync(0xffffffffu, v, d);
  if ((threadIdx.x & 31) == 0) { out[blockIdx.x * 4 + threadIdx.x / 32] = v; atomicAdd(total, v); }
  if (threadIdx.x == 0 && mask == 0) out[0] = -1.0f;
}
extern "C" __global__ void spin(int* flag) {
  while (flag[0] == 0) { }
}
extern "C" __global__ void stray_local(const int* k, int* out) {
  int a[4] = {1, 2, 3, 4};
  out[blockIdx.x] = a[k[blockIdx.x]];
}
"""


@pytest.mark.parametrize("block", [48, 64, 100])
def test_warp_shuffles_in_blocks_that_are_not_whole_warps(block):
    """Warps never cross blocks, also when a block is not a multiple of 32 threads and blocks run together."""
    n = 5 * block - 7
    x = np.random.default_rng(block).random(n, dtype=np.float32)
    args = (x, np.zeros(5 * block, np.float32), np.zeros(1, np.float32), np.int32(n))
    together = _launch(WARPS, None, "warp_sums", 5, block, args)
    assert together[0].schedule.whole_grid
    _same(together, _launch(WARPS, None, "warp_sums", 5, block, args, whole_grid=False))


def test_a_runaway_loop_is_reported_as_block_by_block_reports_it():
    args = (np.zeros(1, np.int32),)
    got = _same(
        _launch(WARPS, None, "spin", 3, 32, args, max_steps=500),
        _launch(WARPS, None, "spin", 3, 32, args, max_steps=500, whole_grid=False),
    )
    assert isinstance(got, KernelError) and "block (0, 0, 0)" in str(got)


def test_stray_local_reads_name_each_blocks_local_array_as_block_by_block():
    args = (np.array([0, 7, 9], np.int32), np.zeros(3, np.int32))
    got = _same(
        _launch(WARPS, None, "stray_local", 3, 1, args),
        _launch(WARPS, None, "stray_local", 3, 1, args, whole_grid=False),
    )
    assert len(got.out_of_bounds) == 2 and not got.schedule.whole_grid


def test_arguments_that_overlap_run_block_by_block():
    x = np.zeros(300, np.int32)
    r = run(CROSSING, "publish", 4, 64, (x[:10], x[5:261], np.int32(256)))
    assert not r.schedule.whole_grid and "overlap" in r.schedule.why


@pytest.mark.parametrize(
    "source,kernel,grid,block,make",
    [
        (CROSSING, "publish", 6, 64, lambda: (np.zeros(1, np.int32), np.zeros(384, np.int32), np.int32(384))),
        (
            CROSSING,
            "histogram",
            7,
            64,
            lambda: (np.arange(3000, dtype=np.int32), np.zeros(8, np.int32), np.int32(3000)),
        ),
        (
            WARPS,
            "warp_sums",
            5,
            48,
            lambda: (np.ones(230, np.float32), np.zeros(240, np.float32), np.zeros(1, np.float32), np.int32(230)),
        ),
    ],
)
def test_a_grid_in_several_chunks_runs_as_block_by_block(source, kernel, grid, block, make, monkeypatch):
    """Chunks of two blocks: each chunk copies memory before it and may fall back on its own."""
    from helpers.ptx import grid as grid_module

    monkeypatch.setattr(grid_module, "GRID_THREADS", 2 * block)
    _same(
        _launch(source, None, kernel, grid, block, make()),
        _launch(source, None, kernel, grid, block, make(), whole_grid=False),
    )


def test_without_its_log_a_launch_still_runs_block_by_block_where_blocks_cross():
    """keep_log=False (a notebook's launch, ptx/launch.py): the log still decides the schedule, then goes."""
    n = 256
    data, seen = np.zeros(1, np.int32), np.zeros(n, np.int32)
    r = run(CROSSING, "publish", 4, 64, (data, seen, np.int32(n)), keep_log=False)
    assert not r.schedule.whole_grid and "data[0]" in r.schedule.why
    assert (seen[64:] == 42).all() and r.table.shape == (6, 0)
    x = np.random.default_rng(4).integers(0, 1000, 5000, dtype=np.int32)
    kept, dropped = np.zeros(8, np.int32), np.zeros(8, np.int32)
    with_log = run(CROSSING, "histogram", 5, 128, (x, kept, np.int32(len(x))))
    without = run(CROSSING, "histogram", 5, 128, (x, dropped, np.int32(len(x))), keep_log=False)
    assert without.schedule.whole_grid and np.array_equal(kept, dropped)
    assert with_log.table.shape[1] > 0 and without.table.shape[1] == 0


def test_a_launch_past_max_threads_is_refused_in_one_sentence():
    x = np.zeros(100, np.int32)
    with pytest.raises(LearnerError, match="This launch starts 640 threads, too many .*at most 600"):
        run(CROSSING, "histogram", 5, 128, (x, np.zeros(8, np.int32), np.int32(100)), max_threads=600)
