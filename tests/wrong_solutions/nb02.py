"""Wrong kernels for helpers/problems/nb02.py, each the mistake a learner really makes."""

from numba import cuda

from . import Wrong

# -- vector_add


@cuda.jit
def add_wrong_index(a, b, out):
    i = cuda.blockIdx.x + cuda.threadIdx.x  # forgot blockDim.x
    if i < out.size:
        out[i] = a[i] + b[i]


@cuda.jit
def add_no_guard(a, b, out):
    i = cuda.grid(1)
    out[i] = a[i] + b[i]


@cuda.jit
def add_first_block_only(a, b, out):
    i = cuda.threadIdx.x
    if i < out.size:
        out[i] = a[i] + b[i]


@cuda.jit
def add_hard_coded(a, b, out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = 3.0 * i  # right for a = i, b = 2 * i, the notebook's example


@cuda.jit
def add_skips_partial_block(a, b, out):
    i = cuda.grid(1)
    if i < out.size // cuda.blockDim.x * cuda.blockDim.x:
        out[i] = a[i] + b[i]


@cuda.jit
def add_subtracts(a, b, out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = a[i] - b[i]


@cuda.jit
def add_reads_twice(a, b, out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = a[i] + b[i] + a[i] - a[i]


@cuda.jit
def add_racy(a, b, out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = a[i] + b[i]
        if i + 1 < out.size:  # "helps" the neighbour: two threads write out[i + 1]
            out[i + 1] = a[i + 1] + b[i + 1]


# -- saxpy (learner's launch)


@cuda.jit
def saxpy_ok(alpha, x, y, out):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = alpha * x[i] + y[i]


@cuda.jit
def saxpy_no_guard(alpha, x, y, out):
    i = cuda.grid(1)
    out[i] = alpha * x[i] + y[i]


def good_launch(n):
    return (n + 127) // 128, 128


def placeholder_launch(n):
    return None  # YOUR CODE HERE


# -- square_stride (fixed grid of 2 x 32)


@cuda.jit
def square_no_loop(x, out):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = x[i] * x[i]


@cuda.jit
def square_block_stride(x, out):
    for i in range(cuda.grid(1), x.size, cuda.blockDim.x):  # stride too small: blocks overlap
        out[i] = x[i] * x[i]


@cuda.jit
def square_shifted(x, out):
    for i in range(cuda.grid(1), x.size, cuda.gridsize(1)):
        out[i] = x[i - 1] * x[i - 1]  # reads x[-1]: wraps to the last element in Numba


@cuda.jit
def square_capped_loop(x, out):
    # the loop stops after one pass over the grid, whatever n is
    for i in range(cuda.grid(1), min(x.size, cuda.gridsize(1)), cuda.gridsize(1)):
        out[i] = x[i] * x[i]


@cuda.jit
def square_halved(x, out):
    for i in range(cuda.grid(1), x.size, cuda.gridsize(1)):
        out[i] = x[i] * x[i] // 2  # x ** 2 / 2 was meant; // floors every value in [0, 1) to 0


# -- histogram


@cuda.jit
def hist_no_atomic(data, hist):
    i = cuda.grid(1)
    if i < data.size:
        hist[data[i]] += 1


@cuda.jit
def hist_hard_coded(data, hist):
    i = cuda.grid(1)
    if i < 16:
        hist[i] = 5


@cuda.jit
def hist_first_block_only(data, hist):
    i = cuda.threadIdx.x
    if i < data.size:
        cuda.atomic.add(hist, data[i], 1)


# -- the families of issue 27: right numbers, but not the technique or not for every launch


@cuda.jit
def square_stride_64(x, out):
    for i in range(cuda.grid(1), x.size, 64):  # 2 blocks of 32: right only for the launch that was always used
        out[i] = x[i] * x[i]


@cuda.jit
def square_stride_two_blocks(x, out):
    for i in range(cuda.grid(1), x.size, 2 * cuda.blockDim.x):  # assumes 2 blocks
        out[i] = x[i] * x[i]


@cuda.jit
def square_chunks(x, out):
    chunk = (x.size + cuda.gridsize(1) - 1) // cuda.gridsize(1)
    start = cuda.grid(1) * chunk
    for i in range(start, min(start + chunk, x.size)):  # each thread a contiguous chunk: uncoalesced
        out[i] = x[i] * x[i]


@cuda.jit
def hist_thread_zero_counts_all(data, hist):
    if cuda.grid(1) == 0:  # one thread does all the work, serially
        for i in range(data.size):
            hist[data[i]] += 1


WRONG = {
    "vector_add": [
        Wrong("wrong index", add_wrong_index, "global index"),
        Wrong("missing guard", add_no_guard, "an out-of-bounds access"),
        Wrong("first block only", add_first_block_only, "only the first block"),
        Wrong("hard-coded", add_hard_coded, "hard-coded"),
        Wrong("skips last partial block", add_skips_partial_block, "the last, partial block"),
        Wrong("known mistake", add_subtracts, "that is a - b"),
        Wrong("over budget", add_reads_twice, "budget"),
        Wrong("race", add_racy, "race"),
    ],
    "saxpy": [
        Wrong(
            "skips last partial block", saxpy_ok, "the last, partial block", options={"launch": lambda n: (n // 64, 64)}
        ),
        Wrong("missing guard", saxpy_no_guard, "an out-of-bounds access", options={"launch": good_launch}),
        Wrong("bad launch: 0 threads", saxpy_ok, "at least 1", status="error", options={"launch": lambda n: (n, 0)}),
        Wrong(
            "bad launch: too many threads",
            saxpy_ok,
            "1024",
            status="error",
            options={"launch": lambda n: ((n + 2047) // 2048, 2048)},
        ),
        Wrong("wrong dtype", saxpy_ok, "whole numbers", status="error", options={"launch": lambda n: (n / 128, 128)}),
        Wrong("no launch given", saxpy_ok, "launch=", status="error"),
        # judged by arithmetic for n = 1, 1,000, 10^6 and 10^9 before anything runs
        Wrong(
            "fixed launch", saxpy_ok, "for n = 1,000,000,000 it starts only 1,024 threads", options={"launch": (4, 256)}
        ),
        Wrong("fixed launch: one block's worth", saxpy_ok, "the same for every n", options={"launch": (4, 32)}),
        Wrong(
            "blocks and threads swapped",
            saxpy_ok,
            "(threads, blocks)",
            options={"launch": lambda n: (128, (n + 127) // 128)},
        ),
        Wrong("one thread per block", saxpy_ok, "multiple of 32", options={"launch": lambda n: (n, 1)}),
        Wrong(
            "a spare block",
            saxpy_ok,
            "do nothing",
            options={"launch": lambda n: (n // 128 + 1, 128)},
        ),
        Wrong(
            "grid too large",
            saxpy_ok,
            "65,535 along y",
            status="error",
            options={"launch": lambda n: ((1, (n + 31) // 32), 32)},
        ),
        Wrong(
            "launch not attempted",
            saxpy_ok,
            "not written yet",
            status="not_attempted",
            options={"launch": placeholder_launch},
        ),
    ],
    "square_stride": [
        Wrong("no grid-stride loop", square_no_loop, "grid-stride loop"),
        Wrong("race", square_block_stride, "stride = cuda.gridsize(1)"),
        Wrong("wrong index", square_shifted, "Negative index: `x[-1]`"),
        Wrong("loop bound capped", square_capped_loop, "your loop stops at `min(x.size, cuda.gridsize(1))`"),
        Wrong("floor division", square_halved, "every value of out is 0 because `x[i] * x[i] // 2` is floor"),
        Wrong("stride hard-coded as 64", square_stride_64, "race"),
        Wrong("stride of two blocks", square_stride_two_blocks, "race"),
        Wrong("contiguous chunks", square_chunks, "rather than giving each thread a contiguous chunk"),
    ],
    "histogram": [
        Wrong("race", hist_no_atomic, "race"),
        Wrong("hard-coded", hist_hard_coded, "hard-coded"),
        Wrong("first block only", hist_first_block_only, "only the first block's elements"),
        Wrong("thread 0 counts everything", hist_thread_zero_counts_all, "only 1 of the"),
    ],
}
