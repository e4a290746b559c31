"""Wrong kernels for helpers/problems/nb17.py: warp calls with the wrong mask, lanes that leave
before a shuffle, a missing cuda.syncwarp(), lane offsets off by one, a grid sync missed or replaced."""

import numba
from numba import cuda

from helpers.problems.nb17 import FULL_MASK

from . import Wrong

HALF_MASK = 0x0000FFFF  # lanes 0..15 only

# -- warp_scan


@cuda.jit
def scan_no_lane_test(x, out):
    i = cuda.grid(1)
    v = x[i] if i < x.size else numba.int32(0)
    delta = 1
    while delta < 32:
        v += cuda.shfl_up_sync(FULL_MASK, v, delta)  # lanes below delta get their own v back and add it again
        delta *= 2
    if i < x.size:
        out[i] = v


@cuda.jit
def scan_lane_test_off_by_one(x, out):
    i = cuda.grid(1)
    v = x[i] if i < x.size else numba.int32(0)
    delta = 1
    while delta < 32:
        up = cuda.shfl_up_sync(FULL_MASK, v, delta)
        if cuda.laneid > delta:  # lane delta itself has lane 0 below it and should add
            v += up
        delta *= 2
    if i < x.size:
        out[i] = v


@cuda.jit
def scan_shuffle_behind_guard(x, out):
    i = cuda.grid(1)
    if i < x.size:  # the lanes past the end leave: the full mask names lanes that never arrive
        v = x[i]
        delta = 1
        while delta < 32:
            up = cuda.shfl_up_sync(FULL_MASK, v, delta)
            if cuda.laneid >= delta:
                v += up
            delta *= 2
        out[i] = v


@cuda.jit
def scan_shuffle_inside_lane_test(x, out):
    i = cuda.grid(1)
    v = x[i] if i < x.size else numba.int32(0)
    delta = 1
    while delta < 32:
        if cuda.laneid >= delta:  # lanes below delta skip the shuffle the full mask says they make
            v += cuda.shfl_up_sync(FULL_MASK, v, delta)
        delta *= 2
    if i < x.size:
        out[i] = v


@cuda.jit
def scan_half_mask(x, out):
    i = cuda.grid(1)
    v = x[i] if i < x.size else numba.int32(0)
    delta = 1
    while delta < 32:
        up = cuda.shfl_up_sync(HALF_MASK, v, delta)  # lanes 16..31 call with a mask that leaves them out
        if cuda.laneid >= delta:
            v += up
        delta *= 2
    if i < x.size:
        out[i] = v


@cuda.jit
def scan_shuffle_down(x, out):
    i = cuda.grid(1)
    v = x[i] if i < x.size else numba.int32(0)
    delta = 1
    while delta < 32:
        up = cuda.shfl_down_sync(FULL_MASK, v, delta)  # from the lane above: a suffix sum
        if cuda.laneid + delta < 32:
            v += up
        delta *= 2
    if i < x.size:
        out[i] = v


@cuda.jit
def scan_exclusive(x, out):
    i = cuda.grid(1)
    v = x[i] if i < x.size else numba.int32(0)
    delta = 1
    while delta < 32:
        up = cuda.shfl_up_sync(FULL_MASK, v, delta)
        if cuda.laneid >= delta:
            v += up
        delta *= 2
    if i < x.size:
        out[i] = v - x[i]


@cuda.jit
def scan_in_shared_memory(x, out):
    buf = cuda.shared.array(128, numba.int32)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    lane = cuda.laneid
    buf[t] = x[i] if i < x.size else 0
    cuda.syncthreads()
    v = 0
    for k in range(lane + 1):  # every lane adds its warp's lower values from shared memory
        v += buf[t - lane + k]
    if i < x.size:
        out[i] = v


@cuda.jit
def scan_strides_of_warp_size(x, out):
    i = cuda.grid(1)
    v = x[i] if i < x.size else numba.int32(0)
    delta = 1
    while delta < 16:  # four steps: lanes 16..31 miss the lower half of their warp
        up = cuda.shfl_up_sync(FULL_MASK, v, delta)
        if cuda.laneid >= delta:
            v += up
        delta *= 2
    if i < x.size:
        out[i] = v


# -- compact


@cuda.jit
def compact_no_syncwarp(x, out, counts):
    i = cuda.grid(1)
    keep = i < x.size and x[i] > 0
    kept = cuda.ballot_sync(FULL_MASK, keep)
    if i < x.size:
        out[i] = 0
    if keep:  # nothing orders lane 5's zero before lane 2's packed write into slot 5
        out[i - cuda.laneid + cuda.popc(kept & cuda.lanemask_lt())] = x[i]
    if cuda.laneid == 0 and i < x.size:
        counts[i // 32] = cuda.popc(kept)


@cuda.jit
def compact_ballot_behind_guard(x, out, counts):
    i = cuda.grid(1)
    if i < x.size:  # lanes past the end never vote, but the full mask names them
        kept = cuda.ballot_sync(FULL_MASK, x[i] > 0)
        out[i] = 0
        cuda.syncwarp(kept | 1)
        if x[i] > 0:
            out[i - cuda.laneid + cuda.popc(kept & cuda.lanemask_lt())] = x[i]
        if cuda.laneid == 0:
            counts[i // 32] = cuda.popc(kept)


@cuda.jit
def compact_half_mask(x, out, counts):
    i = cuda.grid(1)
    keep = i < x.size and x[i] > 0
    kept = cuda.ballot_sync(HALF_MASK, keep)  # lanes 16..31 are left out of their own vote
    if i < x.size:
        out[i] = 0
    cuda.syncwarp()
    if keep:
        out[i - cuda.laneid + cuda.popc(kept & cuda.lanemask_lt())] = x[i]
    if cuda.laneid == 0 and i < x.size:
        counts[i // 32] = cuda.popc(kept)


@cuda.jit
def compact_rank_counts_itself(x, out, counts):
    i = cuda.grid(1)
    keep = i < x.size and x[i] > 0
    kept = cuda.ballot_sync(FULL_MASK, keep)
    if i < x.size:
        out[i] = 0
    cuda.syncwarp()
    if keep:
        le = cuda.lanemask_lt() | (1 << cuda.laneid)  # lanemask_le: the lane itself counted too
        out[i - cuda.laneid + cuda.popc(kept & le)] = x[i]
    if cuda.laneid == 0 and i < x.size:
        counts[i // 32] = cuda.popc(kept)


@cuda.jit
def compact_rank_le_guarded(x, out, counts):
    i = cuda.grid(1)
    keep = i < x.size and x[i] > 0
    kept = cuda.ballot_sync(FULL_MASK, keep)
    if i < x.size:
        out[i] = 0
    cuda.syncwarp()
    slot = i - cuda.laneid + cuda.popc(kept & (cuda.lanemask_lt() | (1 << cuda.laneid)))
    if keep and slot < x.size:  # the guard hides the write past the end, not the shift
        out[slot] = x[i]
    if cuda.laneid == 0 and i < x.size:
        counts[i // 32] = cuda.popc(kept)


@cuda.jit
def compact_rank_in_block(x, out, counts):
    i = cuda.grid(1)
    keep = i < x.size and x[i] > 0
    kept = cuda.ballot_sync(FULL_MASK, keep)
    if i < x.size:
        out[i] = 0
    cuda.syncwarp()
    if keep:  # the block's first element, not the warp's: warp 1 packs over warp 0's segment
        out[cuda.blockIdx.x * cuda.blockDim.x + cuda.popc(kept & cuda.lanemask_lt())] = x[i]
    if cuda.laneid == 0 and i < x.size:
        counts[i // 32] = cuda.popc(kept)


@cuda.jit
def compact_count_unguarded(x, out, counts):
    i = cuda.grid(1)
    keep = i < x.size and x[i] > 0
    kept = cuda.ballot_sync(FULL_MASK, keep)
    if i < x.size:
        out[i] = 0
    cuda.syncwarp()
    if keep:
        out[i - cuda.laneid + cuda.popc(kept & cuda.lanemask_lt())] = x[i]
    if cuda.laneid == 0:  # a warp wholly past the end writes a count that has no element
        counts[i // 32] = cuda.popc(kept)


@cuda.jit
def compact_every_lane_counts(x, out, counts):
    i = cuda.grid(1)
    keep = i < x.size and x[i] > 0
    kept = cuda.ballot_sync(FULL_MASK, keep)
    if i < x.size:
        out[i] = 0
    cuda.syncwarp()
    if keep:
        out[i - cuda.laneid + cuda.popc(kept & cuda.lanemask_lt())] = x[i]
    if i < x.size:
        counts[i // 32] = cuda.popc(kept)  # 32 lanes write one element


@cuda.jit
def compact_counts_with_atomics(x, out, counts):
    i = cuda.grid(1)
    keep = i < x.size and x[i] > 0
    kept = cuda.ballot_sync(FULL_MASK, keep)
    if i < x.size:
        out[i] = 0
    cuda.syncwarp()
    if cuda.laneid == 0 and i < x.size:
        counts[i // 32] = 0
    cuda.syncwarp()
    if keep:
        out[i - cuda.laneid + cuda.popc(kept & cuda.lanemask_lt())] = x[i]
        cuda.atomic.add(counts, i // 32, 1)  # one atomic per kept value where the ballot already counted them


@cuda.jit
def compact_keeps_zeros(x, out, counts):
    i = cuda.grid(1)
    keep = i < x.size and x[i] >= 0  # 0 is not positive
    kept = cuda.ballot_sync(FULL_MASK, keep)
    if i < x.size:
        out[i] = 0
    cuda.syncwarp()
    if keep:
        out[i - cuda.laneid + cuda.popc(kept & cuda.lanemask_lt())] = x[i]
    if cuda.laneid == 0 and i < x.size:
        counts[i // 32] = cuda.popc(kept)


# -- normalize


@cuda.jit
def normalize_no_grid_sync(x, out, total):
    i = cuda.grid(1)
    if i < x.size:
        cuda.atomic.add(total, 0, x[i])
        out[i] = x[i] / total[0]  # the other threads (and blocks) have not all added yet


@cuda.jit
def normalize_block_sync_only(x, out, total):
    i = cuda.grid(1)
    if i < x.size:
        cuda.atomic.add(total, 0, x[i])
    cuda.syncthreads()  # waits for this block only: other blocks may still be adding
    if i < x.size:
        out[i] = x[i] / total[0]


@cuda.jit
def normalize_grid_sync_behind_guard(x, out, total):
    i = cuda.grid(1)
    if i < x.size:
        cuda.atomic.add(total, 0, x[i])
        cuda.cg.this_grid().sync()  # threads past the end never arrive: the grid never meets on a GPU
        out[i] = x[i] / total[0]


@cuda.jit
def normalize_plain_add(x, out, total):
    i = cuda.grid(1)
    if i < x.size:
        total[0] += x[i]  # read, add, write: threads overwrite each other's sums
    cuda.cg.this_grid().sync()
    if i < x.size:
        out[i] = x[i] / total[0]


@cuda.jit
def normalize_sum_in_thread0(x, out, total):
    i = cuda.grid(1)
    if i == 0:
        s = numba.float32(0.0)
        for k in range(x.size):
            s += x[k]
        total[0] = s
    cuda.cg.this_grid().sync()
    if i < x.size:
        out[i] = x[i] / total[0]


@cuda.jit
def normalize_multiplies(x, out, total):
    i = cuda.grid(1)
    if i < x.size:
        cuda.atomic.add(total, 0, x[i])
    cuda.cg.this_grid().sync()
    if i < x.size:
        out[i] = x[i] * total[0]


WRONG = {
    "warp_scan": [
        Wrong("wrong lane offset (no lane test)", scan_no_lane_test, "should be"),
        Wrong("wrong lane offset (lane > delta)", scan_lane_test_off_by_one, "should be"),
        Wrong("warp misuse (shuffle behind the bounds guard)", scan_shuffle_behind_guard, "misused warp call"),
        Wrong("warp misuse (divergent shuffle)", scan_shuffle_inside_lane_test, "misused warp call"),
        Wrong("wrong mask", scan_half_mask, "misused warp call"),
        Wrong("wrong shuffle direction", scan_shuffle_down, "should be"),
        Wrong("known mistake", scan_exclusive, "exclusive scan"),
        Wrong("over budget (shared-memory scan)", scan_in_shared_memory, "shfl_up_sync"),
        Wrong("too few steps", scan_strides_of_warp_size, "should be"),
    ],
    "compact": [
        Wrong("race (missing syncwarp)", compact_no_syncwarp, "cuda.syncwarp() would order them"),
        Wrong("warp misuse (ballot behind the bounds guard)", compact_ballot_behind_guard, "misused warp call"),
        Wrong("wrong mask", compact_half_mask, "misused warp call"),
        Wrong("wrong lane offset (rank counts the lane itself)", compact_rank_counts_itself, "out-of-bounds"),
        Wrong(
            "known mistake (rank counts the lane itself, guarded)", compact_rank_le_guarded, "one slot too far right"
        ),
        Wrong("wrong index (the block's start, not the warp's)", compact_rank_in_block, "race"),
        Wrong("missing guard", compact_count_unguarded, "out-of-bounds"),
        Wrong("race (every lane writes the count)", compact_every_lane_counts, "race"),
        Wrong("over budget (atomics)", compact_counts_with_atomics, "no atomics are needed"),
        Wrong("wrong numbers (zeros kept)", compact_keeps_zeros, "should be"),
    ],
    "normalize": [
        Wrong("race (no grid sync)", normalize_no_grid_sync, "race"),
        Wrong("race (block sync where the grid must sync)", normalize_block_sync_only, "grid.sync()"),
        Wrong("divergent grid sync", normalize_grid_sync_behind_guard, "grid.sync()"),
        Wrong("plain write where an atomic is needed", normalize_plain_add, "race"),
        Wrong("over budget (the sum in thread 0's loop)", normalize_sum_in_thread0, "let every thread add"),
        Wrong("wrong numbers", normalize_multiplies, "should be"),
    ],
}
