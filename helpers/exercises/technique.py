"""Checks of how a kernel got its numbers: inputs left as they were, and the work spread over
the threads (not done by a few of them in a loop). Both apply to every kernel exercise; the
exercise-specific techniques (global reads, atomics, coalescing...) are its budgets.
"""

from __future__ import annotations

import numpy as np

from .base import fmt

SPREAD = 4  # at least 1 in SPREAD threads must touch global memory (serial work in thread 0 gives 1 in 32)


def changed_input(ex, inputs: dict, call_args: list) -> str | None:
    """The first input array the kernel wrote to, as a sentence, else None."""
    outs = [a.name for a in ex.args if a.role in ("out", "acc")]
    for a, after in zip(ex.args, call_args):
        before = inputs.get(a.name)
        if a.role != "in" or not isinstance(before, np.ndarray) or not isinstance(after, np.ndarray):
            continue
        differ = np.flatnonzero(before.reshape(-1).view(np.uint8) != after.reshape(-1).view(np.uint8))
        if differ.size:
            k = int(differ[0] // before.itemsize)
            where = np.unravel_index(k, before.shape)
            index = ", ".join(str(int(v)) for v in where)
            return (
                f"your kernel changed its input {a.name} ({a.name}[{index}] was {fmt(before.reshape(-1)[k])}, "
                f"is now {fmt(after.reshape(-1)[k])}): inputs are read-only here, so write results only to "
                f"{' and '.join(outs)}."
            )
    return None


def wide_scratch(arrays) -> str | None:
    """A sentence when a shared or local array is of a wider type than every global array of its kind
    (float64 scratch for float32 data, int64 for int32): the same numbers at twice the on-chip memory
    (fewer blocks fit on a multiprocessor) and, on most GPUs, slower arithmetic than the data's type."""
    data = [info.dtype for info in arrays if info.space == "global" and info.dtype.kind in "fiu"]
    for info in arrays:
        kind = info.dtype.kind
        if info.space not in ("shared", "local") or kind not in "fiu":
            continue
        same = [d for d in data if (d.kind == "f") == (kind == "f")]
        if same and info.dtype.itemsize > max(d.itemsize for d in same):
            want = max(same, key=lambda d: d.itemsize)
            return (
                f"the numbers are right, but the {info.space} array {info.var} is {info.dtype} while the kernel's "
                f"data is {want}: it takes {info.dtype.itemsize // want.itemsize} times the {info.space} memory for "
                f"the same values; declare it numba.{want} like the data."
            )
    return None


def spread_problem(ex, metrics: dict, elements: int) -> str | None:
    """A sentence when only a few threads did the work the exercise gives to all of them."""
    launched = int(metrics.get("threads", 0))
    busy = launched - int(metrics.get("idle_threads", 0))
    need = min(launched, int(elements))
    if not launched or busy * SPREAD >= need:
        return None
    how = ex.spread_advice or (
        "a grid-stride loop gives every thread its share: for i in range(cuda.grid(1), n, cuda.gridsize(1))"
        if ex.launch.kind == "fixed" and not ex.launch.fixed_by
        else "give each thread its own element(s), from cuda.grid(...), instead of a loop over the others' work"
    )
    return (
        f"the numbers are right, but only {busy} of the {launched} threads touched memory: a few threads "
        f"do everyone's work in a loop, which a GPU runs serially; {how}."
    )
