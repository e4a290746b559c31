"""Launch geometry: which thread handles which element, as plain arithmetic.

Everything here is plain arithmetic on the CUDA execution model (no Numba), so notebook 01
can show the model before any kernel exists. Conventions follow Numba's ``cuda.grid``:
x varies fastest; for a 2D array of shape (rows, cols) the course uses
``col = blockIdx.x * blockDim.x + threadIdx.x`` and ``row = blockIdx.y * blockDim.y + threadIdx.y``
so neighbouring threads touch neighbouring elements of a row (row-major memory).
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass

import numpy as np

from ..errors import LearnerError, shown
from ..limits import MAX_THREADS_PER_BLOCK, WARP_SIZE

# Pictures and counts are worked out thread by thread: beyond this many a launch is refused in one
# sentence instead of filling the memory (a real GPU runs more; the arithmetic is the same).
MAX_MODELLED = 1 << 24


def blocks_for(n: int, threads_per_block: int) -> int:
    """Ceiling division: the fewest blocks that give every element a thread."""
    n = _whole("n", n, minimum=0)
    return (n + _positive_int("threads_per_block", threads_per_block) - 1) // threads_per_block


def _whole(name: str, value, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < minimum:
        kind = "a positive whole number" if minimum == 1 else f"a whole number of at least {minimum}"
        raise LearnerError(f"{name} must be {kind}, got {shown(value)}.")
    return int(value)


def _positive_int(name: str, value) -> int:
    return _whole(name, value, minimum=1)


def _pair(name: str, value, example: str) -> tuple:
    """Two numbers given as a tuple (or list, or array): anything else is said, with an example."""
    try:
        ok = not isinstance(value, (str, bytes)) and len(value) == 2
    except Exception:  # no usable len(): not a pair
        ok = False
    if not ok:
        raise LearnerError(f"{name} must be a pair of whole numbers such as {example}, got {shown(value)}.")
    return value[0], value[1]


def _modelled(launch: Launch) -> Launch:
    if max(launch.threads, launch.elements) > MAX_MODELLED:
        raise LearnerError(
            f"this launch has {launch.threads:,} threads over {launch.elements:,} elements; the geometry helpers "
            f"draw and count thread by thread, so use at most {MAX_MODELLED:,} of each here."
        )
    return launch


@dataclass(frozen=True)
class Launch:
    """A launch over an array: shape (rows, cols) in 2D or (n,) in 1D, block and grid as (x, y)."""

    shape: tuple[int, ...]
    block: tuple[int, int]  # threads per block (x, y)
    grid: tuple[int, int]  # blocks per grid (x, y)

    def __post_init__(self):
        # built by launch_1d / launch_2d, which check their arguments; a Launch made by hand gets a sentence too
        for name, least in (("shape", 0), ("block", 1), ("grid", 0)):  # a 0-block grid is drawn as refused
            v = getattr(self, name)
            if not (
                isinstance(v, tuple)
                and 1 <= len(v) <= 3
                and all(isinstance(k, numbers.Integral) and not isinstance(k, bool) and k >= least for k in v)
            ):
                raise LearnerError(
                    f"Launch's {name} must be a tuple of whole numbers of at least {least}, such as (32, 8), not "
                    f"{shown(v)}: launch_1d(n, threads) and launch_2d(shape, block) build one for you."
                )

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def threads(self) -> int:
        return self.block[0] * self.block[1] * self.grid[0] * self.grid[1]

    @property
    def elements(self) -> int:
        return int(np.prod(self.shape))

    def thread_coords(self) -> np.ndarray:
        """One row per launched thread: blockIdx.x, blockIdx.y, threadIdx.x, threadIdx.y, x, y."""
        bx, by, tx, ty = np.meshgrid(
            np.arange(self.grid[0]),
            np.arange(self.grid[1]),
            np.arange(self.block[0]),
            np.arange(self.block[1]),
            indexing="ij",
        )
        bx, by, tx, ty = (a.ravel() for a in (bx, by, tx, ty))
        x = bx * self.block[0] + tx
        y = by * self.block[1] + ty
        return np.stack([bx, by, tx, ty, x, y], axis=1)

    def owner(self) -> np.ndarray:
        """For each element, how many threads handle it (0 means skipped, the floor-division bug)."""
        c = self.thread_coords()
        x, y = c[:, 4], c[:, 5]
        if self.ndim == 1:
            hit = x[x < self.shape[0]]
            return np.bincount(hit, minlength=self.shape[0])
        rows, cols = self.shape
        ok = (x < cols) & (y < rows)
        counts = np.zeros(self.shape, dtype=int)
        np.add.at(counts, (y[ok], x[ok]), 1)
        return counts

    def idle(self) -> int:
        """Threads whose index falls outside the array (they must be stopped by the bounds guard)."""
        c = self.thread_coords()
        if self.ndim == 1:
            return int(np.sum(c[:, 4] >= self.shape[0]))
        return int(np.sum((c[:, 4] >= self.shape[1]) | (c[:, 5] >= self.shape[0])))

    def skipped(self) -> int:
        return int(np.sum(self.owner() == 0))

    def formula(self) -> str:
        if self.ndim == 1:
            return "i = blockIdx.x * blockDim.x + threadIdx.x    # = cuda.grid(1)"
        return (
            "col = blockIdx.x * blockDim.x + threadIdx.x\n"
            "row = blockIdx.y * blockDim.y + threadIdx.y    # col, row = cuda.grid(2)"
        )

    def describe(self) -> str:
        dims = "x".join(map(str, self.shape))
        blk = self.block[0] if self.ndim == 1 else f"({self.block[0]}, {self.block[1]})"
        grd = self.grid[0] if self.ndim == 1 else f"({self.grid[0]}, {self.grid[1]})"
        text = f"{dims} elements, {grd} blocks of {blk} threads = {self.threads} threads; {self.idle()} idle"
        if 0 in self.grid:
            return text + (
                "; a GPU refuses a launch with 0 blocks (Numba raises ValueError: LaunchConfig.grid values "
                "must be >= 1), so NO element is handled: round the block count up, (n + t - 1) // t"
            )
        s = self.skipped()
        if s:
            text += f"; {s} element{'s' if s != 1 else ''} NOT handled by any thread (grid too small)"
        per = self.block[0] * self.block[1]
        warps = -(-per // 32)
        text += f"; {warps} warp{'s' if warps != 1 else ''} of 32 per block"
        if per % 32:
            text += f" (the last one has {per % 32} threads: a multiple of 32 fills every warp)"
        return text


def block_warps(block) -> np.ndarray:
    """Warp number of each thread of one block, as an array indexed [threadIdx.y, threadIdx.x].

    CUDA numbers a block's threads linearly with x fastest, ``threadIdx.y * blockDim.x + threadIdx.x``,
    and cuts that order into warps of 32: a (16, 8) block is 4 warps of 2 rows each; a (10, 10) block is
    4 warps, the last one holding only 4 threads. A 1D block is ``(t, 1)``.
    """
    bx, by = _pair("block", block, "(16, 8)")
    bx, by = _positive_int("block x", bx), _positive_int("block y", by)
    return np.arange(bx * by).reshape(by, bx) // WARP_SIZE


def warp_sizes(block) -> list[int]:
    """Threads in each warp of one block, warp 0 first: only the last one can be partly filled."""
    return np.bincount(block_warps(block).ravel()).tolist()


def launch_1d(n: int, threads_per_block: int, blocks: int | None = None) -> Launch:
    """1D launch over n elements; blocks defaults to the ceiling division."""
    n = _positive_int("n", n)
    t = _positive_int("threads_per_block", threads_per_block)
    if t > MAX_THREADS_PER_BLOCK:
        raise LearnerError(f"threads_per_block={t} is more than the {MAX_THREADS_PER_BLOCK} a CUDA block can hold.")
    # 0 blocks is allowed here (n // t is 0 whenever n < t): the picture shows what a GPU does with it
    b = blocks_for(n, t) if blocks is None else _whole("blocks", blocks, minimum=0)
    return _modelled(Launch((n,), (t, 1), (b, 1)))


def launch_2d(shape: tuple[int, int], block: tuple[int, int], grid: tuple[int, int] | None = None) -> Launch:
    """2D launch over an array of shape (rows, cols); block and grid are (x, y) = (along cols, along rows)."""
    rows, cols = _pair("shape", shape, "(rows, cols) = (20, 37)")
    rows, cols = _positive_int("rows", rows), _positive_int("cols", cols)
    bx, by = _pair("block", block, "(16, 16)")
    bx, by = _positive_int("block x", bx), _positive_int("block y", by)
    if bx * by > MAX_THREADS_PER_BLOCK:
        raise LearnerError(f"a {bx}x{by} block has {bx * by} threads, more than the {MAX_THREADS_PER_BLOCK} allowed.")
    g = (
        (blocks_for(cols, bx), blocks_for(rows, by))
        if grid is None
        else tuple(_whole(f"grid {axis}", v, minimum=0) for axis, v in zip("xy", _pair("grid", grid, "(3, 2)")))
    )
    return _modelled(Launch((rows, cols), (bx, by), g))
