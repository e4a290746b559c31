"""Wrong answers for helpers/problems/nb08.py (CuPy).

``WRONG`` fails in every mode: CUDA C answers are run in CPU mode too (helpers.ptx), so wrong
numbers, a missing bounds check or a race fail there as on a GPU. ``WRONG_GPU`` is left for
answers only a GPU can catch (none now).
"""

import numpy as np

from . import Wrong

CLAMP_OK = r"""
extern "C" __global__ void clamp(const float* x, float* y, float lo, float hi, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = fminf(fmaxf(x[i], lo), hi);
}
"""


def rows_by_columns(xp, a):
    return a / xp.sqrt((a * a).sum(axis=0, keepdims=True))


def rows_squared(xp, a):
    return a / (a * a).sum(axis=1, keepdims=True)


def rows_numpy(xp, a):
    return a / np.sqrt((a * a).sum(axis=1, keepdims=True))


def rows_no_keepdims(xp, a):
    return a / xp.sqrt((a * a).sum(axis=1))


WRONG = {
    "normalize_rows": [
        Wrong("wrong axis", rows_by_columns, "column lengths"),
        Wrong("missing sqrt", rows_squared, "square root"),
        Wrong("numpy instead of xp", rows_numpy, "calls NumPy directly"),
        Wrong("no keepdims", rows_no_keepdims, "could not be broadcast", status="error"),
        Wrong(
            "float64 result",
            lambda xp, a: (a / xp.sqrt((a * a).sum(axis=1, keepdims=True))).astype(xp.float64),
            "keep the input's dtype",
        ),
    ],
    "leaky_relu": [
        Wrong("wrong output name", "z = x > 0 ? x : alpha * x", 'identifier "z" is undefined'),
        Wrong("syntax error", "y = x > 0 ? x alpha * x", "NVRTC rejects it"),
        Wrong("python syntax", "y = x if x > 0 else alpha * x", "NVRTC rejects it"),
        Wrong("not a string", 0.1, "as a string"),
        Wrong("plain relu", "y = x > 0 ? x : 0", "plain ReLU"),
        Wrong("swapped branch", "y = x > 0 ? alpha * x : x", "branches are swapped"),
        Wrong("wrong formula", "y = x > 0 ? x : alpha + x", "results are wrong: element"),
    ],
    "l2_norm": [
        Wrong("three pieces", ("x * x", "a + b", "y = sqrt(a)"), "four strings"),
        Wrong("undefined name", ("x * x", "a + b", "y = sqrt(total)", "0"), 'identifier "total" is undefined'),
        Wrong("syntax error", ("x * x", "a +", "y = sqrt(a)", "0"), "NVRTC rejects it"),
        Wrong("wrong identity", ("x * x", "a + b", "y = sqrt(a)", "1"), "identity"),
        Wrong("no sqrt", ("x * x", "a + b", "y = a", "0"), "square root"),
        # right when one thread folds the elements in order; CuPy squares partial sums too (inf on an H200)
        Wrong("squares in reduce_expr", ("x", "a + b * b", "y = sqrt(a)", "0"), "combine two partial results"),
    ],
    "clamp": [
        Wrong("missing extern C", CLAMP_OK.replace('extern "C" ', ""), 'extern "C"'),
        Wrong("wrong signature", CLAMP_OK.replace("float lo", "double lo"), "parameters are wrong"),
        Wrong("syntax error", CLAMP_OK.replace("hi);", "hi)"), "NVRTC rejects it"),
        Wrong("wrong name", CLAMP_OK.replace("void clamp", "void clip"), "no kernel named clamp"),
        Wrong("missing guard", CLAMP_OK.replace("if (i < n) ", ""), "past the end"),
        Wrong("wrong index", CLAMP_OK.replace("blockIdx.x * blockDim.x + threadIdx.x", "threadIdx.x"), "Race on y"),
        Wrong(
            "swapped pointers",
            CLAMP_OK.replace("const float* x, float* y", "float* y, const float* x"),
            "parameters are wrong",
        ),
        Wrong("out of bounds", CLAMP_OK.replace("fmaxf(x[i]", "fmaxf(x[i + 1]"), "Out of bounds"),
        Wrong(
            "a literal block size",
            CLAMP_OK.replace("blockIdx.x * blockDim.x", "blockIdx.x * 128"),
            "right with blocks of 128 threads and wrong with",
        ),
        Wrong(
            "a 16-bit index",
            CLAMP_OK.replace("int i =", "short i ="),
            "an index type too small for n",
        ),
        Wrong(
            "a literal n",
            CLAMP_OK.replace("if (i < n)", "if (i < 400)"),
            "look for a number where n belongs",
        ),
        Wrong("a literal lo", CLAMP_OK.replace("fmaxf(x[i], lo)", "fmaxf(x[i], -0.5f)"), "the results are wrong"),
        Wrong(
            "lo and hi swapped", CLAMP_OK.replace("fminf(fmaxf(x[i], lo), hi)", "fminf(fmaxf(x[i], hi), lo)"), "swapped"
        ),
    ],
}

WRONG_GPU: dict = {}


# -- pool_after: CuPy's memory pool, replayed


def _rounded(nbytes):
    return -(-nbytes // 512) * 512


def pool_no_rounding(events):
    sizes, live, free, held = [], [], [], 0
    for ev in events:
        if ev[0] == "alloc":
            if ev[1] in free:
                free.remove(ev[1])
            else:
                held += ev[1]  # the bytes asked for, not the 512-byte blocks the pool hands out
            live.append(len(sizes))
            sizes.append(ev[1])
        elif ev[0] == "free":
            live.remove(ev[1])
            free.append(sizes[ev[1]])
        else:
            held -= sum(free)
            free = []
    return sum(sizes[k] for k in live), held


def pool_free_to_driver(events):
    sizes, used, held = [], 0, 0
    for ev in events:
        if ev[0] == "alloc":
            sizes.append(_rounded(ev[1]))
            used += sizes[-1]
            held += sizes[-1]
        elif ev[0] == "free":
            used -= sizes[ev[1]]
            held -= sizes[ev[1]]  # as if del gave the memory back to the driver
    return used, held


def pool_free_all_drops_everything(events):
    sizes, live, free, held = {}, set(), [], 0
    n = 0
    for ev in events:
        if ev[0] == "alloc":
            size = _rounded(ev[1])
            if size in free:
                free.remove(size)
            else:
                held += size
            sizes[n] = size
            live.add(n)
            n += 1
        elif ev[0] == "free":
            if ev[1] in live:
                live.remove(ev[1])
                free.append(sizes[ev[1]])
        else:
            live, free, held = set(), [], 0  # as if free_all_blocks() also freed the live arrays
    return sum(sizes[k] for k in live), held


def pool_never_reuses(events):
    sizes, live, held = [], set(), 0
    free = []
    for ev in events:
        if ev[0] == "alloc":
            sizes.append(_rounded(ev[1]))
            held += sizes[-1]  # a new block every time, though a free one of that size waits in the pool
            live.add(len(sizes) - 1)
        elif ev[0] == "free":
            live.remove(ev[1])
            free.append(sizes[ev[1]])
        else:
            held -= sum(free)
            free = []
    return sum(sizes[k] for k in live), held


def pool_reuses_any_block(events):
    sizes, live, free, held = [], set(), [], 0
    for ev in events:
        if ev[0] == "alloc":
            size = _rounded(ev[1])
            if free:
                free.pop()  # any free block, even one too small for the request
            else:
                held += size
            live.add(len(sizes))
            sizes.append(size)
        elif ev[0] == "free":
            live.remove(ev[1])
            free.append(sizes[ev[1]])
        else:
            held -= sum(free)
            free = []
    return sum(sizes[k] for k in live), held


WRONG["pool_after"] = [
    Wrong("no rounding", pool_no_rounding, "multiple of 512 bytes"),
    Wrong("free returns memory to the driver", pool_free_to_driver, "back to the pool, not to the driver"),
    Wrong("free_all drops live arrays", pool_free_all_drops_everything, "live arrays keep their memory"),
    Wrong("never reuses a free block", pool_never_reuses, "reused by the next request of the same rounded size"),
    Wrong("reuses a block of any size", pool_reuses_any_block, "inputs wrong"),
]
