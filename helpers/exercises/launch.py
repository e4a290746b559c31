"""How a kernel exercise is launched (one thread per element, a fixed grid, the learner's own
launch, 2-D grids), and the validation of a learner's launch against what a GPU accepts.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from ..errors import CourseError, LearnerError
from ..limits import WARP_SIZE, block_problem, grid_problem
from .base import fmt, not_attempted, source


@dataclass(frozen=True)
class LaunchRule:
    """How a kernel exercise is launched: one thread per element, a fixed grid, or the learner's own."""

    kind: str  # "per_element" | "fixed" | "learner"
    threads: int = 32
    blocks: int = 1
    example: Callable = None  # learner kind: a correct launch function, n -> (blocks, threads)
    block_sizes: tuple = ()  # learner kind: the threads per block allowed (empty: any legal one)
    warp_multiple: bool = True  # learner kind: threads per block must be a multiple of 32
    # Other shapes the check launches, case by case (threads, or (blocks, threads) for a fixed grid),
    # so that a kernel which hard-codes the first launch's numbers fails on the next.
    more: tuple = ()
    fixed_by: str = ""  # why the exercise itself fixes the block (a shared tile sized by a constant...)

    @property
    def example_source(self) -> str:
        return source(self.example).strip() if self.example else ""

    @property
    def shapes(self) -> int:
        """How many launch shapes the check cycles through."""
        return 1 + len(self.more)

    def config(self, n, case=0):
        if self.kind == "fixed":
            blocks, threads = ((self.blocks, self.threads), *self.more)[case % self.shapes]
            return (blocks,), (threads,)
        threads = (self.threads, *self.more)[case % self.shapes]
        return ((n + threads - 1) // threads,), (threads,)


def per_element(threads=32, *more, fixed_by="") -> LaunchRule:
    """One thread per element: blocks = ceil(n / threads); ``more`` block sizes are used by later cases."""
    return LaunchRule("per_element", threads, more=tuple(more), fixed_by=fixed_by)


def fixed(blocks, threads, more=(), fixed_by="") -> LaunchRule:
    """A small fixed grid whatever n is (grid-stride loops must cover the rest); ``more`` holds other
    (blocks, threads) grids the check launches in later cases."""
    return LaunchRule("fixed", threads, blocks, more=tuple(more), fixed_by=fixed_by)


def learner_launch(example, block_sizes=(), warp_multiple=True) -> LaunchRule:
    """The learner passes ``launch=f`` with f(n) -> (blocks_per_grid, threads_per_block).

    The launch is judged by arithmetic for every n in ``JUDGE_SIZES`` (see ``judge_launch``)
    before the kernel runs at small sizes."""
    return LaunchRule("learner", example=example, block_sizes=tuple(block_sizes), warp_multiple=warp_multiple)


@dataclass(frozen=True)
class Grid2D(LaunchRule):
    """One block per tile of a (rows x cols) matrix or image: griddim = (x blocks, y blocks).

    ``n`` is the exercise's size; ``shape(n)`` gives (rows, cols) so a non-square shape catches
    swapped indices. ``tile`` is what one block covers (x = columns, y = rows): the block itself
    for one thread per element, more when each thread handles several rows.
    """

    tile: tuple = (32, 32)
    block: tuple = (32, 8)  # threads per block, (x, y)
    shape: Callable = None  # n -> (rows, cols); default (n, n)

    def config(self, n, case=0):
        rows, cols = self.shape(n) if self.shape else (n, n)
        block = ((self.block, *self.more)[case % self.shapes]) if self.more else self.block
        # One thread per element: the tile is the block, whichever block this case uses.
        tile = tuple(block) if self.more else self.tile
        return ((cols + tile[0] - 1) // tile[0], (rows + tile[1] - 1) // tile[1]), tuple(block)


def grid2d(block, tile=None, shape=None, more=(), fixed_by="") -> Grid2D:
    """A 2-D launch of ``block`` = (x, y) threads, one block per ``tile`` (default: one thread per element);
    ``more`` blocks (one thread per element only) are used by later cases."""
    if more and tile is not None and tuple(tile) != tuple(block):
        raise ValueError("other blocks (more=) need one thread per element: no tile")
    tile = tuple(tile or block)
    return Grid2D(
        "per_element",
        threads=block[0] * block[1],
        tile=tile,
        block=tuple(block),
        shape=shape,
        more=tuple(tuple(b) for b in more),
        fixed_by=fixed_by,
    )


@dataclass(frozen=True)
class OneBlockPerRow(LaunchRule):
    """``n`` rows, one block of ``threads`` threads each (the block loops over its row)."""

    def config(self, n, case=0):
        return (n,), ((self.threads, *self.more)[case % self.shapes],)


def one_block_per_row(threads, *more, fixed_by="") -> OneBlockPerRow:
    return OneBlockPerRow("per_element", threads, more=tuple(more), fixed_by=fixed_by)


def _dims(value, what):
    vals = list(value) if isinstance(value, (tuple, list)) else [value]
    if not 1 <= len(vals) <= 3:
        raise LearnerError(f"{what} must be a number or a tuple of 1 to 3 numbers, got {fmt(value)}.")
    for v in vals:
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
            fix = " use (n + t - 1) // t rather than n / t." if isinstance(v, (float, np.floating)) else ""
            raise LearnerError(
                f"{what} must be whole numbers (int), got {fmt(value)}:{fix or ' convert it with int(...).'}"
            )
        if v < 1:
            raise LearnerError(
                f"{what} must be at least 1, got {fmt(value)}: Numba refuses a launch with 0 "
                f"{'threads' if 'thread' in what else 'blocks'} (ValueError: LaunchConfig values must be >= 1)"
                + (ROUND_UP if what.startswith("blocks") else "")
                + "."
            )
    return tuple(int(v) for v in vals)


ROUND_UP = "; n // threads is 0 whenever n < threads, so round up: (n + threads - 1) // threads"


def validate_launch(cfg):
    """(grid, block) from the learner's launch, or a LearnerError naming what is wrong."""
    if not (isinstance(cfg, (tuple, list)) and len(cfg) == 2):
        raise LearnerError(f"your launch should give (blocks_per_grid, threads_per_block), got {fmt(cfg)}.")
    grid, block = _dims(cfg[0], "blocks per grid"), _dims(cfg[1], "threads per block")
    problem = block_problem(block) or grid_problem(grid)
    if problem:
        raise LearnerError(problem)
    return grid, block


def launch_for(ex, launch):
    """n -> (grid, block) for this check, validating a learner's launch on first use."""
    if ex.launch.kind != "learner":
        if launch is not None:
            raise LearnerError(f"{ex.id} picks the launch itself: call check(your_kernel) without launch=.")
        return ex.launch.config
    if launch is None:
        raise LearnerError(
            f"{ex.id} also checks your launch: call check(your_kernel, launch=your_launch) where "
            "your_launch(n) returns (blocks_per_grid, threads_per_block)."
        )
    if not_attempted(launch):
        raise NotAttempted()
    if callable(launch):

        def rule(n, case=0):  # the learner's launch: the same whatever the case
            try:
                cfg = launch(n)
            except CourseError:  # the watchdog stopped a loop in it
                raise
            except Exception as e:  # the learner's code may raise anything: one sentence names it
                raise LearnerError(f"your launch function raised {type(e).__name__}: {e} for n={n}.") from None
            if (
                isinstance(cfg, (tuple, list))
                and len(cfg) == 2
                and isinstance(cfg[0], (int, np.integer))
                and cfg[0] == 0 < n
            ):
                raise Failed(
                    f"your launch starts 0 blocks for n = {n} (fewer elements than one block), so the last, partial "
                    "block is skipped: round the number of blocks up, (n + t - 1) // t."
                )
            return validate_launch(cfg)

        judge_launch(ex.launch, launch, rule)
        return rule
    fixed_cfg = validate_launch(launch)
    judge_launch(ex.launch, launch, lambda n: fixed_cfg)
    return lambda n, case=0: fixed_cfg


JUDGE_SIZES = (1, 1000, 10**6, 10**9)  # n a learner's launch must fit, judged by arithmetic only


def _raw(launch, n):
    try:
        cfg = launch(n)
        return tuple(int(v) for v in cfg) if len(cfg) == 2 else None
    except CourseError:
        raise
    except Exception:  # the learner's code may raise anything; rule(n) reports it properly
        return None


def judge_launch(lr, launch, rule):
    """Raise Failed when the learner's launch does not fit every n in JUDGE_SIZES: too few threads,
    a spare block, a block size that is not a multiple of a warp (or not allowed), blocks and
    threads swapped, or the same launch whatever n. Nothing runs: (grid, block) is arithmetic."""
    same = not callable(launch)
    if not same:
        raw = [_raw(launch, n) for n in JUDGE_SIZES]
        if all(raw) and len({r[0] for r in raw}) == 1 and len({r[1] for r in raw}) > 1:
            raise Failed(
                f"your launch returns (threads, blocks): for n = {JUDGE_SIZES[2]:,} it gives {raw[2]}, but the order "
                "is (blocks_per_grid, threads_per_block); swap the two."
            )
    configs = [(n, int(np.prod(g)), int(np.prod(b))) for n in JUDGE_SIZES for g, b in [rule(n)]]
    for n, blocks, threads in reversed(configs) if same else configs:
        if blocks * threads < n:
            if same:
                raise Failed(
                    f"your launch is the same for every n: for n = {n:,} it starts only {blocks * threads:,} "
                    f"threads, so {n - blocks * threads:,} elements are never computed; write launch(n) as a "
                    "function returning ((n + threads - 1) // threads, threads)."
                )
            if _capped(configs):
                raise Failed(
                    f"your launch caps the grid at {configs[-1][1]:,} blocks (the same for n = {JUDGE_SIZES[-2]:,} "
                    f"and {JUDGE_SIZES[-1]:,}), so for n = {n:,} only {blocks * threads:,} threads start: this "
                    "exercise gives every element its own thread, so let the blocks grow with n, "
                    "(n + threads - 1) // threads (a capped grid needs a grid-stride loop, another exercise)."
                )
            raise Failed(
                f"for n = {n:,} your launch starts {blocks:,} blocks of {threads} threads, only {blocks * threads:,} "
                f"threads for {n:,} elements, so the last ones are never computed: round the number of blocks "
                "up, (n + threads - 1) // threads."
            )
    for n, blocks, threads in configs:
        if lr.block_sizes and threads not in lr.block_sizes:
            allowed = ", ".join(map(str, lr.block_sizes))
            raise Failed(f"your launch uses {threads} threads per block; this exercise asks for one of {allowed}.")
        if lr.warp_multiple and threads % WARP_SIZE:
            raise Failed(
                f"your launch uses blocks of {threads} thread{'s' if threads != 1 else ''}: a GPU runs threads in "
                f"warps of {WARP_SIZE}, so part of every warp sits idle; use a multiple of {WARP_SIZE} threads per "
                "block, such as 128 or 256."
            )
        if (blocks - 1) * threads >= n:
            need = (n + threads - 1) // threads
            start = "your launch is the same for every n: " if same else ""
            raise Failed(
                f"{start}for n = {n:,} your launch starts {blocks:,} blocks of {threads} threads, {blocks - need:,} "
                f"more than the {need:,} that cover every element; the extra blocks only start up and do nothing: "
                "use (n + threads - 1) // threads blocks."
            )


def _capped(configs) -> bool:
    """The number of blocks stopped growing with n (min(blocks, 4), a fixed grid): a cap, not a rounding slip."""
    (_, b1, t1), (_, b2, t2) = configs[-2], configs[-1]
    return b1 == b2 and t1 == t2 and b1 * t1 < JUDGE_SIZES[-1]


class NotAttempted(Exception):
    pass


class Failed(Exception):
    """A wrong answer found before any run (e.g. a launch of 0 blocks); the message says why."""
