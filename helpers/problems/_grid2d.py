"""A 2-D launch rule for kernel exercises on matrices (notebooks 05-07).

The engine's rules (``per_element``, ``fixed``) launch 1-D grids; a matrix exercise needs
``griddim = (x blocks, y blocks)`` and ``blockdim = (x threads, y threads)``. ``n`` is the
exercise's size (matrix rows); ``cols(n)`` gives the columns, so a non-square shape catches
swapped indices.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from helpers.exercises import LaunchRule


@dataclass(frozen=True)
class Grid2D(LaunchRule):
    """One block per (tile_x x tile_y) tile of an (n x cols(n)) matrix, blocks of ``block`` threads."""

    tile: tuple = (32, 32)  # elements covered by one block, (x = columns, y = rows)
    block: tuple = (32, 8)  # threads per block, (x, y)
    cols: Callable = None  # n -> number of columns (default: n)

    def config(self, n):
        cols = self.cols(n) if self.cols else n
        return ((cols + self.tile[0] - 1) // self.tile[0], (n + self.tile[1] - 1) // self.tile[1]), self.block


def grid2d(tile, block, cols=None) -> Grid2D:
    return Grid2D("per_element", threads=block[0] * block[1], tile=tuple(tile), block=tuple(block), cols=cols)
