"""How a kernel exercise is launched (one thread per element, a fixed grid, the learner's own
launch, 2-D grids), and the validation of a learner's launch against what a GPU accepts.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from ..errors import LearnerError
from ..limits import MAX_THREADS_PER_BLOCK
from .base import fmt, not_attempted, source


@dataclass(frozen=True)
class LaunchRule:
    """How a kernel exercise is launched: one thread per element, a fixed grid, or the learner's own."""

    kind: str  # "per_element" | "fixed" | "learner"
    threads: int = 32
    blocks: int = 1
    example: Callable = None  # learner kind: a correct launch function, n -> (blocks, threads)

    @property
    def example_source(self) -> str:
        return source(self.example).strip() if self.example else ""

    def config(self, n):
        if self.kind == "fixed":
            return (self.blocks,), (self.threads,)
        return ((n + self.threads - 1) // self.threads,), (self.threads,)


def per_element(threads=32) -> LaunchRule:
    """One thread per element: blocks = ceil(n / threads)."""
    return LaunchRule("per_element", threads)


def fixed(blocks, threads) -> LaunchRule:
    """A small fixed grid whatever n is (grid-stride loops must cover the rest)."""
    return LaunchRule("fixed", threads, blocks)


def learner_launch(example) -> LaunchRule:
    """The learner passes ``launch=f`` with f(n) -> (blocks_per_grid, threads_per_block)."""
    return LaunchRule("learner", example=example)


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

    def config(self, n):
        rows, cols = self.shape(n) if self.shape else (n, n)
        return ((cols + self.tile[0] - 1) // self.tile[0], (rows + self.tile[1] - 1) // self.tile[1]), self.block


def grid2d(block, tile=None, shape=None) -> Grid2D:
    """A 2-D launch of ``block`` = (x, y) threads, one block per ``tile`` (default: one thread per element)."""
    tile = tuple(tile or block)
    return Grid2D("per_element", threads=block[0] * block[1], tile=tile, block=tuple(block), shape=shape)


@dataclass(frozen=True)
class OneBlockPerRow(LaunchRule):
    """``n`` rows, one block of ``threads`` threads each (the block loops over its row)."""

    def config(self, n):
        return (n,), (self.threads,)


def one_block_per_row(threads) -> OneBlockPerRow:
    return OneBlockPerRow("per_element", threads)


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
                f"{what} must be at least 1, got {fmt(value)}: a launch with 0 "
                f"{'threads' if 'thread' in what else 'blocks'} runs nothing."
            )
    return tuple(int(v) for v in vals)


def validate_launch(cfg):
    """(grid, block) from the learner's launch, or a LearnerError naming what is wrong."""
    if not (isinstance(cfg, (tuple, list)) and len(cfg) == 2):
        raise LearnerError(f"your launch should give (blocks_per_grid, threads_per_block), got {fmt(cfg)}.")
    grid, block = _dims(cfg[0], "blocks per grid"), _dims(cfg[1], "threads per block")
    total = int(np.prod(block))
    if total > MAX_THREADS_PER_BLOCK:
        raise LearnerError(
            f"{total} threads per block is more than the {MAX_THREADS_PER_BLOCK} a CUDA block can hold: use 128 or 256."
        )
    if len(block) == 3 and block[2] > 64:
        raise LearnerError(f"a block can be at most 64 threads deep in z, got {block[2]}.")
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

        def rule(n):
            try:
                cfg = launch(n)
            except Exception as e:  # noqa: BLE001 - learner code
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

        return rule
    fixed_cfg = validate_launch(launch)
    return lambda n: fixed_cfg


class NotAttempted(Exception):
    pass


class Failed(Exception):
    """A wrong answer found before any run (e.g. a launch of 0 blocks); the message says why."""
