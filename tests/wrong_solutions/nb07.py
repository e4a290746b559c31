"""Wrong answers for helpers/problems/nb07.py: uncoalesced reads and occupancy miscounts."""

import numba
from numba import cuda

from helpers.problems.nb07 import MAX_BLOCKS_PER_SM, MAX_THREADS_PER_SM, REGISTERS_PER_SM, SHARED_PER_SM, WARP

from . import Wrong

# -- row_sums


@cuda.jit
def rows_one_thread(A, out):
    row = cuda.blockIdx.x
    if cuda.threadIdx.x == 0:  # right numbers; a warp's reads are 31 idle lanes and one long stride
        acc = numba.float32(0.0)
        for j in range(A.shape[1]):
            acc += A[row, j]
        out[row] = acc


@cuda.jit
def rows_chunked(A, out):
    buf = cuda.shared.array(WARP, numba.float32)
    row = cuda.blockIdx.x
    lane = cuda.threadIdx.x
    cols = A.shape[1]
    chunk = (cols + WARP - 1) // WARP
    acc = numba.float32(0.0)
    for j in range(lane * chunk, min(cols, (lane + 1) * chunk)):  # each lane its own stretch: strided across lanes
        acc += A[row, j]
    buf[lane] = acc
    cuda.syncthreads()
    s = WARP // 2
    while s > 0:
        if lane < s:
            buf[lane] += buf[lane + s]
        cuda.syncthreads()
        s //= 2
    if lane == 0:
        out[row] = buf[0]


@cuda.jit
def rows_no_barrier(A, out):
    buf = cuda.shared.array(WARP, numba.float32)
    row = cuda.blockIdx.x
    lane = cuda.threadIdx.x
    acc = numba.float32(0.0)
    for j in range(lane, A.shape[1], WARP):
        acc += A[row, j]
    buf[lane] = acc
    cuda.syncthreads()
    s = WARP // 2
    while s > 0:
        if lane < s:
            buf[lane] += buf[lane + s]
        s //= 2
    if lane == 0:
        out[row] = buf[0]


@cuda.jit
def rows_no_guard(A, out):
    buf = cuda.shared.array(WARP, numba.float32)
    row = cuda.blockIdx.x
    lane = cuda.threadIdx.x
    acc = numba.float32(0.0)
    for k in range((A.shape[1] + WARP - 1) // WARP):
        acc += A[row, lane + k * WARP]  # the last round runs past the end of the row
    buf[lane] = acc
    cuda.syncthreads()
    s = WARP // 2
    while s > 0:
        if lane < s:
            buf[lane] += buf[lane + s]
        cuda.syncthreads()
        s //= 2
    if lane == 0:
        out[row] = buf[0]


# -- occupancy


def occ_threads_only(threads, regs, smem):
    return min(MAX_BLOCKS_PER_SM, MAX_THREADS_PER_SM // threads)


def occ_no_register_rounding(threads, regs, smem):
    warps = (threads + 31) // 32
    return min(
        MAX_BLOCKS_PER_SM,
        MAX_THREADS_PER_SM // (warps * 32),
        REGISTERS_PER_SM // (threads * regs),
        SHARED_PER_SM // smem if smem else MAX_BLOCKS_PER_SM,
    )


def occ_no_block_limit(threads, regs, smem):
    warps = (threads + 31) // 32
    per_warp = (regs * 32 + 255) // 256 * 256
    limits = [MAX_THREADS_PER_SM // (warps * 32), REGISTERS_PER_SM // (warps * per_warp)]
    if smem:
        limits.append(SHARED_PER_SM // smem)
    return min(limits)


def occ_float(threads, regs, smem):
    return MAX_THREADS_PER_SM / threads


def occupancy_ignores_warp_rounding(threads, regs, smem):
    regs_per_warp = (regs * 32 + 255) // 256 * 256
    by_threads = 2048 // threads  # a block of 100 threads still takes 4 whole warps
    by_regs = 65536 // (threads * regs_per_warp // 32)
    by_smem = 228 * 1024 // smem if smem else 32
    return min(32, by_threads, by_regs, by_smem)


def occ_smem_in_whole_kb(threads, regs, smem):
    warps = (threads + 31) // 32
    regs_per_warp = (regs * 32 + 255) // 256 * 256
    kb = smem // 1024 * 1024  # right only when smem is a whole number of KB, the sizes the check used to draw
    by_smem = SHARED_PER_SM // kb if kb else MAX_BLOCKS_PER_SM
    by_regs = REGISTERS_PER_SM // (warps * regs_per_warp)
    return min(MAX_BLOCKS_PER_SM, MAX_THREADS_PER_SM // (warps * 32), by_regs, by_smem)


WRONG = {
    "sectors": [
        Wrong("cache lines", (1, 2, 32), "128-byte cache lines"),
        Wrong("bytes not sectors", (4, 4, 4), "stride s spreads them"),
        Wrong("too many", (4, 8, 64), "32 at most"),
        Wrong("wrong shape", 8, "tuple"),
        Wrong("floats for counts", (4.0, 8.0, 32.0), "a whole number (int): write 4"),
    ],
    "row_sums": [
        Wrong("uncoalesced (one lane per row)", rows_one_thread, "let all 32 lanes of the row's block walk the row"),
        Wrong("uncoalesced (chunks)", rows_chunked, "coalescing"),
        Wrong("race", rows_no_barrier, "race"),
        Wrong("missing guard", rows_no_guard, "an out-of-bounds access"),
    ],
    "occupancy": [
        Wrong("ignores warp rounding", occupancy_ignores_warp_rounding, "whole warps"),
        Wrong("threads only", occ_threads_only, "counts threads only"),
        Wrong("no register rounding", occ_no_register_rounding, "multiples of 256"),
        Wrong("no block limit", occ_no_block_limit, "at most MAX_BLOCKS_PER_SM"),
        Wrong("wrong dtype", occ_float, "float"),
        Wrong("shared memory in whole KB", occ_smem_in_whole_kb, "returned"),
    ],
}


def _roof_no_min(flops, dram_bytes, bandwidth_gbs, peak_tflops):
    return flops / dram_bytes * bandwidth_gbs / 1000


def _roof_gflops(flops, dram_bytes, bandwidth_gbs, peak_tflops):
    return min(peak_tflops, flops / dram_bytes * bandwidth_gbs)


def _roof_max(flops, dram_bytes, bandwidth_gbs, peak_tflops):
    return max(peak_tflops, flops / dram_bytes * bandwidth_gbs / 1000)


def _roof_bytes_per_flop(flops, dram_bytes, bandwidth_gbs, peak_tflops):
    return min(peak_tflops, dram_bytes / flops * bandwidth_gbs / 1000)


WRONG["roofline"] = [
    Wrong("sloped roof only", _roof_no_min, "the smaller of"),
    Wrong("GFLOP/s", _roof_gflops, "divide by 1000"),
    Wrong("max", _roof_max, "lower of the two roofs"),
    Wrong("bytes per FLOP", _roof_bytes_per_flop, "returned"),
]


# -- pipeline: a chunked copy/compute/copy pipeline on three engines


def _pipe_no_fill_drain(n_chunks, h2d_ms, kernel_ms, d2h_ms):
    return max(h2d_ms, kernel_ms, d2h_ms)  # the steady state only


def _pipe_serial(n_chunks, h2d_ms, kernel_ms, d2h_ms):
    return h2d_ms + kernel_ms + d2h_ms  # no overlap


def _pipe_totals(n_chunks, h2d_ms, kernel_ms, d2h_ms):
    return h2d_ms + kernel_ms + d2h_ms + (n_chunks - 1) * max(h2d_ms, kernel_ms, d2h_ms)  # whole-array times


def _pipe_one_slot_too_many(n_chunks, h2d_ms, kernel_ms, d2h_ms):
    h, k, d = h2d_ms / n_chunks, kernel_ms / n_chunks, d2h_ms / n_chunks
    return h + k + d + n_chunks * max(h, k, d)


def _pipe_copies_share_an_engine(n_chunks, h2d_ms, kernel_ms, d2h_ms):
    h, k, d = h2d_ms / n_chunks, kernel_ms / n_chunks, d2h_ms / n_chunks
    return h + k + d + (n_chunks - 1) * max(h + d, k)  # one copy engine for both directions: not the model


def _pipe_floor_division(n_chunks, h2d_ms, kernel_ms, d2h_ms):
    h, k, d = h2d_ms // n_chunks, kernel_ms // n_chunks, d2h_ms // n_chunks  # // drops each chunk's fraction
    return h + k + d + (n_chunks - 1) * max(h, k, d)


WRONG["pipeline"] = [
    Wrong("no fill or drain", _pipe_no_fill_drain, "fill and drain"),
    Wrong("no overlap", _pipe_serial, "the serial time"),
    Wrong("totals, not per chunk", _pipe_totals, "whole-array times"),
    Wrong("off by one", _pipe_one_slot_too_many, "n_chunks - 1 more"),
    Wrong("one copy engine", _pipe_copies_share_an_engine, "inputs wrong"),
    Wrong("floor division", _pipe_floor_division, "by the floor (integer) division `h2d_ms // n_chunks`"),
]
