"""Notebook 02 - first kernels: one thread per element, bounds guards, grid-stride loops
and atomics. Each reference kernel is the model answer shown by ``solution()``.
"""

import numpy as np
from numba import cuda

from helpers.exercises import Acc, In, KernelExercise, Out, Scalar, fixed, learner_launch, per_element, register


@cuda.jit
def _vector_add(a, b, out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = a[i] + b[i]


vector_add = KernelExercise(
    prompt="Write a kernel that sets out[i] = a[i] + b[i], one thread per element.",
    args=(In("a"), In("b"), Out("out")),
    expect=lambda a, b: a + b,
    reference=_vector_add,
    launch=per_element(32, 128, 64),
    budgets={
        "global_reads_per_thread": (
            2,
            "each thread reads its own a[i] and b[i] once: one thread per element, i = cuda.grid(1), "
            "not a loop over other threads' elements.",
        )
    },
    mistakes=((lambda a, b: a - b, "that is a - b: add the two inputs."),),
    hints=(
        "i = cuda.grid(1) gives each thread its own element.",
        "The last block has threads past the end: wrap the work in `if i < out.size:`.",
    ),
)


@cuda.jit
def _saxpy(alpha, x, y, out):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = alpha * x[i] + y[i]


def _saxpy_launch(n):
    threads = 64
    return (n + threads - 1) // threads, threads


saxpy = KernelExercise(
    prompt="Write a SAXPY kernel, out[i] = alpha * x[i] + y[i], and a launch(n) returning (blocks, threads).",
    args=(Scalar("alpha"), In("x"), In("y"), Out("out")),
    expect=lambda alpha, x, y: alpha * x + y,
    reference=_saxpy,
    launch=learner_launch(_saxpy_launch),
    rtol=1e-5,
    atol=1e-5,
    hints=(
        "launch(n) must cover all n elements: round the number of blocks up.",
        "In the kernel, guard with `if i < x.size:` because the last block may stick out.",
    ),
)


@cuda.jit
def _square_stride(x, out):
    start, stride = cuda.grid(1), cuda.gridsize(1)
    for i in range(start, x.size, stride):
        out[i] = x[i] * x[i]


square_stride = KernelExercise(
    prompt=(
        "Write a kernel that sets out[i] = x[i] ** 2 for every element, using a grid-stride loop (the check "
        "launches a small grid of its own choosing, 2 to 4 blocks of 32 or 64 threads, whatever n is)."
    ),
    args=(In("x"), Out("out")),
    expect=lambda x: x * x,
    reference=_square_stride,
    launch=fixed(2, 32, more=((3, 64), (4, 32))),
    budgets={
        "coalescing": (
            0.8,
            "a warp's 32 threads should touch 32 neighbouring elements at each step: start at cuda.grid(1) and "
            "step by cuda.gridsize(1), rather than giving each thread a contiguous chunk.",
        )
    },
    hints=(
        "Start at cuda.grid(1) and step by cuda.gridsize(1), the number of threads in the whole grid.",
        "for i in range(cuda.grid(1), x.size, cuda.gridsize(1)): out[i] = x[i] * x[i]",
    ),
)

BINS = 16


@cuda.jit
def _histogram(data, hist):
    i = cuda.grid(1)
    if i < data.size:
        cuda.atomic.add(hist, data[i], 1)


histogram = KernelExercise(
    prompt=f"Count how often each value 0..{BINS - 1} occurs in data into hist (hist starts at zero).",
    args=(In("data", "int32", low=0, high=BINS), Acc("hist", "int32", shape=(BINS,))),
    expect=lambda data: np.bincount(data, minlength=BINS).astype(np.int32),
    reference=_histogram,
    launch=per_element(32, 128, 64),
    mistakes=(
        (
            lambda data: np.bincount(data[:32], minlength=BINS).astype(np.int32) * -(-data.size // 32),
            "every block counted only the first block's elements: index with i = cuda.grid(1).",
        ),
    ),
    hints=(
        "Many threads add to the same bin at the same time.",
        "hist[data[i]] += 1 is a read, an add and a write: use cuda.atomic.add(hist, data[i], 1).",
    ),
)


EXERCISES = register(__name__, globals())
