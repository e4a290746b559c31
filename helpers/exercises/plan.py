"""The cases a kernel check runs: sizes and launch shapes chosen by the check, fresh each run.

A kernel that is right for the check's one launch can still be wrong: a stride hard-coded as
the first launch's thread count, a halo guard that only fails when n is a multiple of the
block, a kernel that only works for one block. So the default plan runs four cases, cycling
through the exercise's launch shapes: fewer elements than one block; an exact multiple of the
case's block (or of a fixed grid's threads); one element past such a multiple; and more than
1,024 threads' worth, which no single block can cover. Every size is random per run.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

BEYOND_ONE_BLOCK = 1024  # the most threads a block may have: past this, a grid is required


class Case(NamedTuple):
    n: int
    grid: tuple
    block: tuple


def _unit(ex, rule, case) -> tuple[int, int]:
    """(threads per block, elements one pass of the grid covers) of the case's launch shape."""
    grid, block = rule(1000, case)
    threads = int(np.prod(block))
    return threads, threads * (int(np.prod(grid)) if ex.launch.kind == "fixed" else 1)


def default_sizes(ex, rule, rng) -> list[int]:
    threads0, _ = _unit(ex, rule, 0)
    _, unit1 = _unit(ex, rule, 1)
    _, unit2 = _unit(ex, rule, 2)
    _, unit3 = _unit(ex, rule, 3)
    small = int(rng.integers(1, threads0)) if threads0 > 1 else 1
    exact = unit1 * int(rng.integers(2, 5))
    past = unit2 * int(rng.integers(2, 5)) + 1
    large = BEYOND_ONE_BLOCK + 1 + int(rng.integers(0, 2 * unit3))
    return [small, exact, past, large]


def check_plan(ex, rule, rng) -> list[Case]:
    """The check's cases, drawn from ``rng`` (the same seed gives the same plan)."""
    if ex.sizes:
        sizes = ex.sizes(rng, _unit(ex, rule, 0)[0])
    else:
        sizes = default_sizes(ex, rule, rng)
    return [Case(int(n), *rule(int(n), ci)) for ci, n in enumerate(sizes)]
