"""Notebook 12 - Numba on the CPU as the baseline, the crossover, and the tool landscape."""

import ast
import textwrap

import numpy as np

from helpers import _numba
from helpers.exercises import CallExercise, FunctionExercise, ValueExercise, register
from helpers.exercises.base import fmt, fmt_pair, rounding_note, source
from helpers.exercises.library_calls import facts_of, parfors

# ----------------------------------------------------------------------------- parallel=True alone

parallel_loops = ValueExercise(
    prompt="@njit(parallel=True) def total(x): t = 0.0; for i in range(x.size): t += x[i]; return t. "
    "How many loops does Numba make parallel (its parfor count)?",
    answer=0,
    mistakes={
        1: "parallel=True alone does not parallelise a `for i in range(...)` loop: only prange loops and whole-array "
        "expressions become parallel loops (Numba warns 'no transformation for parallel execution was possible').",
        2: "the count is of loops, not of cores, and this function has no loop Numba may split: range is not prange.",
    },
    explanation="Only `prange` loops and array expressions (x * x, np.sum(x), ...) become parfors; a range loop "
    "stays serial even with parallel=True, and Numba says so with a NumbaPerformanceWarning.",
    hints=("Section 2 compiled this function and printed its parfor count.", "range is not prange."),
)

# ----------------------------------------------------------------------------- a @vectorize ufunc


def _leaky_relu_scalar(x, alpha):
    return x if x > 0 else alpha * x


def _leaky_relu_reference():
    from numba import vectorize

    return vectorize(["float32(float32, float32)", "float64(float64, float64)"], target="parallel")(_leaky_relu_scalar)


def _judge_leaky_relu(fn, rng, executor):
    facts = facts_of(executor, fn)  # read from the object here, or where it lives when the grader judges
    if facts["np_vectorize"]:
        return False, (
            "np.vectorize is a Python loop in disguise (NumPy's documentation says it is for convenience, not "
            "speed): use numba's @vectorize, which compiles the function into a real ufunc."
        )
    if not facts["ufunc"]:
        what = "an @njit function" if facts["cpu_jit"] else facts["type"]
        return False, (
            f"leaky_relu is {what}, not a ufunc: decorate the scalar function with "
            '@vectorize(["float32(float32, float32)", "float64(float64, float64)"], target="parallel").'
        )
    if facts["nin"] != 2:
        return False, f"your ufunc takes {facts['nin']} input(s); leaky_relu takes two: (x, alpha)."
    for dtype in (np.float32, np.float64):
        x = rng.standard_normal(int(rng.integers(50, 500))).astype(dtype)
        x[:3] = (0.0, -1.0, 2.0)
        alpha = dtype(rng.uniform(0.01, 0.3))
        got = np.asarray(fn(x, alpha))
        want = np.where(x > 0, x, alpha * x).astype(dtype)
        if got.shape != x.shape:
            return False, f"for {x.size} elements the result has shape {got.shape}, expected {x.shape}."
        if not np.allclose(got, want, rtol=1e-6, atol=0):
            if np.allclose(got, np.maximum(x, 0)):
                why = "for x <= 0 the result is alpha * x, not 0 (that is a plain ReLU)."
            else:
                bad = int(np.flatnonzero(~np.isclose(got, want, rtol=1e-6, atol=0))[0])
                why = f"leaky_relu({fmt(x[bad])}, {fmt(alpha)}) gave {fmt(got[bad])}, expected {fmt(want[bad])}."
            return False, f"wrong values for {np.dtype(dtype).name} input: {why}"
        if got.dtype != dtype:
            return False, (
                f"{np.dtype(dtype).name} inputs gave {got.dtype.name} results: list the signature "
                f'"{np.dtype(dtype).name}({np.dtype(dtype).name}, {np.dtype(dtype).name})" too, so the ufunc '
                "keeps the input's type (float32 moves half the bytes of float64)."
            )
    if facts.get("target") == "cpu":
        return False, (
            "your @vectorize has the default target='cpu', which runs on one core: add target=\"parallel\" so the "
            "ufunc splits the array across the CPU cores, as the exercise asks."
        )
    return True, "correct for float32 and float64 arrays with a scalar alpha, and each keeps its type."


leaky_relu = CallExercise(
    remote_ok=True,  # its judge reads facts_of(executor, fn) and calls fn: both work on a stand-in
    prompt="Make leaky_relu(x, alpha) a compiled ufunc with numba's @vectorize, target='parallel', for float32 and "
    "float64: x where x > 0, else alpha * x.",
    reference=_leaky_relu_reference(),
    factory=_leaky_relu_reference,
    judge=_judge_leaky_relu,
    hints=(
        'Write the scalar rule, then put @vectorize(["float32(float32, float32)", "float64(float64, float64)"], '
        'target="parallel") above it.',
        "return x if x > 0 else alpha * x",
    ),
)


def _leaky_relu_solution():
    return (
        'from numba import vectorize\n\n@vectorize(["float32(float32, float32)", "float64(float64, float64)"], '
        'target="parallel")\ndef leaky_relu(x, alpha):\n    return x if x > 0 else alpha * x\n'
    )


leaky_relu._solution_text = _leaky_relu_solution  # a ufunc has no source to show

# ----------------------------------------------------------------------------- a prange reduction


def _sum_of_squares_reference():
    from numba import njit, prange

    @njit(parallel=True)
    def sum_of_squares(x):
        total = 0.0
        for i in prange(x.size):
            total += x[i] * x[i]
        return total

    return sum_of_squares


def _shared_cell(fn) -> str | None:
    """An update, inside a prange loop, of an array element whose index does not use the loop's
    variable (``out[0] += ...``): every thread writes the same cell. None when there is none (or no
    source to read)."""
    try:
        tree = ast.parse(textwrap.dedent(source(fn)))
    except SyntaxError:
        return None
    for loop in ast.walk(tree):
        if not (isinstance(loop, ast.For) and isinstance(loop.target, ast.Name)):
            continue
        if not (isinstance(loop.iter, ast.Call) and ast.unparse(loop.iter.func).split(".")[-1] == "prange"):
            continue
        for node in ast.walk(loop):
            targets = node.targets if isinstance(node, ast.Assign) else [getattr(node, "target", None)]
            for t in targets:
                if isinstance(node, (ast.Assign, ast.AugAssign)) and isinstance(t, ast.Subscript):
                    names = {n.id for n in ast.walk(t.slice) if isinstance(n, ast.Name)}
                    if loop.target.id not in names:
                        return ast.unparse(node)
    return None


def _judge_sum_of_squares(fn, rng, executor):
    if _numba.is_cuda_function(fn):
        return False, "this is a @cuda.jit kernel; this exercise runs on the CPU cores: use @njit(parallel=True)."
    facts = facts_of(executor, fn)
    if not facts["cpu_jit"]:
        return False, (
            f"{getattr(fn, '__name__', 'your function')} is a plain Python function: decorate it with "
            "@njit(parallel=True) (from numba import njit, prange)."
        )
    if not facts["parallel"]:
        return False, (
            "@njit without parallel=True compiles a serial loop that runs on one core, whatever "
            "numba.get_num_threads() says: write @njit(parallel=True) and loop with prange."
        )
    if race := _shared_cell(fn):
        return False, (
            f"`{race}` inside the prange loop is a race: the threads update the same element at once and lose "
            "each other's additions (right here only by luck); add into a scalar, total += x[i] * x[i], which "
            "Numba turns into a parallel reduction."
        )
    sizes = [0, 1, 7, 1000, int(rng.integers(10_000, 200_000))]
    for n in sizes:
        x = rng.standard_normal(n)
        want = float(np.dot(x, x))
        got = fn(x)
        if not isinstance(got, (float, int, np.floating, np.integer)) or isinstance(got, bool):
            return False, f"for an array of {n} elements it returned {fmt(got)}, not a number."
        if abs(float(got) - want) > 1e-9 * max(1.0, abs(want)):
            why = "square each element before adding it." if np.isclose(float(got), x.sum()) else "sum x[i] * x[i]."
            shown = fmt_pair(got, want)  # enough digits to tell a float32 sum from the float64 one
            return False, (
                f"for an array of {n} elements it returned {shown[0]} but should return "
                f"{shown[1]}: {rounding_note(got, want) or why}"
            )
    loops = parfors(executor, fn)
    if loops == 0:
        return False, (
            "right numbers, but parallel=True made no loop parallel (parfor count 0): a `for i in range(...)` loop "
            "stays serial; write `for i in prange(x.size)` (from numba import prange)."
        )
    return True, (
        f"correct on {len(sizes)} arrays (0 to {sizes[-1]} elements), and Numba made {loops} loop(s) parallel: "
        "it can use every thread numba.get_num_threads() allows."
    )


sum_of_squares = CallExercise(
    remote_ok=True,
    prompt="Write sum_of_squares(x) = x[0]**2 + x[1]**2 + ... with @njit(parallel=True) and a prange loop, so that "
    "it runs on all the CPU cores.",
    reference=_sum_of_squares_reference(),
    factory=_sum_of_squares_reference,
    judge=_judge_sum_of_squares,
    hints=(
        "A scalar `total += ...` inside a prange loop is a reduction Numba knows how to split across threads.",
        "@njit(parallel=True)\ndef sum_of_squares(x):\n    total = 0.0\n    for i in prange(x.size):\n"
        "        total += x[i] * x[i]\n    return total",
    ),
)

# ----------------------------------------------------------------------------- reading the crossover


class BenchRows(list):
    """A workload's rows as bench/crossover.py writes them: {n, cpu_ms, gpu_kernel_ms, gpu_total_ms}."""

    def __repr__(self):
        ns = [r["n"] for r in self]
        return f"<{len(self)} sizes, n=2^{int(np.log2(min(ns)))}..2^{int(np.log2(max(ns)))}>" if ns else "<no rows>"


class _Rows:
    """Made-up but shaped like the measurements: fixed costs plus a cost per element, with noise."""

    def draw(self, rng):
        count = int(rng.integers(8, 19))
        cpu_fixed, cpu_per = rng.uniform(0.003, 0.03), rng.uniform(2e-7, 2e-6)
        kernel_fixed, kernel_per = rng.uniform(0.004, 0.012), cpu_per * rng.uniform(0.01, 0.1)
        transfer_fixed, transfer_per = rng.uniform(0.02, 0.2), cpu_per * rng.uniform(0.2, 1.6)
        rows = BenchRows()
        for k in range(count):
            n = 1 << (10 + k)

            def noisy(v):
                return float(round(v * rng.uniform(0.85, 1.15), 6))

            kernel = noisy(kernel_fixed + kernel_per * n)
            rows.append(
                {
                    "n": n,
                    "cpu_ms": noisy(cpu_fixed + cpu_per * n),
                    "gpu_kernel_ms": kernel,
                    "gpu_total_ms": round(kernel + noisy(transfer_fixed + transfer_per * n), 6),
                }
            )
        return rows


def _table(cpu, gpu_total):
    """Rows from 2^10 up, with the kernel alone at a tenth of the total (edge cases a learner can read)."""
    return BenchRows(
        {"n": 1 << (10 + k), "cpu_ms": c, "gpu_kernel_ms": round(g / 10, 6), "gpu_total_ms": g}
        for k, (c, g) in enumerate(zip(cpu, gpu_total))
    )


EDGE_ROWS = (
    (_table([0.01, 0.02, 0.05, 0.2, 0.8, 3.0], [0.1, 0.11, 0.15, 0.3, 0.5, 1.5]),),  # wins from 2^14
    (_table([0.01, 0.03, 0.1, 0.4], [0.2, 0.3, 0.6, 1.9]),),  # never wins: None
    (_table([0.01, 0.02, 0.05, 0.2, 0.8], [0.1, 0.01, 0.3, 0.1, 0.3]),),  # wins at 2^11, loses at 2^12, then wins
    (_table([0.01, 0.02, 0.05, 0.2], [0.1, 0.05, 0.05, 0.1]),),  # a tie at 2^12 is not faster: wins from 2^13
)


def _wins_from(rows, key):
    answer = None
    for row in sorted(rows, key=lambda r: r["n"], reverse=True):
        if row[key] >= row["cpu_ms"]:
            break
        answer = row["n"]
    return answer


def _gpu_wins_from(rows):
    """The smallest n from which the GPU, transfers included, beats the CPU at that size and every larger one."""
    answer = None
    for row in sorted(rows, key=lambda r: r["n"], reverse=True):  # from the largest size down
        if row["gpu_total_ms"] >= row["cpu_ms"]:
            break
        answer = row["n"]
    return answer


def _first_win(rows):
    return next((r["n"] for r in sorted(rows, key=lambda r: r["n"]) if r["gpu_total_ms"] < r["cpu_ms"]), None)


gpu_wins_from = FunctionExercise(
    prompt="Write gpu_wins_from(rows): rows are bench/crossover.py's measurements of one workload, dicts with n, "
    "cpu_ms, gpu_kernel_ms and gpu_total_ms (transfers included). Return the smallest n from which the GPU with "
    "transfers is faster than the CPU at that size and at every larger size measured, or None if it never is.",
    reference=_gpu_wins_from,
    inputs={"rows": _Rows()},
    edge_cases=EDGE_ROWS,
    trials=150,
    mistakes=(
        (
            lambda rows: _wins_from(rows, "gpu_kernel_ms"),
            "that is the kernel alone; with transfers means gpu_total_ms, which includes the copies to and from the "
            "GPU.",
        ),
        (
            _first_win,
            "that is the first size where the GPU wins, but it loses again at a larger one: the crossover is the "
            "size from which it wins at every larger size (walk down from the largest).",
        ),
    ),
    hints=(
        "Walk the rows from the largest n down, and stop at the first one where the GPU with transfers is not faster.",
        "Compare row['gpu_total_ms'] with row['cpu_ms']; if even the largest size is a CPU win, return None.",
    ),
)

EXERCISES = register(__name__, globals())
