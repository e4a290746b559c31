"""Notebook 08 - CuPy: the array API, ElementwiseKernel, ReductionKernel, RawKernel, and the memory pool.

Array exercises run on CuPy on a GPU and on NumPy standing in for it in CPU mode. CUDA C
exercises are compiled with NVRTC everywhere and run everywhere: through CuPy on a GPU, from
their PTX in helpers.ptx in CPU mode (make_inputs / oracle / output below drive that run).
"""

import numpy as np

from helpers.exercises import FunctionExercise, register
from helpers.exercises.cuda_runners import L2_IN, L2_OUT, LEAKY_IN, LEAKY_OUT, run_clamp, run_l2, run_leaky
from helpers.exercises.libraries import ArrayExercise, CudaCExercise


def _normalize_rows(xp, a):
    norms = xp.sqrt((a * a).sum(axis=1, keepdims=True))
    return a / norms


def _matrix(rng):
    rows, cols = (int(v) for v in rng.integers(2, 9, size=2))
    if rows == cols:
        cols += 1
    return (rng.uniform(0.5, 2.0, size=(rows, cols)).astype(np.float32),)


normalize_rows = ArrayExercise(
    prompt="Write normalize_rows(xp, a): divide each row of the 2-D array a by its Euclidean length (L2 norm).",
    reference=_normalize_rows,
    make_inputs=_matrix,
    rtol=1e-5,
    atol=1e-6,
    mistakes=(
        (
            lambda xp, a: a / xp.sqrt((a * a).sum(axis=0, keepdims=True)),
            "that divides by the column lengths: sum along axis=1, one value per row.",
        ),
        (
            lambda xp, a: a / (a * a).sum(axis=1, keepdims=True),
            "you divided by the squared length: take the square root.",
        ),
    ),
    hints=(
        "(a * a).sum(axis=1) is one number per row; its square root is the row's length.",
        "Keep that axis with keepdims=True: a (rows, 1) column broadcasts across each row.",
    ),
)


def _n(rng):  # never a multiple of the block size: the last block has spare threads
    return 300 + int(rng.integers(1, 100)) * 2 + 1


def _leaky_inputs(rng):
    return {"x": rng.uniform(-2, 2, _n(rng)).astype(np.float32), "alpha": float(rng.uniform(0.05, 0.3))}


def _leaky(v):
    return np.where(v["x"] > 0, v["x"], np.float32(v["alpha"]) * v["x"]).astype(np.float32)


leaky_relu = CudaCExercise(
    prompt=f'Write the operation of cupy.ElementwiseKernel("{LEAKY_IN}", "{LEAKY_OUT}", operation): y = x if x '
    "> 0, else alpha * x.",
    kind="elementwise",
    kernel="leaky_relu",
    in_params=LEAKY_IN,
    out_params=LEAKY_OUT,
    reference="y = x > 0 ? x : alpha * x",
    run_gpu=run_leaky,
    make_inputs=_leaky_inputs,
    oracle=_leaky,
    output="y",
    mistakes=(
        (lambda v: np.maximum(v["x"], 0), "for x <= 0 the result must be alpha * x, not 0 (that is a plain ReLU)."),
        (
            lambda v: np.where(v["x"] > 0, np.float32(v["alpha"]) * v["x"], v["x"]),
            "the two branches are swapped: x > 0 keeps x, the other side is alpha * x.",
        ),
    ),
    hints=(
        "The operation is one C statement about ONE element: x, alpha and y are plain floats, not arrays.",
        "C's conditional expression: condition ? value_if_true : value_if_false.",
    ),
)


def _l2(v):
    return np.asarray(np.sqrt(np.sum(v["x"].astype(np.float64) ** 2)), dtype=np.float32)


l2_norm = CudaCExercise(
    prompt=f'Give (map_expr, reduce_expr, post_map_expr, identity) for cupy.ReductionKernel("{L2_IN}", '
    f'"{L2_OUT}", ...) computing the L2 norm sqrt(sum(x*x)).',
    kind="reduction",
    kernel="l2_norm",
    in_params=L2_IN,
    out_params=L2_OUT,
    reference=("x * x", "a + b", "y = sqrt(a)", "0"),
    run_gpu=run_l2,
    make_inputs=lambda rng: {"x": rng.uniform(0, 1, _n(rng)).astype(np.float32)},
    oracle=_l2,
    output="y",
    mistakes=((lambda v: _l2(v) ** 2, "that is the sum of squares: take its square root in post_map_expr."),),
    hints=(
        "map_expr turns one element into the value to combine; reduce_expr combines two partial results named a and b.",
        "post_map_expr sees the total as a and must assign the output y; the identity of + is 0.",
    ),
)

CLAMP_PARAMS = "const float* x, float* y, float lo, float hi, int n"

_clamp_src = r"""
extern "C" __global__ void clamp(const float* x, float* y, float lo, float hi, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = fminf(fmaxf(x[i], lo), hi);
}
"""


def _clamp_inputs(rng):
    n = _n(rng)
    x = rng.uniform(-2, 2, n).astype(np.float32)
    lo, hi = np.float32(rng.uniform(-1.0, -0.2)), np.float32(rng.uniform(0.2, 1.0))
    return {"x": x, "lo": lo, "hi": hi, "n": np.int32(n)}


clamp = CudaCExercise(
    prompt=f"Write the CUDA C source of a RawKernel `clamp({CLAMP_PARAMS})`: y[i] = x[i] limited to [lo, hi], "
    "one thread per element.",
    kind="raw",
    kernel="clamp",
    c_params=CLAMP_PARAMS,
    run_gpu=run_clamp,
    make_inputs=_clamp_inputs,
    oracle=lambda v: np.clip(v["x"], v["lo"], v["hi"]),
    output="y",
    mistakes=(
        (lambda v: np.clip(v["x"], v["hi"], v["lo"]), "lo and hi are swapped: fmaxf with lo, then fminf with hi."),
    ),
    reference=_clamp_src,
    hints=(
        'RawKernel looks the kernel up by name, so declare it extern "C" (no C++ name mangling).',
        "i = blockIdx.x * blockDim.x + threadIdx.x, then `if (i < n)`: the last block has spare threads.",
        "fminf(fmaxf(v, lo), hi) clamps a float.",
    ),
)

# ----------------------------------------------------------------------------- the memory pool

# CuPy's SingleDeviceMemoryPool (cupy/cuda/memory.pyx, v14.2.0): malloc rounds every request up with
# _round_size to a multiple of ALLOCATION_UNIT_SIZE = 512 bytes; a freed block goes back to the pool's free list
# (used_bytes drops, total_bytes does not); a request takes the smallest free block at least its rounded size
# (splitting a larger one), else cudaMalloc's a new block; free_all_blocks() returns every free block that was
# never split to the driver. The exercise's events never leave a free block larger than a later request, so no
# block is ever split and "reuse a free block of exactly the rounded size" is the whole rule.
ALLOCATION_UNIT = 512


def _round_size(nbytes):
    return (nbytes + ALLOCATION_UNIT - 1) // ALLOCATION_UNIT * ALLOCATION_UNIT


def _pool_after(events):
    sizes, live, free, held = [], set(), [], 0  # sizes[k]: array k's block; free: the pool's free blocks
    for event in events:
        if event[0] == "alloc":
            size = _round_size(event[1])
            if size in free:
                free.remove(size)  # the pool hands back a block it already holds
            else:
                held += size  # none free of that size: a new block from the driver
            live.add(len(sizes))
            sizes.append(size)
        elif event[0] == "free":
            live.remove(event[1])
            free.append(sizes[event[1]])  # back to the pool, not to the driver
        else:  # free_all
            held -= sum(free)
            free = []
    return sum(sizes[k] for k in live), held


class _Events:
    """3 to 10 events of one program; a request either fits a free block of exactly its rounded size or is larger
    than every free block, so CuPy never splits a block (what the model leaves out)."""

    def draw(self, rng):
        events, sizes, live, free = [], [], set(), []
        for _ in range(int(rng.integers(3, 11))):
            r = rng.random()
            if live and r < 0.35:
                k = int(rng.choice(sorted(live)))
                live.remove(k)
                free.append(sizes[k])
                events.append(("free", k))
            elif free and r < 0.45:
                free = []
                events.append(("free_all",))
            else:
                if free and rng.random() < 0.5:
                    size = int(rng.choice(free))  # a request that rounds up to a free block's size
                    nbytes = size - int(rng.integers(0, ALLOCATION_UNIT))
                    free.remove(size)
                else:  # larger than every free block
                    nbytes = max(free, default=0) + int(rng.integers(1, 4 * ALLOCATION_UNIT + 1))
                live.add(len(sizes))
                sizes.append(_round_size(nbytes))
                events.append(("alloc", nbytes))
        return tuple(events)


def _pool_variant(events, rounding=True, reuse=True, free_to_driver=False, free_all_live=None):
    """_pool_after with one rule broken (for the mistakes' messages)."""
    sizes, live, free, held = [], set(), [], 0
    for event in events:
        if event[0] == "alloc":
            size = _round_size(event[1]) if rounding else event[1]
            if reuse and size in free:
                free.remove(size)
            else:
                held += size
            live.add(len(sizes))
            sizes.append(size)
        elif event[0] == "free":
            if event[1] not in live:  # dropped by a free_all that (wrongly) took live arrays too
                continue
            live.remove(event[1])
            if free_to_driver:
                held -= sizes[event[1]]
            else:
                free.append(sizes[event[1]])
        else:
            held -= sum(free)
            free = []
            if free_all_live == "all":
                live, held = set(), 0
            elif free_all_live == "held":
                held = 0
    return sum(sizes[k] for k in live), held


pool_after = FunctionExercise(
    prompt="Write pool_after(events): replay a program's GPU allocations through CuPy's memory pool and return "
    "(used, held), what pool.used_bytes() and pool.total_bytes() would say at the end. events is a tuple of "
    '("alloc", nbytes) (a new array of nbytes bytes; arrays are numbered 0, 1, 2, ... in the order they are '
    'allocated), ("free", k) (array k is deleted) and ("free_all",) (pool.free_all_blocks()). Rules: a request '
    "is rounded up to a multiple of 512 bytes; a deleted array's block goes back to the pool, not to the driver; a "
    "request reuses a free block of exactly its rounded size if the pool has one, else the pool takes a new block "
    "from the driver; free_all_blocks() gives every free block back to the driver. (CuPy can also split a larger "
    "free block for a smaller request; the check's events never leave a free block larger than a later request.)",
    reference=_pool_after,
    inputs={"events": _Events()},
    edge_cases=(
        ((("alloc", 1000),),),  # 1000 bytes take a 1024-byte block
        ((("alloc", 4096), ("free", 0)),),  # deleted: used drops, held stays
        ((("alloc", 4096), ("free", 0), ("alloc", 4000)),),  # 4000 rounds to 4096: the free block is reused
        ((("alloc", 1000), ("alloc", 3000), ("free", 0), ("free_all",)),),  # only the free block goes back
        ((("alloc", 600), ("free", 0), ("alloc", 2000)),),  # the free 1024-byte block is too small: a new one
    ),
    mistakes=(
        (
            lambda events: _pool_variant(events, rounding=False),
            "CuPy rounds every request up to a multiple of 512 bytes: 1000 bytes take a block of 1024, "
            "(nbytes + 511) // 512 * 512.",
        ),
        (
            lambda events: _pool_variant(events, free_to_driver=True),
            "deleting an array gives its block back to the pool, not to the driver: held (total_bytes) stays the "
            "same until free_all_blocks(), and a later request of the same rounded size reuses the block.",
        ),
        (
            lambda events: _pool_variant(events, free_all_live="all"),
            "free_all_blocks() gives back only the pool's free blocks: live arrays keep their memory, so held drops "
            "to used, not to 0.",
        ),
        (
            lambda events: _pool_variant(events, free_all_live="held"),
            "free_all_blocks() gives back only the pool's free blocks: live arrays keep their memory, so held drops "
            "to used, not to 0.",
        ),
        (
            lambda events: _pool_variant(events, reuse=False),
            "a free block is reused by the next request of the same rounded size: held grows only when the pool has "
            "no free block of that size.",
        ),
        (
            lambda events: _pool_after(events)[::-1],
            "return (used, held) in that order: used counts live arrays' blocks, held everything the pool holds.",
        ),
    ),
    hints=(
        "Keep three things: the rounded size of each array, the set of live arrays, and a list of the pool's free "
        "blocks (their sizes); held starts at 0.",
        "alloc: size = (nbytes + 511) // 512 * 512; if size is in the free list, take it out of the list, else "
        "held += size. free k: put array k's size in the free list (held unchanged).",
        "free_all: held -= sum(free list), then empty the list. At the end used = the sizes of the live arrays, "
        "summed.",
    ),
)

EXERCISES = register(__name__, globals())
