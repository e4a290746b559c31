"""The sentences (and pictures) that explain why a kernel's outputs are wrong: never written,
hard-coded, off by one, integer types, floor division, a 1-D index in a 2-D launch, a loop that
stops early, and the tracer's own verdicts behind a stable label.
"""

from __future__ import annotations

import re
import types
from typing import Any, NamedTuple

import numpy as np

from ..errors import CourseError
from .base import fmt, fmt_pair
from .causes import capped_loop, floor_divisions, one_d_index
from .inputs import is_poison, poison

# Saved at import: a learner's cell (or a kernel running as Python on the tracer) could rebind
# numpy attributes; comparisons use these functions and nothing else.
SAVED = types.SimpleNamespace(
    isnan=np.isnan,
    absolute=np.absolute,
    less_equal=np.less_equal,
    equal=np.equal,
    flatnonzero=np.flatnonzero,
    rint=np.rint,
    asarray=np.asarray,
    array=np.array,
)
_isnan, _abs, _less_equal, _equal = SAVED.isnan, SAVED.absolute, SAVED.less_equal, SAVED.equal
_flatnonzero, _rint, _asarray = SAVED.flatnonzero, SAVED.rint, SAVED.asarray
_VERDICT_LABEL = {
    "out_of_bounds": "out-of-bounds access",
    "negative_index": "negative index",
    "warp_misuse": "misused warp call",
    "grid_sync_divergent": "divergent grid sync",
    "race": "race",
    "uninitialized_shared": "read of uninitialised shared memory",
    "divergent_barrier": "divergent barrier",
    "unwritten_output": "unwritten output",
}


def verdict_message(v) -> str:
    """The tracer's own explanation (it names thread, line and fix), behind a stable label."""
    label = _VERDICT_LABEL.get(v.kind, v.kind)
    return f"the CPU tracer found {'an' if label[0] in 'aeiou' else 'a'} {label}. {str(v.message).strip()}"


def compare(got, exp, rtol, atol, poisoned):
    """Flat indices never written (still poison) and written-but-wrong."""
    g, e = got.reshape(-1), exp.reshape(-1)
    if got.dtype.kind == "f":
        gn, en = _isnan(g), _isnan(e)
        unwritten = is_poison(g, got.dtype) & ~en if poisoned else np.zeros(g.shape, bool)
        close = _less_equal(_abs(g.astype(np.float64) - e), atol + rtol * _abs(e.astype(np.float64))) | (gn & en)
        wrong = ~unwritten & ~close
    else:
        unwritten = (
            (_equal(g, poison(got.dtype)) & ~_equal(e, poison(got.dtype))) if poisoned else np.zeros(g.shape, bool)
        )
        wrong = ~unwritten & ~_equal(g, e)
    return _flatnonzero(unwritten), _flatnonzero(wrong)


def ranges(idx) -> str:
    """[3,4,5,9] -> '3–5, 9' (at most three ranges)."""
    parts, start = [], idx[0]
    for a, b in zip(idx, list(idx[1:]) + [None]):
        if b != a + 1:
            parts.append(f"{start}" if start == a else f"{start}–{a}")
            start = b
    return ", ".join(parts[:3]) + (", …" if len(parts) > 3 else "")


def unwritten_message(name, idx, size, grid, block, kind, per_block=False, src="") -> str:
    """Name the likely cause from the pattern of never-written elements (one per thread, or
    one per block for outputs of shape "blocks"), and from the kernel's source where it shows one."""
    t, total = int(np.prod(block)), int(np.prod(block) * np.prod(grid))
    if per_block:
        if idx[0] == 1 and len(idx) == size - 1:
            return (
                f"only block 0 wrote its result; {name}[1–{size - 1}] were never written: let thread 0 of every "
                f"block write {name}[cuda.blockIdx.x]."
            )
        return (
            f"{name}[{ranges(list(idx))}] were never written: thread 0 of every block must write "
            f"{name}[cuda.blockIdx.x]."
        )
    n_un, first = len(idx), int(idx[0])
    what = (
        f"element{'s' if n_un > 1 else ''} {ranges(list(idx))} of {name} {'were' if n_un > 1 else 'was'} never written"
    )
    tail = first + n_un == size and idx[-1] == size - 1
    if one_d := one_d_cause(src, grid, block):
        return f"{n_un} of {size} {what}: {one_d}"
    if n_un == size:
        return (
            f"{name} was never written: does your kernel assign to {name}[i] (and is the guard `if i < n`, not "
            "`if i > n`)?"
        )
    stop = capped_loop(src)
    if tail and first > 0 and stop:  # before the grid checks: this kernel has its loop, the bound is wrong
        worth = f", {first // t} blocks of {t} threads' worth" if first % t == 0 else ""
        return (
            f"{what}: your loop stops at `{stop}` ({first} here{worth}) instead of at the end of {name}: a "
            f"grid-stride loop runs to the array's size, for i in range(start, {name}.size, stride), whatever the "
            "grid."
        )
    if tail and first == t and np.prod(grid) > 1:
        return (
            f"only the first block wrote its elements (0–{t - 1}); {what}: include cuda.blockIdx.x in your "
            "index, e.g. i = cuda.grid(1)."
        )
    if tail and first == total and kind == "fixed":
        return (
            f"{what}: the grid has only {total} threads, so each thread must handle several elements with a "
            "grid-stride loop (for i in range(start, n, stride))."
        )
    if tail and first >= (size // t) * t and first > 0:
        return (
            f"{what} (the last, partial block): is your grid large enough (round the number of blocks up) and "
            "does your guard use `i < n`?"
        )
    if tail:
        return (
            f"{what}: is your grid large enough, and does every thread use its global index (cuda.blockIdx.x * "
            "cuda.blockDim.x + cuda.threadIdx.x)?"
        )
    return f"{n_un} of {size} {what}: check your index, every element needs exactly one thread (i = cuda.grid(1))."


def wrong_message(ex, name, k, ci, cases, widx, unwritten, src="") -> str:
    got, exp = cases[ci]["got"][k].reshape(-1), cases[ci]["exp"][k].reshape(-1)
    i = int(widx[0])
    count = f" ({len(widx)} of {got.size} elements wrong" + (
        f", {len(unwritten)} never written)" if len(unwritten) else ")"
    )
    shown = fmt_pair(got[i], exp[i])
    head = f"{name}[{i}] is {shown[0]} but should be {shown[1]}{count}"
    if got.dtype.kind == "f":
        computed_nan = _isnan(got[widx]) & ~_isnan(exp[widx])
        if bool(computed_nan.any()):
            j = int(widx[int(_flatnonzero(computed_nan)[0])])
            return (
                f"{name}[{j}] is NaN but should be {fmt(exp[j])} ({int(computed_nan.sum())} of {got.size} elements "
                "came out NaN): your kernel computed a NaN (not a number), e.g. 0 / 0, sqrt of a negative number, "
                "or a value read from an array element that was never set."
            )
        if one_d := one_d_cause(src, cases[ci]["grid"], cases[ci]["block"]):
            return f"{head}: {one_d}"
        floored = floor_message(head, name, got, widx, exp, src)
        if floored:
            return floored
        truncated = truncation_message(head, name, got[widx], exp[widx], src)
        if truncated:
            return truncated
    # Hard-coded: this output did not change with the inputs, though the right answer did.
    for cj, other in enumerate(cases):
        if cj == ci:
            continue
        og, oe = other["got"][k].reshape(-1), other["exp"][k].reshape(-1)
        m = min(og.size, got.size)
        same = (
            _equal(og[:m], got[:m]) | (_isnan(og[:m]) & _isnan(got[:m]))
            if got.dtype.kind == "f"
            else _equal(og[:m], got[:m])
        )
        if (
            m > 1  # one equal element is a coincidence (an exclusive scan's out[0] is 0 for any input)
            and bool(same.all())
            and not bool(_equal(oe[:m], exp[:m]).all())
            and not (got.dtype.kind == "f" and _isnan(got[:m]).all())
        ):
            return (
                f"{head}: {name} came out the same for different inputs, so it looks hard-coded for one "
                "example; compute it from the input arrays."
            )
    for mistake, message in ex.mistakes:
        alt = mistake(**cases[ci]["inputs"])
        alt = alt if isinstance(alt, tuple) else (alt,)
        if compare(got, _asarray(alt[k]).reshape(-1), ex.rtol, ex.atol, False)[1].size == 0:
            return f"{head}: {message}"
    if got.dtype.kind == "f":
        whole = truncation_message(head, name, got[widx], exp[widx], "int(")
        if whole:
            return whole
    for shift in (1, -1):
        j = widx + shift
        ok = (j >= 0) & (j < exp.size)
        if ok.all() and compare(got[widx], exp[j], ex.rtol, ex.atol, False)[1].size == 0:
            return f"{head}: {name}[i] holds the value of element i{shift:+d}, so your index is off by one."
    return f"{head}: compare your formula with the exercise text; {ex.nudge()}"


_INT_TYPES = re.compile(r"\bint\s*\(|\bu?int(8|16|32|64)\b|\bnp\.u?int\b|\bnumba\.u?int|\bint_\b")


def whole_for_fractions(gw, ew) -> bool:
    """Every value given is a whole number, and some of the right ones are not."""
    gw, ew = _asarray(gw).astype(np.float64), _asarray(ew).astype(np.float64)
    return bool(_equal(gw, _rint(gw)).all()) and not bool(_equal(ew, _rint(ew)).all())


def floor_message(head, name, got, widx, exp, src) -> str | None:
    """Whole numbers where the answers have fractions, from a kernel that floor-divides values
    (``x[i] // 4``): every output 0 is not hard-coded, and no variable has an integer type."""
    if not whole_for_fractions(got[widx], exp[widx]):
        return None
    found = floor_divisions(src)
    if not found:
        return None
    return f"{head}: {floor_sentence(found[0], not bool(got.any()), f'value of {name}', 'values')}"


def floor_sentence(expr, zero, each, plural) -> str:
    """Floor division named as the cause of whole-number results (all 0, or rounded down), and the fix."""
    fix = "divide with / instead, which keeps the fraction (// rounds down even when both sides are floats)."
    if zero:
        return f"every {each} is 0 because `{expr}` is floor (integer) division: {fix}"
    return f"the {plural} were rounded down to whole numbers by the floor (integer) division `{expr}`: {fix}"


def one_d_cause(src, grid, block) -> str | None:
    """A 2-D launch whose kernel computes a 1-D index: recognise the formula and give the 2-D one."""
    if len(block) < 2 or int(np.prod(block[1:])) * int(np.prod(grid[1:])) <= 1:
        return None
    formula = one_d_index(src)
    if formula is None:
        return None
    shape = f"{grid[0]}x{grid[1]} blocks of {block[0]}x{block[1]} threads"
    return (
        f"`{formula}` is the 1-D index, but this launch is a 2-D grid ({shape}), so the row must come from the y "
        "dimension: col, row = cuda.grid(2), which is row = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y "
        "(and col the same with .x)."
    )


def truncation_message(head, name, gw, ew, src) -> str | None:
    """Whole-number results where the answers have fractions, from a kernel that uses an integer type
    (an int32 shared buffer, int(...)): the values were truncated, whatever else they look like."""
    if not whole_for_fractions(gw, ew):
        return None
    if not _INT_TYPES.search(src or ""):
        return None
    return (
        f"{head}: the values were truncated to integers: {name} should hold fractions, so somewhere a "
        "variable or array has an integer type (an int32 shared array, int(...), an integer accumulator); "
        "check its dtype and use float32 (e.g. numba.float32, 0.0 rather than 0)."
    )


def status_picture(name, got, exp, rtol, atol, poisoned, title):
    """A strip per output: green correct, red wrong, grey never written (1D outputs only)."""
    if got.ndim != 1 or got.size > 4096:
        return None
    from matplotlib.colors import ListedColormap
    from matplotlib.figure import Figure

    un, wr = compare(got, exp, rtol, atol, poisoned)
    status = np.zeros(got.size)
    status[wr], status[un] = 1, 2
    fig = Figure(figsize=(8, 1.1))
    ax = fig.add_subplot()
    ax.imshow(
        status[None, :],
        aspect="auto",
        cmap=ListedColormap(["#2da44e", "#cf222e", "#afb8c1"]),
        vmin=0,
        vmax=2,
        interpolation="nearest",
    )
    ax.set_yticks([])
    ax.set_xlabel(f"{name} index")
    ax.set_title(f"{title}: green = correct, red = wrong, grey = never written", fontsize=9)
    return fig


def success_figure(metrics) -> str:
    """A useful number for the green line, from whatever metrics the tracer gave."""
    parts = []
    for key, label in (
        ("global_reads_per_thread", "global read"),
        ("global_writes_per_thread", "global write"),
        ("atomics_per_thread", "atomic"),
        ("shared_reads_per_thread", "shared read"),
    ):
        v = float(metrics.get(key, 0.0))
        if v >= 0.05:
            parts.append(f"{v:.1f} {label}{'' if v == 1 else 's'}")
    text = ", ".join(parts) + (" per thread" if parts else "")
    if "coalescing" in metrics:
        text += f"{', ' if text else ''}{float(metrics['coalescing']):.0%} coalesced"
    return text


_HIGHER_IS_BETTER = {"coalescing"}


def budget_problem(budgets, metrics, src="") -> str | None:
    problem = _budget_problem(budgets, metrics)
    if problem and re.search(r"^\s*print\s*\(", src or "", re.M):
        problem += (
            " Note: print() inside a kernel counts too: every array element it prints is a memory read; "
            "remove debug prints before checking."
        )
    return problem


def _budget_problem(budgets, metrics) -> str | None:
    for key, limit in budgets.items():
        limit, advice = limit if isinstance(limit, tuple) else (limit, "")
        if key not in metrics:
            continue  # the tracer did not measure it (e.g. no shared memory used)
        v = float(metrics[key])
        over = v < limit if key in _HIGHER_IS_BETTER else v > limit
        if over:
            word = "at least" if key in _HIGHER_IS_BETTER else "at most"
            return (
                f"the numbers are right, but {key.replace('_', ' ')} is {v:.2f} and the budget is {word} {limit:g}"
                + (f": {advice}" if advice else ".")
            )
    return None


class NumericProblem(NamedTuple):
    """The first output that is not right: never written or written wrong, the sentence, and a
    strip of which elements are right (None where it would not help: not 1-D, or too long)."""

    kind: str  # "unwritten" | "wrong"
    message: str
    picture: Any


def numeric_problem(ex, cases, out_pos, src="") -> NumericProblem | None:
    """What is wrong with the first output that is not right, else None."""
    # Largest first: a launch of several blocks tells more (first block only? last partial block?).
    for ci in sorted(range(len(cases)), key=lambda c: -cases[c]["n"]):
        case = cases[ci]
        for k, p in enumerate(out_pos):
            arg, got, exp = ex.args[p], case["got"][k], case["exp"][k]
            if got.shape != exp.shape:  # an engine/definition bug, not the learner's
                raise CourseError(f"{ex.id}: expected {arg.name} of shape {exp.shape}, made {got.shape}.")
            un, wr = compare(got, exp, ex.rtol, ex.atol, arg.role == "out")
            if not (un.size or wr.size):
                continue
            if wr.size:
                kind, msg = "wrong", wrong_message(ex, arg.name, k, ci, cases, wr, un, src)
            else:
                kind, msg = (
                    "unwritten",
                    unwritten_message(
                        arg.name,
                        un,
                        got.size,
                        case["grid"],
                        case["block"],
                        ex.launch.kind,
                        arg.shape == "blocks",
                        src,
                    ),
                )
            title = f"n = {case['n']}, {case['grid'][0]} blocks x {case['block'][0]} threads"
            return NumericProblem(
                kind, msg, status_picture(arg.name, got, exp, ex.rtol, ex.atol, arg.role == "out", title)
            )
    return None
