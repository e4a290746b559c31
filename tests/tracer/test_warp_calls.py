"""The CPU tracer's warp-level calls (shuffles, votes, match, syncwarp, masks) and grid sync:
lanes of a warp meet at each call as on a GPU, and masks naming absent lanes are reported."""

import numba
import numpy as np
from numba import cuda

from helpers.tracer import trace

FULL = 0xFFFFFFFF


def _kinds(t):
    return sorted(v.kind for v in t.verdicts)


@cuda.jit
def warp_sum(x, out):
    i = cuda.grid(1)
    v = x[i]
    offset = 16
    while offset > 0:
        v += cuda.shfl_down_sync(0xFFFFFFFF, v, offset)
        offset //= 2
    if cuda.laneid == 0:
        out[i // 32] = v


def test_shfl_down_reduction_sums_each_warp():
    x = np.arange(64, dtype=np.float32)
    out = np.zeros(2, np.float32)
    t = trace(warp_sum, 1, 64, x, out, outputs=("out",))
    assert t.ok, t.summary()
    np.testing.assert_array_equal(out, [x[:32].sum(), x[32:].sum()])
    assert out.dtype == np.float32


@cuda.jit
def shuffles(x, idx, up, down, xor):
    i = cuda.grid(1)
    v = x[i]
    idx[i] = cuda.shfl_sync(0xFFFFFFFF, v, 3)
    up[i] = cuda.shfl_up_sync(0xFFFFFFFF, v, 1)
    down[i] = cuda.shfl_down_sync(0xFFFFFFFF, v, 1)
    xor[i] = cuda.shfl_xor_sync(0xFFFFFFFF, v, 1)


def test_each_shuffle_reads_the_right_lane():
    x = np.arange(100, 132, dtype=np.int32)
    outs = [np.zeros(32, np.int32) for _ in range(4)]
    t = trace(shuffles, 1, 32, x, *outs)
    assert t.ok, t.summary()
    idx, up, down, xor = outs
    lanes = np.arange(32)
    np.testing.assert_array_equal(idx, np.full(32, 103))
    np.testing.assert_array_equal(up, x[np.maximum(lanes - 1, 0)])  # lane 0 keeps its own value
    np.testing.assert_array_equal(down, x[np.minimum(lanes + 1, 31)])  # lane 31 keeps its own value
    np.testing.assert_array_equal(xor, x[lanes ^ 1])


@cuda.jit
def votes(x, res):
    i = cuda.grid(1)
    p = x[i] > 0
    res[i, 0] = cuda.all_sync(0xFFFFFFFF, p)
    res[i, 1] = cuda.any_sync(0xFFFFFFFF, p)
    res[i, 2] = cuda.eq_sync(0xFFFFFFFF, p)
    res[i, 3] = cuda.ballot_sync(0xFFFFFFFF, p)
    res[i, 4] = cuda.lanemask_lt()
    res[i, 5] = cuda.laneid


def test_votes_ballot_and_lane_masks():
    x = np.zeros(64, np.int64)
    x[3] = x[5] = 1  # warp 0: two lanes true; warp 1: all false
    res = np.zeros((64, 6), np.int64)
    t = trace(votes, 1, 64, x, res)
    assert t.ok, t.summary()
    np.testing.assert_array_equal(res[:32, :4], np.tile([0, 1, 0, (1 << 3) | (1 << 5)], (32, 1)))
    np.testing.assert_array_equal(res[32:, :4], np.tile([0, 0, 1, 0], (32, 1)))
    np.testing.assert_array_equal(res[:, 4], [(1 << (i % 32)) - 1 for i in range(64)])
    np.testing.assert_array_equal(res[:, 5], np.arange(64) % 32)


@cuda.jit
def matches(x, any_out, all_mask, all_pred):
    i = cuda.grid(1)
    any_out[i] = cuda.match_any_sync(0xFFFFFFFF, x[i])
    m, p = cuda.match_all_sync(0xFFFFFFFF, x[i] // 100)
    all_mask[i] = m
    all_pred[i] = p


def test_match_any_and_all():
    x = (np.arange(32) % 2).astype(np.int64)  # even lanes 0, odd lanes 1
    any_out, all_mask, all_pred = np.zeros(32, np.int64), np.zeros(32, np.int64), np.zeros(32, np.int64)
    t = trace(matches, 1, 32, x, any_out, all_mask, all_pred)
    assert t.ok, t.summary()
    even = sum(1 << k for k in range(0, 32, 2))
    odd = (even << 1) - (1 << 32)  # Numba types the match masks int32: lane 31 makes them negative, as on a GPU
    np.testing.assert_array_equal(any_out, [even if k % 2 == 0 else odd for k in range(32)])
    np.testing.assert_array_equal(all_mask, np.full(32, -1))
    np.testing.assert_array_equal(all_pred, np.ones(32))


@cuda.jit
def active_in_branch(out):
    i = cuda.grid(1)
    if i < 10:
        out[i] = cuda.activemask()


def test_activemask_names_only_lanes_in_the_branch():
    out = np.zeros(32, np.int64)
    t = trace(active_in_branch, 1, 32, out)
    assert t.ok, t.summary()
    np.testing.assert_array_equal(out[:10], np.full(10, (1 << 10) - 1))


@cuda.jit
def shfl_after_return(x, out):
    i = cuda.grid(1)
    if i >= 16:
        return
    out[i] = cuda.shfl_down_sync(0xFFFFFFFF, x[i], 1)


def test_full_mask_with_exited_lanes_is_warp_misuse():
    x, out = np.arange(32, dtype=np.float32), np.zeros(32, np.float32)
    t = trace(shfl_after_return, 1, 32, x, out)
    assert _kinds(t) == ["warp_misuse"], t.summary()
    v = t.verdicts[0]
    assert v.thread == (0, 0, 0) and v.block == (0, 0, 0)
    assert "thread 0 of block 0" in v.message and "shfl_down_sync" in v.message and "line" in v.message
    assert "lane 16 had already finished" in v.message and "activemask" in v.message
    assert out[14] == 15  # lanes that are there still exchange values


@cuda.jit
def shfl_reads_exited(x, out):
    i = cuda.grid(1)
    if i >= 16:
        return
    out[i] = cuda.shfl_down_sync(0xFFFF, x[i], 1)


def test_shuffle_from_an_exited_lane_is_warp_misuse():
    x, out = np.arange(32, dtype=np.float32), np.zeros(32, np.float32)
    t = trace(shfl_reads_exited, 1, 32, x, out)
    assert _kinds(t) == ["warp_misuse"], t.summary()
    v = t.verdicts[0]
    assert v.thread == (15, 0, 0) and "reads lane 16" in v.message and "finished" in v.message
    np.testing.assert_array_equal(out[:15], x[1:16])


@cuda.jit
def syncwarp_diverged(out):
    i = cuda.grid(1)
    if i % 2 == 0:
        cuda.syncwarp(0xFFFFFFFF)
        out[i] = 1
    else:
        cuda.syncwarp(0xFFFFFFFF)
        out[i] = 2


def test_syncwarp_at_two_places_is_warp_misuse():
    out = np.zeros(32, np.int32)
    t = trace(syncwarp_diverged, 1, 32, out)
    assert _kinds(t) == ["warp_misuse"], t.summary()
    assert "another warp call" in t.verdicts[0].message
    np.testing.assert_array_equal(out, np.where(np.arange(32) % 2 == 0, 1, 2))


@cuda.jit
def syncwarp_ok(out):
    i = cuda.grid(1)
    cuda.syncwarp(0xFFFFFFFF)
    out[i] = i


def test_syncwarp_full_warp_is_fine():
    out = np.zeros(64, np.int32)
    t = trace(syncwarp_ok, 1, 64, out, outputs=("out",))
    assert t.ok, t.summary()
    np.testing.assert_array_equal(out, np.arange(64))


@cuda.jit
def mask_without_self(x, out):
    i = cuda.grid(1)
    out[i] = cuda.shfl_sync(0x1, x[i], 0)


def test_mask_leaving_out_the_caller_is_warp_misuse():
    x, out = np.arange(32, dtype=np.float32), np.zeros(32, np.float32)
    t = trace(mask_without_self, 1, 32, x, out)
    assert _kinds(t) == ["warp_misuse"]
    assert "leaves out lane 1 itself" in t.verdicts[0].message and t.verdicts[0].thread == (1, 0, 0)


@cuda.jit
def warp_then_block(x, out):
    s = cuda.shared.array(64, np.float32)
    i = cuda.threadIdx.x
    v = x[i] + cuda.shfl_xor_sync(0xFFFFFFFF, x[i], 16)
    s[i] = v
    cuda.syncthreads()
    out[i] = s[63 - i]


def test_warp_calls_and_syncthreads_together():
    x, out = np.arange(64, dtype=np.float32), np.zeros(64, np.float32)
    t = trace(warp_then_block, 1, 64, x, out, outputs=("out",))
    assert t.ok, t.summary()
    lanes = np.arange(64)
    v = x + x[(lanes % 32 ^ 16) + lanes // 32 * 32]
    np.testing.assert_array_equal(out, v[::-1])


@cuda.jit
def grid_two_phase(x, tmp, out):
    i = cuda.grid(1)
    tmp[i] = x[i] * 2
    cuda.cg.this_grid().sync()
    out[i] = tmp[(i + 32) % tmp.size]  # a value another block wrote before the grid barrier


def test_grid_sync_orders_blocks():
    x = np.arange(96, dtype=np.float32)
    tmp, out = np.zeros(96, np.float32), np.zeros(96, np.float32)
    t = trace(grid_two_phase, 3, 32, x, tmp, out, outputs=("out",))
    assert t.ok, t.summary()
    np.testing.assert_array_equal(out, np.roll(x * 2, -32))


@cuda.jit
def grid_no_sync(x, tmp, out):
    i = cuda.grid(1)
    tmp[i] = x[i] * 2
    out[i] = tmp[(i + 32) % tmp.size]


def test_without_grid_sync_it_is_a_cross_block_race():
    x = np.arange(96, dtype=np.float32)
    t = trace(grid_no_sync, 3, 32, x, np.zeros(96, np.float32), np.zeros(96, np.float32))
    assert _kinds(t) == ["race"] and "different blocks" in t.verdicts[0].message


@cuda.jit
def grid_sync_skipped(x, out):
    i = cuda.grid(1)
    if cuda.blockIdx.x == 1:
        return
    cuda.cg.this_grid().sync()
    out[i] = x[i]


def test_grid_sync_not_reached_by_a_block():
    x, out = np.arange(64, dtype=np.float32), np.zeros(64, np.float32)
    t = trace(grid_sync_skipped, 2, 32, x, out)
    assert _kinds(t) == ["grid_sync_divergent"], t.summary()
    v = t.verdicts[0]
    assert v.block == (1, 0, 0) and v.thread == (0, 0, 0) and v.line is not None
    assert "thread 0 of block 1" in v.message and "had already finished" in v.message and "this_grid" in v.message


# -- syncwarp orders memory between the lanes of one warp (CUDA's memory model), nothing else ----
@cuda.jit
def shared_warp_sum(x, out):
    s = cuda.shared.array(64, numba.float32)
    t = cuda.threadIdx.x
    s[t] = x[cuda.grid(1)]
    cuda.syncwarp()
    base = t - t % 32
    off = 16
    while off > 0:
        v = numba.float32(0)
        if t % 32 < off:
            v = s[t + off]
        cuda.syncwarp()
        if t % 32 < off:
            s[t] += v
        cuda.syncwarp()
        off //= 2
    if t == base:
        out[t // 32] = s[t]


@cuda.jit
def shared_warp_sum_unsynced(x, out):
    s = cuda.shared.array(32, numba.float32)
    t = cuda.threadIdx.x
    s[t] = x[t]
    off = 16
    while off > 0:
        if t < off:
            s[t] += s[t + off]
        off //= 2
    if t == 0:
        out[0] = s[0]


@cuda.jit
def syncwarp_across_warps(x, out):
    s = cuda.shared.array(64, numba.float32)
    t = cuda.threadIdx.x
    s[t] = x[t]
    cuda.syncwarp()  # orders this warp only: the other warp's s[t ^ 32] may not be written yet
    out[t] = s[t ^ 32]


def test_syncwarp_orders_shared_memory_within_a_warp():
    x = np.arange(64, dtype=np.float32)
    out = np.zeros(2, np.float32)
    t = trace(shared_warp_sum, 1, 64, x, out, outputs=("out",))
    assert t.ok, t.summary()
    np.testing.assert_array_equal(out, [x[:32].sum(), x[32:].sum()])


def test_a_warp_reduction_without_syncwarp_is_a_race_that_names_syncwarp():
    out = np.zeros(1, np.float32)
    t = trace(shared_warp_sum_unsynced, 1, 32, np.arange(32, dtype=np.float32), out)
    race = [v for v in t.verdicts if v.kind == "race"]
    assert race, t.summary()
    assert "both are lanes of one warp: a cuda.syncwarp() would order them too" in race[0].message


def test_syncwarp_does_not_order_two_warps():
    x = np.arange(64, dtype=np.float32)
    t = trace(syncwarp_across_warps, 1, 64, x, np.zeros(64, np.float32))
    race = [v for v in t.verdicts if v.kind == "race"]
    assert race, t.summary()
    assert "lanes of one warp" not in race[0].message
