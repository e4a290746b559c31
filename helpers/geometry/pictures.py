"""Pictures of a launch before any kernel runs (notebook 01, the grid explorer): blocks,
threads, which element each thread handles; idle threads grey, skipped elements red.
"""

import textwrap
import warnings

import numpy as np

from .._style import BLOCK_COLOURS, OTHER_BLOCK, PROBLEM, finish, pyplot
from ..errors import LearnerError, shown
from ..limits import WARP_SIZE
from .launch import block_warps, warp_sizes

IDLE = OTHER_BLOCK
IDLE_ODD = "#bdbdbd"  # idle threads of odd-numbered warps: the warp bands go on over the idle threads
SKIPPED = PROBLEM
MAX_DRAWN = 1024  # beyond this a per-thread drawing is unreadable; draw blocks only
MAX_WARP_CELLS = 128 * 128  # 2D: above this many cells, warp outlines are too small to see (and slow)
MAX_WARP_LABELS = 64  # more warp numbers than this: only block 0's are numbered
MAX_HATCHED = 512  # hatched rectangles (partly filled warps) drawn at most: each costs about a millisecond
WARP_LINE = "#252525"
WARP_BANDS = ("#f7f7f7", "#cccccc")  # 1D: even and odd warps
_COLOURS = [c for c in BLOCK_COLOURS if c != "#7f7f7f"]  # no grey block: grey means idle here
_LABEL_BOX = {"boxstyle": "round,pad=0.1", "facecolor": "white", "edgecolor": "none", "alpha": 0.8}


def warp_grid(launch):
    """What the 2D picture draws per cell: (block, warp), two arrays of the picture's shape (rows, cols).

    `block` is the linear block number (``blockIdx.y * gridDim.x + blockIdx.x``) of the thread that
    sits on that cell, `warp` that thread's warp in its block (``block_warps``); both are -1 where no
    thread was launched. Cells past the array are idle threads, still in their warps.
    """
    rows, cols = launch.shape
    (bx, by), (gx, gy) = launch.block, launch.grid
    span_y, span_x = max(rows, gy * by), max(cols, gx * bx)
    yy, xx = np.mgrid[0:span_y, 0:span_x]
    launched = (xx < gx * bx) & (yy < gy * by)
    block = np.where(launched, (yy // by) * gx + xx // bx, -1)
    warp = np.where(launched, block_warps((bx, by))[yy % by, xx % bx], -1)
    return block, warp


def warp_labels(launch, blocks=None):
    """Where the picture numbers each warp: (x, y, text) at the middle thread of the warp, in the
    picture's coordinates (x along columns, y down the rows, cell centres at .5).

    ``w3`` is warp 3 of its block; ``w3 (4)`` a warp holding only 4 threads (the last one of a block
    whose size is not a multiple of 32). 1D launches count along x only (y is 0). `blocks`: linear
    block numbers to label (default: every block).
    """
    (bx, by), (gx, gy) = launch.block, launch.grid
    sizes = warp_sizes((bx, by))
    out = []
    warps = block_warps((bx, by))
    spots = []  # in one block: the warp's centre when a thread of that warp sits there, else its middle thread
    for w, count in enumerate(sizes):
        ys, xs = np.nonzero(warps == w)
        x, y = int(xs.mean()), int(ys.mean())
        if warps[y, x] != w:
            middle = w * WARP_SIZE + count // 2
            x, y = middle % bx, middle // bx
        spots.append((x + 0.5, y + 0.5, f"w{w}" if count == WARP_SIZE else f"w{w} ({count})"))
    for b in range(gx * gy) if blocks is None else blocks:
        x0, y0 = (b % gx) * bx, (b // gx) * by
        out += [(x0 + x, y0 + y, text) for x, y, text in spots]
    return out


def _partial_warp_runs(launch):
    """Rectangles (x, y, width) of one row each covering the partly filled last warp of every block."""
    (bx, by), (gx, gy) = launch.block, launch.grid
    first = (len(warp_sizes((bx, by))) - 1) * WARP_SIZE  # linear id of its first thread
    runs, lin = [], first
    while lin < bx * by:  # the warp's threads, row by row inside one block
        y, x = divmod(lin, bx)
        width = min(bx - x, bx * by - lin)
        runs.append((x, y, width))
        lin += width
    return [(i * bx + x, j * by + y, w) for j in range(gy) for i in range(gx) for x, y, w in runs]


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
    fig_width = min(14, 2 + width * 0.28)
    if ax is None:
        fig, ax = pyplot().subplots(figsize=(fig_width, 3.1))
    fig = fig or ax.figure
    shown = min(width, MAX_DRAWN)
    labels = _label_ok(shown)
    # threads (top row), grouped by block
    for g in range(min(total, shown)):
        blk = g // t
        idle = g >= n
        colour = IDLE if idle else _COLOURS[blk % len(_COLOURS)]
        ax.add_patch(Rectangle((g, 1.3), 0.92, 0.9, facecolor=colour, edgecolor="white", hatch="//" if idle else None))
        if labels:
            ax.text(g + 0.46, 1.75, str(g % t), ha="center", va="center", fontsize=7)
    # warps (a band over the threads): 32 threads each, counted inside each block; the last may be partly filled
    sizes = warp_sizes((t, 1))
    cell_in = (fig_width - 1.6) / max(shown, 1)
    named = [(x, text) for x, _, text in warp_labels(launch) if x < shown]
    for k, (x, text) in enumerate(named):
        w = k % len(sizes)
        x0 = (k // len(sizes)) * t + w * WARP_SIZE
        count = min(sizes[w], shown - x0)
        partial = sizes[w] < WARP_SIZE
        ax.add_patch(
            Rectangle(
                (x0 - 0.04, 2.27), count, 0.28, facecolor=WARP_BANDS[w % 2], edgecolor=WARP_LINE, lw=0.6,
                hatch="..." if partial else None,
            )
        )  # fmt: skip
        if count * cell_in >= 0.075 * len(text) + 0.05:  # the number fits inside the band
            ax.text(x, 2.41, text, ha="center", va="center", fontsize=7, bbox=_LABEL_BOX)
    for blk in range(b):
        x0 = blk * t
        if x0 >= shown:
            break
        ax.add_patch(Rectangle((x0 - 0.04, 1.25), min(t, shown - x0), 1.0, fill=False, edgecolor="black", lw=1.2))
        ax.text(x0 + min(t, shown - x0) / 2, 2.68, f"block {blk}", ha="center", fontsize=8)
    # elements (bottom row), coloured by the block that handles them
    for i in range(min(n, shown)):
        handled = i < total
        colour = _COLOURS[(i // t) % len(_COLOURS)] if handled else SKIPPED
        ax.add_patch(Rectangle((i, 0), 0.92, 0.9, facecolor=colour, edgecolor="white", alpha=0.55 if handled else 1))
        if labels:
            ax.text(i + 0.46, 0.45, str(i), ha="center", va="center", fontsize=7)
    ax.text(-0.5, 1.75, "threads\n(threadIdx.x)", ha="right", va="center", fontsize=8)
    ax.text(-0.5, 0.45, "elements\n(index i)", ha="right", va="center", fontsize=8)
    ax.text(-0.5, 2.41, "warps", ha="right", va="center", fontsize=8)
    ax.set_xlim(-0.2, shown + 0.2)
    ax.set_ylim(-0.3, 3.05)
    ax.set_axis_off()
    idle, skipped = launch.idle(), launch.skipped()
    title = f"{b} block(s) x {t} threads = {total} threads for {n} elements: {idle} idle"
    if skipped:
        title += f", {skipped} element(s) never handled"
    if b == 0:
        title += ": a GPU refuses a launch with 0 blocks"
    if shown < width:
        title += f"  (first {shown} drawn)"
    warps_line = _warps_line(sizes, "", hatched=True)
    lines = textwrap.wrap(title, int(fig_width * 13)) + [warps_line]
    ax.set_title("\n".join(lines), fontsize=10, color=SKIPPED if skipped else "black")
    if fig.axes == [ax]:
        fig.set_figheight(2.6 + 0.2 * len(lines))
    handles = [
        Patch(facecolor=IDLE, hatch="//", label="idle thread (i >= n)"),
        Patch(facecolor=SKIPPED, label="element no thread handles"),
        Patch(facecolor=WARP_BANDS[1], edgecolor=WARP_LINE, label="w = a warp (32 threads) of its block"),
    ]
    if sizes[-1] < WARP_SIZE:
        handles.append(Patch(facecolor=WARP_BANDS[0], edgecolor=WARP_LINE, hatch="...", label="partly filled warp"))
    ax.legend(
        handles=handles,
        loc="upper right",
        bbox_to_anchor=(1, -0.02),
        ncol=4,
        fontsize=8,
        frameon=False,
    )
    _fit(fig, ax)
    return finish(fig)


def _draw_2d(launch, ax=None):
    from matplotlib.collections import LineCollection, PolyCollection
    from matplotlib.colors import to_rgb
    from matplotlib.patches import Patch, Rectangle
    from matplotlib.ticker import MaxNLocator

    rows, cols = launch.shape
    bx, by = launch.block
    gx, gy = launch.grid
    span_x, span_y = max(cols, gx * bx), max(rows, gy * by)
    fig = None
    side = min(9, max(5.5, 2 + max(span_x, span_y) * 0.22))  # wide enough for the title and the legend
    height = min(7, side * span_y / max(span_x, 1) + 0.6)  # tall grids must still fit a screen
    if ax is None:
        fig, ax = pyplot().subplots(figsize=(side, height))
    fig = fig or ax.figure
    block, warp = warp_grid(launch)
    yy, xx = np.mgrid[0:span_y, 0:span_x]
    launched = block >= 0
    inside = (xx < cols) & (yy < rows)
    odd = warp % 2 == 1  # warps alternate light and dark: a band per warp
    colours = np.array([to_rgb(c) for c in _COLOURS])
    mix = np.where(odd, 0.82, 0.5)[..., None]
    img = np.ones((span_y, span_x, 3))
    busy = launched & inside
    img[busy] = (colours[block[busy] % len(colours)] * mix[busy] + (1 - mix[busy]))[:, :3]
    img[launched & ~inside & ~odd] = to_rgb(IDLE)
    img[launched & ~inside & odd] = to_rgb(IDLE_ODD)
    img[~launched & inside] = to_rgb(SKIPPED)
    ax.imshow(img, origin="upper", interpolation="nearest", extent=(0, span_x, span_y, 0))
    sizes = warp_sizes((bx, by))
    partial = sizes[-1] < WARP_SIZE
    cell_in = min((side - 1.4) / span_x, max(height - 1.6, 0.4) / span_y)  # about: one cell, in inches
    warps_drawn = span_x * span_y <= MAX_WARP_CELLS
    runs = _partial_warp_runs(launch) if partial and warps_drawn else []
    hatched = 0 < len(runs) <= MAX_HATCHED
    if warps_drawn:
        # warp outlines: edges between two cells of one block that are in different warps
        same_block = block[:, :-1] == block[:, 1:]
        v = np.argwhere(same_block & (warp[:, :-1] != warp[:, 1:]) & (block[:, 1:] >= 0))
        same_block = block[:-1, :] == block[1:, :]
        h = np.argwhere(same_block & (warp[:-1, :] != warp[1:, :]) & (block[1:, :] >= 0))
        segments = [((x + 1, y), (x + 1, y + 1)) for y, x in v] + [((x, y + 1), (x + 1, y + 1)) for y, x in h]
        ax.add_collection(LineCollection(segments, colors=WARP_LINE, linewidths=1.0, zorder=3))
        if hatched:  # the last warp of every block is partly filled: hatch its threads
            boxes = [((x, y), (x + w, y), (x + w, y + 1), (x, y + 1)) for x, y, w in runs]
            ax.add_collection(
                PolyCollection(boxes, facecolors="none", edgecolors=WARP_LINE, hatch="...", linewidths=0, zorder=2)
            )
        # numbers: every block's warps when there is room, else block 0's only
        every = cell_in >= 0.1 and gx * gy * len(sizes) <= MAX_WARP_LABELS
        labelled = None if every else [0] if cell_in >= 0.08 and gx * gy else []
        size = 7 if cell_in >= 0.2 else 6
        for x, y, text in warp_labels(launch, labelled):
            ax.text(
                x, y, text, ha="center", va="center", fontsize=size, zorder=4, in_layout=False, bbox=_LABEL_BOX
            )  # fmt: skip
    ax.add_patch(Rectangle((0, 0), cols, rows, fill=False, edgecolor="black", lw=2, zorder=5))
    for j in range(gy + 1):
        ax.axhline(j * by, color="white", lw=2.5, zorder=3.5)
    for i in range(gx + 1):
        ax.axvline(i * bx, color="white", lw=2.5, zorder=3.5)
    ax.set_xlim(0, span_x)
    ax.set_ylim(span_y, 0)
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
    warps_line = _warps_line(sizes, ", x fastest", hatched)
    if not warps_drawn:
        warps_line += " (too many threads to outline the warps)"
    title = "\n".join(textwrap.wrap(title, int(side * 12)) + [warps_line])
    ax.set_title(title, fontsize=10, color=SKIPPED if skipped else "black")
    handles = [
        Patch(facecolor=IDLE, label="idle thread (outside the array)"),
        Patch(facecolor=SKIPPED, label="element no thread handles"),
        Patch(facecolor="none", edgecolor="black", label="the array"),
        Patch(facecolor="none", edgecolor=WARP_LINE, label="w = one warp (32 threads) of its block"),
    ]
    if hatched:
        handles.append(Patch(facecolor="none", edgecolor=WARP_LINE, hatch="...", label="partly filled warp"))
    ncol = 3 if side >= 7.5 else 2
    ax.legend(handles=handles, loc="upper center", bbox_to_anchor=(0.5, -0.12), ncol=ncol, fontsize=8, frameon=False)
    _fit(fig, ax)
    return finish(fig)


def _warps_line(sizes, order, hatched):
    """The title's line on warps: how many per block, and the partly filled one."""
    if len(sizes) == 1:
        line = "1 warp per block" + order
        if sizes[0] < WARP_SIZE:
            line += f", with only {sizes[0]} of its 32 threads"
    else:
        line = f"{len(sizes)} warps per block{order}"
        if sizes[-1] < WARP_SIZE:
            line += f"; the last one has {sizes[-1]} of 32 threads"
    return line + (" (hatched)" if hatched and sizes[-1] < WARP_SIZE else "")


def _fit(fig, ax):
    """On a figure of our own, make room for the title and the legend under the axes."""
    if fig.axes == [ax]:
        with warnings.catch_warnings():  # where it cannot, the picture is still whole: no warning for a learner
            warnings.simplefilter("ignore")
            fig.tight_layout()
