"""Notebook 04 - 2D grids and images: one thread per pixel, ``col, row = cuda.grid(2)``.

The exercise engine sizes problems by one number n. Here each n stands for an image shape,
drawn so that rows != cols (a swapped row/column index then fails) and so that no side is a
multiple of the 8x8 block (the guard is needed in both dimensions). The launch is always the
correct ceiling-division 2D grid: these exercises are about the kernel, not the launch.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np
from numba import cuda

from helpers.exercises import In, KernelExercise, LaunchRule, Out, register

BLOCK = (8, 8)  # (x, y) = (along columns, along rows)
_SHAPES: dict[int, tuple[int, int]] = {}  # n (pixels) -> (rows, cols); filled by _image_sizes


def _shape(n: int) -> tuple[int, int]:
    if n not in _SHAPES:  # any n the engine asks about before drawing sizes (e.g. to read the block size)
        cols = max(1, int(np.sqrt(n * 1.5)))
        _SHAPES[n] = (max(1, n // cols), cols)
    return _SHAPES[n]


def _image_sizes(rng, threads):
    """Three shapes: smaller than one block, a few blocks with partial edges, a wide one."""
    picks = []
    for rows_range, cols_range in (((2, 7), (3, 8)), ((9, 16), (17, 30)), ((17, 26), (33, 47))):
        while True:
            rows, cols = int(rng.integers(*rows_range)), int(rng.integers(*cols_range))
            n = rows * cols
            if rows != cols and rows % BLOCK[1] and cols % BLOCK[0] and n not in picks:
                if _SHAPES.get(n, (rows, cols)) == (rows, cols):
                    break
        _SHAPES[n] = (rows, cols)
        picks.append(n)
    return picks


@dataclass(frozen=True)
class _Grid2D(LaunchRule):
    """One thread per pixel: blocks of BLOCK threads, grid = ceil(cols / bx) x ceil(rows / by)."""

    def config(self, n):
        rows, cols = _shape(n)
        bx, by = BLOCK
        return ((cols + bx - 1) // bx, (rows + by - 1) // by), (bx, by)


_LAUNCH = _Grid2D("per_element", threads=BLOCK[0] * BLOCK[1])


@dataclass(eq=False, repr=False)
class ImageExercise(KernelExercise):
    """A KernelExercise whose messages speak in (row, col) rather than flat indices.

    The engine describes outputs as flat arrays. For an image that hides the pattern, so a
    "never written" result is traced again here on the same shape and described in 2D (with
    a picture of which pixels were written), and "out[k] is" becomes "out[row, col] is".
    """

    def _grade(self, kernel, rng, launch=None):
        status, message, picture, metrics = super()._grade(kernel, rng, launch)
        if status == "passed":
            message = re.sub(r"correct for n = ([\d, ]+)", lambda m: "correct on images of " + ", ".join(
                "{}x{}".format(*_SHAPES[int(k)]) if int(k) in _SHAPES else k for k in m.group(1).split(", ")), message)
        if status != "failed":
            return status, message, picture, metrics
        m = re.search(r"(\d+) of (\d+) (?:elements )?", message)
        n = int(m.group(2)) if m else None
        if n in _SHAPES and "never written" in message and not message.startswith("the CPU tracer"):
            described = _describe_unwritten(self, kernel, n)
            if described:
                return status, described[0], described[1], metrics
        if n in _SHAPES:
            cols = _SHAPES[n][1]
            message = re.sub(r"^(\w+)\[(\d+)\] is",
                             lambda k: f"{k.group(1)}[{int(k.group(2)) // cols}, {int(k.group(2)) % cols}] is", message)
            message = message.replace(f"of {n} elements", f"of {n} pixels of the {_SHAPES[n][0]}x{cols} image", 1)
        return status, message, picture, metrics


def _describe_unwritten(ex, kernel, n):
    """Trace the learner's kernel on an image of the failing shape; say which pixels stay unwritten."""
    from matplotlib.colors import ListedColormap
    from matplotlib.figure import Figure

    from helpers.trace import trace

    rows, cols = _SHAPES[n]
    rng = np.random.default_rng(0)
    args = []
    for a in ex.args:
        shape = a.shape(n) if callable(a.shape) else a.shape
        args.append(rng.uniform(0, 1, shape).astype(a.dtype) if a.role == "in" else np.full(shape, np.nan, a.dtype))
    out_pos = [p for p, a in enumerate(ex.args) if a.role == "out"][0]
    grid, block = ex.launch.config(n)
    try:
        trace(kernel, grid, block, *args)
    except Exception:  # noqa: BLE001 - the engine's own message stands
        return None
    missing = np.isnan(args[out_pos])
    if not missing.any():
        return None
    name = ex.args[out_pos].name
    written = ~missing
    rr, cc = np.nonzero(written)
    gx, gy = grid[0] * block[0], grid[1] * block[1]
    yy, xx = np.mgrid[0:rows, 0:cols]
    if written.any() and rr.max() < block[1] and cc.max() < block[0]:
        cause = ("only the first block's pixels were written: add the block offset, "
                 "col, row = cuda.grid(2) (not cuda.threadIdx.x and .y alone).")
    elif np.array_equal(written, (yy < gx) & (xx < gy)):
        cause = ("row and col look swapped: x runs along columns, so write col, row = cuda.grid(2); "
                 "the grid's x threads cover the columns, its y threads the rows.")
    else:
        cause = "does every pixel get exactly one thread? col, row = cuda.grid(2), guarded by row < rows and col < cols."
    message = (f"{int(missing.sum())} of {n} pixels of {name} were never written on the {rows}x{cols} image "
               f"(grey in the picture, first at {name}[{int(np.argwhere(missing)[0][0])}, {int(np.argwhere(missing)[0][1])}]): {cause}")
    fig = Figure(figsize=(min(8, 1 + cols * 0.18), min(5, 0.8 + rows * 0.18)))
    ax = fig.add_subplot()
    ax.imshow(missing.astype(int), cmap=ListedColormap(["#2da44e", "#afb8c1"]), vmin=0, vmax=1, interpolation="nearest")
    ax.set_xlabel("col")
    ax.set_ylabel("row")
    ax.set_title(f"{name}: green = written, grey = never written", fontsize=9)
    return message, fig


def _gray(n):
    return _shape(n)


def _rgb(n):
    return (*_shape(n), 3)


# ----------------------------------------------------------------------------- grayscale


@cuda.jit
def _grayscale(img, out):
    col, row = cuda.grid(2)
    if row < out.shape[0] and col < out.shape[1]:
        out[row, col] = 0.299 * img[row, col, 0] + 0.587 * img[row, col, 1] + 0.114 * img[row, col, 2]


def _grayscale_expect(img):
    return (img.astype(np.float64) @ np.array([0.299, 0.587, 0.114])).astype(np.float32)


grayscale = ImageExercise(
    prompt=("Write a kernel that converts an RGB image img (rows, cols, 3) to gray: "
            "out[row, col] = 0.299 * red + 0.587 * green + 0.114 * blue. The launch is 8x8 blocks, one thread per pixel."),
    args=(In("img", shape=_rgb, low=0.0, high=1.0), Out("out", shape=_gray)),
    expect=_grayscale_expect, reference=_grayscale, launch=_LAUNCH, sizes=_image_sizes,
    mistakes=((lambda img: img.mean(axis=2).astype(np.float32),
               "that is the plain average of the three channels: weight them 0.299, 0.587 and 0.114."),
              (lambda img: (img.astype(np.float64) @ np.array([0.114, 0.587, 0.299])).astype(np.float32),
               "the red and blue weights are swapped: channel 0 is red (0.299), channel 2 is blue (0.114).")),
    hints=("col, row = cuda.grid(2): x runs along columns, y along rows.",
           "Guard both dimensions: if row < out.shape[0] and col < out.shape[1]:",
           "out[row, col] = 0.299 * img[row, col, 0] + 0.587 * img[row, col, 1] + 0.114 * img[row, col, 2]"),
)

# ----------------------------------------------------------------------------- mirror


@cuda.jit
def _mirror(img, out):
    col, row = cuda.grid(2)
    rows, cols = out.shape
    if row < rows and col < cols:
        out[row, col] = img[row, cols - 1 - col]


mirror = ImageExercise(
    prompt="Write a kernel that mirrors a gray image left to right: out[row, col] = img[row, cols - 1 - col].",
    args=(In("img", shape=_gray, low=0.0, high=1.0), Out("out", shape=_gray)),
    expect=lambda img: img[:, ::-1].copy(), reference=_mirror, launch=_LAUNCH, sizes=_image_sizes,
    mistakes=((lambda img: img.copy(), "that is a copy of the image: read from the mirrored column, cols - 1 - col."),
              (lambda img: img[::-1, :].copy(), "that flips the image top to bottom: mirror the column index, not the row.")),
    hints=("The last column is cols - 1, so column col comes from column cols - 1 - col.",
           "rows, cols = out.shape; guard both, then out[row, col] = img[row, cols - 1 - col]."),
)

# ----------------------------------------------------------------------------- blur


@cuda.jit
def _blur(img, out):
    col, row = cuda.grid(2)
    rows, cols = img.shape
    if row < rows and col < cols:
        total = 0.0
        for dr in range(-1, 2):
            for dc in range(-1, 2):
                r = min(max(row + dr, 0), rows - 1)  # clamp to the edge
                c = min(max(col + dc, 0), cols - 1)
                total += img[r, c]
        out[row, col] = total / 9.0


def _blur_expect(img):
    padded = np.pad(img.astype(np.float64), 1, mode="edge")
    rows, cols = img.shape
    total = sum(padded[1 + dr:1 + dr + rows, 1 + dc:1 + dc + cols] for dr in (-1, 0, 1) for dc in (-1, 0, 1))
    return (total / 9.0).astype(np.float32)


def _blur_skip_edges(img):
    """The other common edge rule: average only the neighbours inside the image."""
    rows, cols = img.shape
    padded = np.pad(img.astype(np.float64), 1)
    ones = np.pad(np.ones_like(img, dtype=np.float64), 1)
    total = sum(padded[1 + dr:1 + dr + rows, 1 + dc:1 + dc + cols] for dr in (-1, 0, 1) for dc in (-1, 0, 1))
    count = sum(ones[1 + dr:1 + dr + rows, 1 + dc:1 + dc + cols] for dr in (-1, 0, 1) for dc in (-1, 0, 1))
    return (total / count).astype(np.float32)


blur = ImageExercise(
    prompt=("Write a 3x3 box blur: out[row, col] is the mean of img over the 3x3 neighbourhood of (row, col). "
            "At the border, clamp neighbour coordinates to the image (edge pixels repeat)."),
    args=(In("img", shape=_gray, low=0.0, high=1.0), Out("out", shape=_gray)),
    expect=_blur_expect, reference=_blur, launch=_LAUNCH, sizes=_image_sizes, rtol=1e-5, atol=1e-6,
    mistakes=((_blur_skip_edges, "at the border you averaged only the neighbours inside the image; this exercise "
                                 "clamps instead: r = min(max(row + dr, 0), rows - 1), and always divides by 9."),
              (lambda img: img.copy(), "out is a copy of img: sum the 3x3 neighbourhood and divide by 9.")),
    hints=("Two loops, dr and dc in range(-1, 2), add up 9 neighbours; divide by 9.0.",
           "Neighbours of border pixels fall outside the image: clamp with min(max(row + dr, 0), rows - 1).",
           "Read only from img and write only out[row, col]: writing into img while neighbours read it is a race."),
)

EXERCISES = register(__name__, globals())
