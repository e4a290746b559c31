"""Run a CUDA C answer without a GPU: one generic path driven by the exercise's data.

The exercise gives `make_inputs(rng) -> {param: value}` (the output and a wrapper's implicit n
left out), `oracle(values) -> expected array`, `output` (the parameter the kernel writes) and
`mistakes` ((wrong_oracle, sentence) pairs). Here the arguments are packed as the library
would pass them for that launch kind, the output is poisoned (NaN) and followed by a guard
band, the kernel runs in helpers.ptx, and the trace's verdicts come before the numbers.
"""

from __future__ import annotations

import re

import numpy as np

from .. import cuda_c
from ..errors import UnsupportedByTracer
from .results import Graded

PAD, BLOCK = 64, 128
# A raw kernel is launched with two of these block sizes, drawn per check: blockIdx.x * 128 in place of
# blockIdx.x * blockDim.x is right for one block size only.
BLOCKS = (64, 96, 160, 192, 256)
_C = {v: k for k, v in cuda_c._CTYPES.items()}


def _c_params(text):
    """'const float* x, int n' -> [(name, pointer?, numpy dtype or None)]."""
    out = []
    for p in filter(None, (q.strip() for q in text.split(","))):
        words = p.replace("*", " * ").split()
        name, typ = words[-1], [w for w in words[:-1] if w not in ("const", "__restrict__", "*")]
        dt = _C.get(" ".join(typ))
        out.append((name, "*" in words, np.dtype(dt) if dt and dt != "bool" else None))
    return out


def _lib_params(spec):
    """CuPy 'float32 x, raw T y' -> [(name, raw?, dtype)]; a placeholder type reads as float32."""
    out = []
    for p in filter(None, (q.strip() for q in spec.split(","))):
        words = [w for w in p.split() if w != "raw"]
        typ = "float32" if re.fullmatch(r"[A-Z]", words[0]) else words[0]
        out.append((words[1], "raw" in p.split(), np.dtype(typ)))
    return out


def pack(ex, values, out_full, n, block=BLOCK):
    """(args, grid, block) for one launch, packed as the launch kind's library would pack them; ``block``
    is the raw kernel's (a library picks its own)."""
    args = []
    if ex.kind in ("raw", "sourcemodule"):  # RawKernel / PyCUDA: NumPy scalars go by their dtype
        for name, _ptr, _dt in _c_params(ex.c_params):
            args.append(out_full if name == ex.output else values[name])
        return args, (n + block - 1) // block, block
    if ex.kind == "pycuda_elementwise":  # PyCUDA ElementwiseKernel: numpy scalars, then n
        for name, ptr, dt in _c_params(ex.arguments):
            v = out_full if name == ex.output else values[name]
            args.append(v if ptr else dt.type(v))
        return [*args, np.uint64(n)], 2, BLOCK
    # CuPy ElementwiseKernel / ReductionKernel: a scalar is cast to its declared type; the wrapper
    # reads it as a broadcast array, as CuPy's generated kernel does
    for name, _raw, dt in _lib_params(ex.in_params) + _lib_params(ex.out_params):
        v = out_full if name == ex.output else values[name]
        args.append(v if isinstance(v, np.ndarray) else np.full(n, v, dt))
    if ex.kind == "reduction":  # one block whose threads' partial results a tree combines, as CuPy's
        return [*args, np.int64(n)], 1, cuda_c.reduction_threads(n)
    return [*args, np.int64(n)], 2, BLOCK


def run_on_cpu(ex, src, values, what, executor, threads=None, block=BLOCK):
    """Run the answer's PTX on `values`: ("ran", got) or ("failed" | "unchecked", message).
    A trace verdict (race, stray read, write past the end) comes back as "failed". `threads`
    replaces the block size (a reduction folded by one thread, to name its mistake)."""
    from .. import ptx

    want = np.asarray(ex.oracle(values))
    n = size_of(values)
    size = want.size
    full = np.full(max(size, 1) + PAD, np.nan, want.dtype if want.dtype.kind == "f" else np.float32)
    args, grid, block = pack(ex, values, full, n, block)
    block = threads or block
    try:
        r = ptx.run(src, ex.kernel, grid, block, args, shared_bytes=ex.shared_bytes, nvrtc=executor.compile_cuda)
    except UnsupportedByTracer as e:
        return "unchecked", f"{what}, but the numbers could not be run here: {e} Nothing was wrong so far"
    out_id = next((i for i, a in enumerate(r.arrays) if a.size == full.size and a.dtype == full.dtype), None)
    if any(e[0] == out_id for e in r.out_of_bounds) or not np.all(np.isnan(full[size:])):
        return "failed", _PAST_END
    verdicts = ptx.to_trace(r).verdicts
    if verdicts:
        return "failed", f"{what}, but running it on the CPU found a mistake: {verdicts[0].message}"
    return "ran", (full[:size].reshape(want.shape), f"{grid} block(s) of {block}")


def judge(ex, values, got, what) -> str | None:
    """None when `got` matches the oracle; else the sentence: a known mistake's, or the first bad element."""
    want = np.asarray(ex.oracle(values))
    got = np.asarray(got)
    if got.size == want.size:
        got = got.reshape(want.shape)
    if got.shape == want.shape and np.allclose(got, want, rtol=1e-5, atol=1e-5, equal_nan=False):
        return None
    if got.shape != want.shape:
        return f"{what}, but the output has shape {got.shape}, expected {want.shape}."
    for wrong, sentence in ex.mistakes:
        w = np.asarray(wrong(values), dtype=want.dtype).reshape(want.shape)
        if np.allclose(got, w, rtol=1e-5, atol=1e-5):
            return f"{what}, but the results are wrong: {sentence}"
    bad = int(np.flatnonzero(~np.isclose(got.ravel(), want.ravel(), rtol=1e-5, atol=1e-5))[0])
    if ex.kind in ("raw", "sourcemodule") and bad > 0 and np.isnan(got.ravel()[bad:]).all():
        # the check launches enough threads for every element: a kernel that stops early has a bound of its own
        return (
            f"{what}, but the results are wrong: elements {bad} to {want.size - 1} were never written and every "
            f"one before is right, so the kernel stops at {bad}, not at n = {want.size}: look for a number where n "
            "belongs."
        )
    never = " (never written)" if np.isnan(got.ravel()[bad]) else ""
    return (
        f"{what}, but the results are wrong: element {bad} is {got.ravel()[bad]:.6g}{never}, expected "
        f"{want.ravel()[bad]:.6g}."
    )


def reduction_mistake(ex, answer, values, what, executor) -> str | None:
    """The sentence for a wrong ReductionKernel answer that one change would make right, found by
    running the changed answer here: the reference's identity (every thread starts from the
    identity, so a wrong one shifts the total by an amount that depends on the thread count), or
    a reduce_expr that is right only when one thread folds every element in order."""
    m, r, p, ident = answer
    variants = []
    if str(ident).strip() != str(ex.reference[3]).strip():
        variants.append(((m, r, p, ex.reference[3]), None, _WRONG_IDENTITY.format(ident=ex.reference[3])))
    variants.append((answer, 1, _PARTIALS))
    for (m2, r2, p2, i2), threads, sentence in variants:
        src = cuda_c.reduction_source(ex.in_params, ex.out_params, m2, r2, p2, i2, name=ex.kernel)
        status, out = run_on_cpu(ex, src, values, what, executor, threads=threads)
        if status == "ran" and judge(ex, values, out[0], what) is None:
            return f"{what}, but the results are wrong: {sentence}"
    return None


def _named(ex, problem, answer, values, what, executor):
    """`problem`, or for a reduction whose numbers match no known mistake the sentence that names
    its mistake (reduction_mistake), if one does."""
    if not problem or ex.kind != "reduction" or answer is None:
        return problem
    if any(sentence in problem for _, sentence in ex.mistakes) or "identity must be" in problem:
        return problem
    return reduction_mistake(ex, answer, values, what, executor) or problem


def launch_cases(ex, rng) -> list:
    """Three launches per check, each on fresh inputs; a raw kernel gets different block sizes. The third
    is past 65,535 elements: an index kept in a 16-bit type (short, unsigned short) wraps there."""
    blocks = (ex.block,) * 3 if ex.block else rng.choice(BLOCKS, 3, replace=False)
    cases = [(ex.make_inputs(rng), int(b)) for b in blocks]
    return cases[:2] + [(grown(cases[2][0], LARGE + 2 * int(rng.integers(0, 2000)) + 1), cases[2][1])]


LARGE = 1 << 16  # the third launch's smallest n


def grown(values: dict, n: int) -> dict:
    """``values`` with every array repeated to n elements (and n said so): a large case with the exercise's
    own kind of numbers."""
    out = {k: (np.resize(v, n) if isinstance(v, np.ndarray) else v) for k, v in values.items()}
    if "n" in out:
        out["n"] = type(values["n"])(n)
    return out


def _raw(ex) -> bool:
    return ex.kind in ("raw", "sourcemodule")


def _block_bound(ex, src, values, block, what, executor) -> str:
    """For a raw kernel wrong at ``block``: the sentence when another block size gives the right numbers
    (a literal block size in the index), else ''."""
    if not _raw(ex) or ex.block:
        return ""
    for other in (BLOCK, *BLOCKS):
        if other == block:
            continue
        status, out = run_on_cpu(ex, src, values, what, executor, block=other)
        if status == "ran" and judge(ex, values, out[0], what) is None:
            return (
                f" It is right with blocks of {other} threads and wrong with {block}: the kernel must not assume a "
                "block size; use blockDim.x (the launch's own) where it has a number."
            )
    return ""


def _size_bound(ex, src, sizes: list, values, block, what, executor) -> str:
    """For an answer right at the earlier ``sizes`` (or, run again here, at a smaller n) and wrong at this
    one: the sentence that says so."""
    n = size_of(values)
    if not sizes and n > 1:
        small = grown(values, n // 4 or 1)
        status, out = run_on_cpu(ex, src, small, what, executor, block=block)
        if status == "ran" and judge(ex, small, out[0], what) is None:
            sizes = [size_of(small)]
    if not sizes:
        return ""
    return (
        f" It is right for n = {' and '.join(map(str, sizes))} and wrong for n = {n}: look for a size the kernel "
        "assumes (a number where n belongs) or an index type too small for n (use int)."
    )


def _why(ex, src, sizes, values, block, what, executor) -> str:
    """The sentence after a failure that a launch of another shape or size explains, or ''."""
    return _block_bound(ex, src, values, block, what, executor) or _size_bound(
        ex, src, sizes, values, block, what, executor
    )


def size_of(values) -> int:
    return next(len(v) for v in values.values() if isinstance(v, np.ndarray))


def check_on_cpu(ex, src, rng, what, answer, executor) -> Graded:
    """The check of the answer compiled as `src`, run from its PTX, on three launches."""
    ran, sizes = [], []
    for values, block in launch_cases(ex, rng):
        status, out = run_on_cpu(ex, src, values, what, executor, block=block)
        if status == "unchecked":
            return Graded(
                status, out + "; run this check on a GPU to test the numbers.", None, {"numbers_checked": False}
            )
        if status == "failed":
            return Graded(
                status,
                out + _why(ex, src, sizes, values, block, what, executor),
            )
        got, launch = out
        problem = _named(ex, judge(ex, values, got, what), answer, values, what, executor)
        if problem:
            return Graded(
                "failed",
                problem + _why(ex, src, sizes, values, block, what, executor),
            )
        sizes.append(size_of(values))
        ran.append(f"n = {sizes[-1]}, {launch}")
    return Graded(
        "passed",
        f"{what} and gives the right results, run on the CPU from its PTX ({'; '.join(ran)}).",
        None,
        {"numbers_checked": True},
    )


def check_on_gpu(ex, answer, src, rng, what, executor) -> Graded:
    """The check in GPU mode: for each launch a traced CPU run first (it sees races and stray reads a
    GPU run does not report), then the numbers from the GPU, which are the final word."""
    sizes = []
    for values, block in launch_cases(ex, rng):
        status, out = run_on_cpu(ex, src, values, what, executor, block=block)
        if status == "failed" and not out.startswith(what + ", but the results"):
            return Graded(
                status,
                out + _why(ex, src, sizes, values, block, what, executor),
            )
        got, guard_ok = executor.launch_cuda_c(ex.run_gpu, answer, values, block)
        if not guard_ok:
            return Graded("failed", _PAST_END + _size_bound(ex, src, sizes, values, block, what, executor))
        problem = judge(ex, values, got, what)
        if problem and ex.kind == "reduction" and str(answer[3]).strip() != str(ex.reference[3]):
            # CuPy folds the identity in once per thread, so a wrong one shifts the result by an amount
            # no formula predicts; the answer with the right identity tells whether that was the mistake.
            fixed, _ = executor.launch_cuda_c(ex.run_gpu, (*answer[:3], ex.reference[3]), values, BLOCK)
            if judge(ex, values, fixed, what) is None:
                problem = f"{what}, but the results are wrong: " + _WRONG_IDENTITY.format(ident=ex.reference[3])
        problem = _named(ex, problem, answer, values, what, executor)
        if problem:
            return Graded(
                "failed",
                problem + _why(ex, src, sizes, values, block, what, executor),
            )
        sizes.append(size_of(values))
    return Graded(
        "passed",
        f"{what} and gives the right results on the GPU (n = {' and '.join(map(str, sizes))}).",
        None,
        {"numbers_checked": True},
    )


_WRONG_IDENTITY = (
    "the identity must be the value that changes nothing ({ident} for this reduction); with that identity your "
    "kernel is right."
)
_PARTIALS = (
    "reduce_expr must combine two partial results, and yours is right only when b is one element (one thread "
    "folding every element in order gets the right total). CuPy's threads each reduce a share of the elements, "
    "then combine their partial results with the same reduce_expr: do per-element work such as squaring in "
    "map_expr, and keep reduce_expr a combination that works on partial totals, such as a + b."
)
_PAST_END = "your kernel wrote past the end of the output: threads with i >= n must do nothing (add the bounds check)."
