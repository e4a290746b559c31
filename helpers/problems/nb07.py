"""Notebook 07 - performance: sectors per warp access, a coalesced row sum, occupancy, the roofline,
and the time of a chunked copy/compute/copy pipeline on streams.

The row-sum exercise has a coalescing budget: one thread per row gives the right numbers and
fails it, which is exactly the lesson.
"""

import numba
import numpy as np
from numba import cuda

from helpers.exercises import (
    ApproxFunctionExercise,
    Floats,
    FunctionExercise,
    In,
    Ints,
    KernelExercise,
    Out,
    ValueExercise,
    one_block_per_row,
    register,
)

# ----------------------------------------------------------------------------- 1. sectors

sectors = ValueExercise(
    prompt=(
        "A warp of 32 threads reads float32 elements: thread i reads x[s * i]. x starts on a 128-byte boundary. "
        "How many 32-byte sectors does that one warp-wide read touch for s = 1, s = 2 and s = 32? "
        "Answer with a tuple (sectors for s=1, for s=2, for s=32)."
    ),
    answer=(4, 8, 32),
    explanation=(
        "s = 1: 32 x 4 bytes = 128 contiguous bytes = 4 sectors. s = 2: the reads span 256 bytes = 8 sectors, "
        "half of every sector wasted. s = 32: every thread lands 128 bytes from the next, one sector each: "
        "32 sectors for 128 useful bytes, 1/8 efficiency."
    ),
    mistakes={
        (1, 2, 32): "those are 128-byte cache lines, not 32-byte sectors: count 32-byte pieces.",
        (
            4,
            4,
            4,
        ): "the bytes wanted are the same, but the sectors touched are not: stride s spreads them over s times "
        "the span.",
        (4, 8, 64): "a thread's 4 bytes fit in one sector, so each thread touches at most one sector: 32 at most.",
    },
    hints=(
        "Work out the span in bytes between the first and the last address, then divide by 32.",
        "For s = 32, consecutive threads are 128 bytes apart: no two share a sector.",
    ),
)

# ----------------------------------------------------------------------------- 2. coalesced row sums

WARP = 32


def _cols(n):
    return 3 * n + 5  # rows are long, and not a multiple of 32


@cuda.jit
def _row_sums(A, out):
    buf = cuda.shared.array(WARP, numba.float32)
    row = cuda.blockIdx.x  # one block of WARP threads per row
    lane = cuda.threadIdx.x
    acc = numba.float32(0.0)
    for j in range(lane, A.shape[1], WARP):  # neighbouring lanes read neighbouring columns: coalesced
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


def _row_sum_sizes(rng, threads):
    # Rows shorter than one block (n <= 8: 3n + 5 < 32), exactly a multiple of WARP (n = 9: 32
    # columns), one past a multiple (n = 20: 65 columns), and any other.
    return [int(rng.integers(3, 9)), 9, 20, int(rng.integers(10, 17))]


row_sums = KernelExercise(
    prompt=(
        f"out[r] = sum of row r of A (shape (n, 3n + 5), float32). The launch is one block of {WARP} threads per row. "
        "Reads must be coalesced: the lanes of the block walk along the row together, then add up their "
        "partial sums in shared memory."
    ),
    args=(In("A", shape=lambda n: (n, _cols(n))), Out("out")),
    expect=lambda A: A.astype(np.float64).sum(axis=1).astype(np.float32),
    reference=_row_sums,
    launch=one_block_per_row(WARP, fixed_by="one block of WARP lanes per row; the shared buffer holds WARP sums"),
    sizes=_row_sum_sizes,
    spread_advice="let all 32 lanes of the row's block walk the row together (columns lane, lane + 32, ...)",
    rtol=1e-4,
    atol=1e-4,
    budgets={
        "coalescing": (
            0.75,
            "lane k should read columns k, k + 32, k + 64, ...: then a warp reads 32 neighbouring floats at once.",
        ),
        "global_reads_per_thread": (
            4,
            "one busy thread per row leaves 31 lanes of the warp idle and reads one float per "
            "step: let all 32 lanes walk the row together (columns lane, lane + 32, ...).",
        ),
    },
    hints=(
        "row = cuda.blockIdx.x, lane = cuda.threadIdx.x; for j in range(lane, A.shape[1], WARP): acc += A[row, j].",
        "Each lane stores its acc in a shared array of WARP floats; cuda.syncthreads().",
        "Then the tree reduction from notebook 06 (s = 16, 8, 4, 2, 1, barrier after each step) and lane 0 "
        "writes out[row].",
    ),
)

# ----------------------------------------------------------------------------- 3. occupancy

MAX_THREADS_PER_SM = 2048
MAX_BLOCKS_PER_SM = 32
REGISTERS_PER_SM = 65536
SHARED_PER_SM = 228 * 1024


class _Smem:
    """Shared memory per block: none (a third of the draws, so the thread and register limits decide), a
    round size, or any number of bytes (a formula right only for whole KB fails)."""

    ROUND = (1024, 4096, 8192, 12288, 16384, 33000, 49152, 100000)

    def draw(self, rng):
        kind = int(rng.integers(0, 3))
        return 0 if kind == 0 else int(rng.choice(self.ROUND)) if kind == 1 else int(rng.integers(1, 100_001))


def _blocks_per_sm(threads, regs, smem):
    warps = (threads + 31) // 32
    regs_per_warp = (regs * 32 + 255) // 256 * 256
    by_threads = MAX_THREADS_PER_SM // (warps * 32)
    by_regs = REGISTERS_PER_SM // (warps * regs_per_warp)
    by_smem = SHARED_PER_SM // smem if smem else MAX_BLOCKS_PER_SM
    return min(MAX_BLOCKS_PER_SM, by_threads, by_regs, by_smem)


occupancy = FunctionExercise(
    prompt=(
        "Return how many blocks fit on one SM at once (H100-like limits: MAX_THREADS_PER_SM = 2048, "
        "MAX_BLOCKS_PER_SM = 32, "
        "REGISTERS_PER_SM = 65536, SHARED_PER_SM = 228 * 1024 bytes) for blocks of `threads` threads using "
        "`regs` registers "
        "per thread and `smem` bytes of shared memory per block. Threads are allocated in whole warps of 32 "
        "and registers per "
        "warp in multiples of 256."
    ),
    reference=_blocks_per_sm,
    inputs={
        # block sizes that are not multiples of 32 too: a block of 100 threads still takes 4 whole warps
        # and one past a warp (33, 65, ...), where rounding up to whole warps matters most
        "threads": Ints(
            choices=(32, 33, 64, 65, 96, 100, 128, 129, 192, 200, 256, 257, 300, 384, 500, 512, 640, 768, 1000, 1024)
        ),
        "regs": Ints(16, 255),
        "smem": _Smem(),
    },
    edge_cases=(
        (256, 32, 0),
        (256, 64, 0),
        (1024, 32, 0),
        (128, 40, 16384),
        (96, 255, 0),
        (32, 16, 0),
        (256, 123, 8320),
        (100, 32, 0),
        (200, 40, 0),
        (96, 16, 0),  # the thread limit binds at 3 warps: 2048 // 96 = 21, not 22
        (129, 16, 0),  # 5 whole warps bind: 2048 // 160 = 12
    ),
    mistakes=(
        (
            lambda threads, regs, smem: min(
                MAX_BLOCKS_PER_SM,
                MAX_THREADS_PER_SM // threads,
                REGISTERS_PER_SM // (threads * ((regs * 32 + 255) // 256 * 256) // 32),
                SHARED_PER_SM // smem if smem else MAX_BLOCKS_PER_SM,
            ),
            "threads are allocated in whole warps: a block of 100 threads takes 4 warps (128 threads' worth); "
            "round threads up to a multiple of 32 first, warps = (threads + 31) // 32.",
        ),
        (
            lambda threads, regs, smem: min(MAX_BLOCKS_PER_SM, MAX_THREADS_PER_SM // threads),
            "that counts threads only: registers and shared memory limit the blocks too, take the minimum of "
            "every limit.",
        ),
        (
            lambda threads, regs, smem: min(
                MAX_BLOCKS_PER_SM,
                MAX_THREADS_PER_SM // ((threads + 31) // 32 * 32),
                REGISTERS_PER_SM // (threads * regs),
                SHARED_PER_SM // smem if smem else 32,
            ),
            "registers are handed out per warp in multiples of 256: round regs * 32 up to a multiple of 256 first.",
        ),
        (
            lambda threads, regs, smem: min(
                MAX_THREADS_PER_SM // ((threads + 31) // 32 * 32),
                REGISTERS_PER_SM // (((threads + 31) // 32) * ((regs * 32 + 255) // 256 * 256)),
                SHARED_PER_SM // smem if smem else 10**9,
            ),
            "an SM also holds at most MAX_BLOCKS_PER_SM = 32 blocks, however small they are.",
        ),
    ),
    hints=(
        "Work out one limit per resource (threads, registers, shared memory, blocks) and return the smallest.",
        "warps = (threads + 31) // 32; registers per warp = (regs * 32 + 255) // 256 * 256; the register limit "
        "is REGISTERS_PER_SM // (warps * registers per warp).",
        "With smem == 0 shared memory sets no limit; otherwise SHARED_PER_SM // smem.",
    ),
)


# ----------------------------------------------------------------------------- roofline arithmetic


def _attainable_tflops(flops, dram_bytes, bandwidth_gbs, peak_tflops):
    return min(peak_tflops, flops / dram_bytes * bandwidth_gbs / 1000)


roofline = ApproxFunctionExercise(
    prompt="Write attainable_tflops(flops, dram_bytes, bandwidth_gbs, peak_tflops): the roofline's bound for a kernel "
    "that does `flops` floating-point operations and moves `dram_bytes` bytes of DRAM traffic, on a GPU whose "
    "measured bandwidth is `bandwidth_gbs` GB/s and compute peak `peak_tflops` TFLOP/s. Return TFLOP/s.",
    reference=_attainable_tflops,
    inputs={
        "flops": Floats(1e6, 1e13),
        "dram_bytes": Floats(1e6, 1e11),
        "bandwidth_gbs": Floats(500, 4000),
        "peak_tflops": Floats(10, 70),
    },
    edge_cases=(
        (2 * 2**26, 12 * 2**26, 3000.0, 50.0),  # SAXPY: 1/6 FLOP per byte, bandwidth-bound
        (2 * 4096**3, 3 * 4 * 4096**2, 3000.0, 50.0),  # SGEMM 4096: compute-bound
    ),
    mistakes=(
        (
            lambda flops, dram_bytes, bandwidth_gbs, peak_tflops: flops / dram_bytes * bandwidth_gbs / 1000,
            "that is the sloped roof alone: a kernel can never beat the compute peak either, return the smaller of "
            "the two.",
        ),
        (
            lambda flops, dram_bytes, bandwidth_gbs, peak_tflops: min(peak_tflops, flops / dram_bytes * bandwidth_gbs),
            "FLOP per byte times GB/s gives GFLOP/s: divide by 1000 for TFLOP/s.",
        ),
        (
            lambda flops, dram_bytes, bandwidth_gbs, peak_tflops: max(
                peak_tflops, flops / dram_bytes * bandwidth_gbs / 1000
            ),
            "the roofline is the lower of the two roofs (min), not the higher.",
        ),
    ),
    hints=(
        "Arithmetic intensity = flops / dram_bytes (FLOP per byte).",
        "min(peak_tflops, intensity * bandwidth_gbs / 1000)",
    ),
)


# ----------------------------------------------------------------------------- streams: a chunked pipeline


def _pipeline_ms(n_chunks, h2d_ms, kernel_ms, d2h_ms):
    h, k, d = h2d_ms / n_chunks, kernel_ms / n_chunks, d2h_ms / n_chunks  # one chunk's time in each stage
    return h + k + d + (n_chunks - 1) * max(h, k, d)  # the first chunk goes through; the slowest stage paces the rest


pipeline = ApproxFunctionExercise(
    prompt="Write pipeline_ms(n_chunks, h2d_ms, kernel_ms, d2h_ms): the time in ms of the chunked pipeline of "
    "section 4. Copying the whole array to the GPU takes h2d_ms, the kernel on the whole array kernel_ms, the copy "
    "back d2h_ms. The array is cut into n_chunks equal chunks, each copied in, computed and copied out on its own "
    "stream. Model: three engines (one copy engine per direction and the compute engine), each doing one thing at "
    "a time; a chunk's stage takes 1/n_chunks of that stage's whole-array time; a chunk starts a stage once it has "
    "finished the previous one and the engine is free. Return the time until the last chunk is back on the host.",
    reference=_pipeline_ms,
    inputs={
        "n_chunks": Ints(1, 32),
        "h2d_ms": Floats(0.5, 40.0, decimals=2),
        "kernel_ms": Floats(0.5, 40.0, decimals=2),
        "d2h_ms": Floats(0.5, 40.0, decimals=2),
    },
    edge_cases=(
        (1, 4.0, 2.0, 4.0),  # one chunk: nothing overlaps, the serial total
        (4, 4.0, 4.0, 4.0),  # balanced stages: 3 one-chunk slots to fill the pipe, 3 more to drain it
        (8, 10.0, 2.0, 10.0),  # copy-bound
        (16, 1.0, 12.0, 1.0),  # compute-bound
    ),
    mistakes=(
        (
            lambda n_chunks, h2d_ms, kernel_ms, d2h_ms: max(h2d_ms, kernel_ms, d2h_ms),
            "that is the slowest stage alone, the limit for very many chunks: the first chunk must be copied in "
            "before any compute starts and the last one copied out after it (fill and drain), so add one chunk's "
            "time in the other two stages.",
        ),
        (
            lambda n_chunks, h2d_ms, kernel_ms, d2h_ms: h2d_ms + kernel_ms + d2h_ms,
            "that is the serial time, with nothing overlapped: while chunk i computes, chunk i + 1 is copied in "
            "and chunk i - 1 copied out, so after the first chunk only the slowest stage sets the pace.",
        ),
        (
            lambda n_chunks, h2d_ms, kernel_ms, d2h_ms: (
                h2d_ms + kernel_ms + d2h_ms + (n_chunks - 1) * max(h2d_ms, kernel_ms, d2h_ms)
            ),
            "those are whole-array times: one chunk holds 1/n_chunks of the data, so each of its stages takes "
            "the stage's time / n_chunks.",
        ),
        (
            lambda n_chunks, h2d_ms, kernel_ms, d2h_ms: (
                (h2d_ms + kernel_ms + d2h_ms) / n_chunks + max(h2d_ms, kernel_ms, d2h_ms)
            ),
            "the first chunk's trip through the three stages already covers one slot of the slowest stage: "
            "n_chunks - 1 more follow it, not n_chunks.",
        ),
    ),
    hints=(
        "One chunk's stages take h2d_ms / n_chunks, kernel_ms / n_chunks and d2h_ms / n_chunks.",
        "The first chunk goes through all three stages; after that, one chunk finishes every time the slowest "
        "stage finishes one.",
        "h + k + d + (n_chunks - 1) * max(h, k, d), with h, k, d one chunk's stage times.",
    ),
)

EXERCISES = register(__name__, globals())
