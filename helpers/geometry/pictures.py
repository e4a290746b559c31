"""Pictures of a launch before any kernel runs (notebook 01, the grid explorer): blocks,
threads, which element each thread handles; idle threads grey, skipped elements red.
"""

import numpy as np

from .._style import BLOCK_COLOURS, OTHER_BLOCK, PROBLEM, finish, pyplot
from ..errors import LearnerError, shown

IDLE = OTHER_BLOCK
SKIPPED = PROBLEM
MAX_DRAWN = 1024  # beyond this a per-thread drawing is unreadable; draw blocks only


def _label_ok(count: int) -> bool:
    return count <= 64


def draw_launch(launch, ax=None):
    """Picture of a `helpers.geometry.Launch`.

    1D: a row of threads per block over the array. 2D: the array as a grid coloured by block.
    """
    from .launch import Launch

    if not isinstance(launch, Launch):
        raise LearnerError(
            f"draw_launch needs a launch made by geometry.launch_1d(...) or geometry.launch_2d(...), "
            f"not {shown(launch)}."
        )
    if ax is not None and not hasattr(ax, "figure"):
        raise LearnerError(f"ax must be a matplotlib Axes (or left out), not {shown(ax)}.")
    if launch.ndim == 1:
        return _draw_1d(launch, ax)
    return _draw_2d(launch, ax)


def _draw_1d(launch, ax=None):
    from matplotlib.patches import Patch, Rectangle

    n = launch.shape[0]
    t, b = launch.block[0], launch.grid[0]
    total = t * b
    width = max(total, n)
    fig = None
    if ax is None:
        fig, ax = pyplot().subplots(figsize=(min(14, 2 + width * 0.28), 2.8))
    fig = fig or ax.figure
    shown = min(width, MAX_DRAWN)
    labels = _label_ok(shown)
    # threads (top row), grouped by block
    for g in range(min(total, shown)):
        blk = g // t
        idle = g >= n
        colour = IDLE if idle else BLOCK_COLOURS[blk % len(BLOCK_COLOURS)]
        ax.add_patch(Rectangle((g, 1.3), 0.92, 0.9, facecolor=colour, edgecolor="white", hatch="//" if idle else None))
        if labels:
            ax.text(g + 0.46, 1.75, str(g % t), ha="center", va="center", fontsize=7)
    for blk in range(b):
        x0 = blk * t
        if x0 >= shown:
            break
        ax.add_patch(Rectangle((x0 - 0.04, 1.25), min(t, shown - x0), 1.0, fill=False, edgecolor="black", lw=1.2))
        ax.text(x0 + min(t, shown - x0) / 2, 2.45, f"block {blk}", ha="center", fontsize=8)
    # elements (bottom row), coloured by the block that handles them
    for i in range(min(n, shown)):
        handled = i < total
        colour = BLOCK_COLOURS[(i // t) % len(BLOCK_COLOURS)] if handled else SKIPPED
        ax.add_patch(Rectangle((i, 0), 0.92, 0.9, facecolor=colour, edgecolor="white", alpha=0.55 if handled else 1))
        if labels:
            ax.text(i + 0.46, 0.45, str(i), ha="center", va="center", fontsize=7)
    ax.text(-0.5, 1.75, "threads\n(threadIdx.x)", ha="right", va="center", fontsize=8)
    ax.text(-0.5, 0.45, "elements\n(index i)", ha="right", va="center", fontsize=8)
    ax.set_xlim(-0.2, shown + 0.2)
    ax.set_ylim(-0.3, 2.8)
    ax.set_axis_off()
    idle, skipped = launch.idle(), launch.skipped()
    title = f"{b} block(s) x {t} threads = {total} threads for {n} elements: {idle} idle"
    if skipped:
        title += f", {skipped} element(s) never handled"
    if b == 0:
        title += ": a GPU refuses a launch with 0 blocks"
    if shown < width:
        title += f"  (first {shown} drawn)"
    ax.set_title(title, fontsize=10, color=SKIPPED if skipped else "black")
    ax.legend(
        handles=[
            Patch(facecolor=IDLE, hatch="//", label="idle thread (i >= n)"),
            Patch(facecolor=SKIPPED, label="element no thread handles"),
        ],
        loc="upper right",
        bbox_to_anchor=(1, -0.02),
        ncol=2,
        fontsize=8,
        frameon=False,
    )
    return finish(fig)


def _draw_2d(launch, ax=None):
    from matplotlib.colors import to_rgb
    from matplotlib.patches import Patch, Rectangle
    from matplotlib.ticker import MaxNLocator

    rows, cols = launch.shape
    bx, by = launch.block
    gx, gy = launch.grid
    span_x, span_y = max(cols, gx * bx), max(rows, gy * by)
    fig = None
    if ax is None:
        side = min(9, 2 + max(span_x, span_y) * 0.22)
        height = min(7, side * span_y / max(span_x, 1) + 0.6)  # tall grids must still fit a screen
        fig, ax = pyplot().subplots(figsize=(side, height))
    fig = fig or ax.figure
    img = np.ones((span_y, span_x, 3))
    yy, xx = np.mgrid[0:span_y, 0:span_x]
    launched = (xx < gx * bx) & (yy < gy * by)
    inside = (xx < cols) & (yy < rows)
    block_id = (yy // by) * gx + (xx // bx)
    colours = np.array([to_rgb(c) for c in BLOCK_COLOURS])
    img[launched & inside] = colours[block_id[launched & inside] % len(colours)] * 0.6 + 0.4
    img[launched & ~inside] = to_rgb(IDLE)
    img[~launched & inside] = to_rgb(SKIPPED)
    ax.imshow(img, origin="upper", interpolation="nearest", extent=(0, span_x, span_y, 0))
    ax.add_patch(Rectangle((0, 0), cols, rows, fill=False, edgecolor="black", lw=2))
    for j in range(gy + 1):
        ax.axhline(j * by, color="white", lw=1.2)
    for i in range(gx + 1):
        ax.axvline(i * bx, color="white", lw=1.2)
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.yaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_xlabel("col = blockIdx.x * blockDim.x + threadIdx.x")
    ax.set_ylabel("row = blockIdx.y * blockDim.y + threadIdx.y")
    skipped = launch.skipped()
    title = f"grid ({gx}, {gy}) of ({bx}, {by}) blocks over a {rows}x{cols} array: {launch.idle()} idle threads"
    if skipped:
        title += f", {skipped} elements never handled"
    if 0 in launch.grid:
        title += ": a GPU refuses a launch with 0 blocks"
    ax.set_title(title, fontsize=10, color=SKIPPED if skipped else "black")
    ax.legend(
        handles=[
            Patch(facecolor=IDLE, label="idle thread (outside the array)"),
            Patch(facecolor=SKIPPED, label="element no thread handles"),
            Patch(facecolor="none", edgecolor="black", label="the array"),
        ],
        loc="upper center",
        bbox_to_anchor=(0.5, -0.12),
        ncol=3,
        fontsize=8,
        frameon=False,
    )
    return finish(fig)
