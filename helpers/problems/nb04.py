"""Notebook 04 - 2D grids and images: one thread per pixel, ``col, row = cuda.grid(2)``.

The exercise engine sizes problems by one number n. Here each n stands for an image shape,
drawn so that rows != cols (a swapped row/column index then fails), with sides below, at and one
past multiples of the block (see ``_image_sizes``). The launch is always the correct
ceiling-division 2D grid, with blocks the check chooses: these exercises are about the kernel.
"""

from __future__ import annotations

import numpy as np
from numba import cuda

from helpers.exercises import ImageExercise, In, Out, grid2d, register

BLOCK = (8, 8)  # (x, y) = (along columns, along rows)
OTHER_BLOCK = (16, 4)  # the check's second block: a kernel that assumes square 8x8 blocks fails on it
_SHAPES: dict[int, tuple[int, int]] = {}  # n (pixels) -> (rows, cols); filled by _image_sizes


def _shape(n: int) -> tuple[int, int]:
    if n not in _SHAPES:  # any n the engine asks about before drawing sizes (e.g. to read the block size)
        cols = max(1, int(np.sqrt(n * 1.5)))
        _SHAPES[n] = (max(1, n // cols), cols)
    return _SHAPES[n]


def _image_sizes(rng, threads):
    """Four shapes, one per launch case (blocks cycle 8x8, 16x4): smaller than one block; sides exact
    multiples of the block; sides one past a multiple; over 1,024 pixels with partial edges. Never
    square, and cols exceed rows by more than a block, so swapped row and col always show."""
    picks = []
    draws = (
        lambda: (int(rng.integers(2, 8)), int(rng.integers(3, 8))),
        lambda: (OTHER_BLOCK[1] * int(rng.integers(3, 7)), OTHER_BLOCK[0] * int(rng.integers(3, 5))),
        lambda: (BLOCK[1] * int(rng.integers(1, 4)) + 1, BLOCK[0] * int(rng.integers(4, 6)) + 1),
        lambda: (int(rng.integers(17, 31)), int(rng.integers(47, 81))),
    )
    for case, draw in enumerate(draws):
        while True:
            rows, cols = draw()
            n = rows * cols
            apart = case == 0 or cols - rows > 2 * max(BLOCK)
            partial = case != 3 or (rows % OTHER_BLOCK[1] and cols % OTHER_BLOCK[0] and n > 1024)
            if rows != cols and apart and partial and n not in picks:
                if _SHAPES.get(n, (rows, cols)) == (rows, cols):
                    break
        _SHAPES[n] = (rows, cols)
        picks.append(n)
    return picks


_LAUNCH = grid2d(BLOCK, shape=_shape, more=(OTHER_BLOCK,))


def _gray(n):
    return _shape(n)


def _rgb(n):
    return (*_shape(n), 3)


# ----------------------------------------------------------------------------- grayscale


@cuda.jit
def _grayscale(img, out):
    col, row = cuda.grid(2)
    if row < out.shape[0] and col < out.shape[1]:
        out[row, col] = (
            np.float32(0.299) * img[row, col, 0]
            + np.float32(0.587) * img[row, col, 1]
            + np.float32(0.114) * img[row, col, 2]
        )


def _grayscale_expect(img):
    return (img.astype(np.float64) @ np.array([0.299, 0.587, 0.114])).astype(np.float32)


grayscale = ImageExercise(
    prompt=(
        "Write a kernel that converts an RGB image img (rows, cols, 3) to gray: "
        "out[row, col] = 0.299 * red + 0.587 * green + 0.114 * blue. The check launches blocks of its own "
        "choosing (8x8, 16x4), one thread per pixel."
    ),
    args=(In("img", shape=_rgb, low=0.0, high=1.0), Out("out", shape=_gray)),
    expect=_grayscale_expect,
    reference=_grayscale,
    launch=_LAUNCH,
    sizes=_image_sizes,
    mistakes=(
        (
            lambda img: img.mean(axis=2).astype(np.float32),
            "that is the plain average of the three channels: weight them 0.299, 0.587 and 0.114.",
        ),
        (
            lambda img: (img.astype(np.float64) @ np.array([0.114, 0.587, 0.299])).astype(np.float32),
            "the red and blue weights are swapped: channel 0 is red (0.299), channel 2 is blue (0.114).",
        ),
    ),
    hints=(
        "col, row = cuda.grid(2): x runs along columns, y along rows.",
        "Guard both dimensions: if row < out.shape[0] and col < out.shape[1]:",
        "out[row, col] = np.float32(0.299) * img[row, col, 0] + np.float32(0.587) * img[row, col, 1] + "
        "np.float32(0.114) * img[row, col, 2] (np.float32 keeps the arithmetic in float32).",
    ),
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
    expect=lambda img: img[:, ::-1].copy(),
    reference=_mirror,
    launch=_LAUNCH,
    sizes=_image_sizes,
    mistakes=(
        (lambda img: img.copy(), "that is a copy of the image: read from the mirrored column, cols - 1 - col."),
        (lambda img: img[::-1, :].copy(), "that flips the image top to bottom: mirror the column index, not the row."),
    ),
    hints=(
        "The last column is cols - 1, so column col comes from column cols - 1 - col.",
        "rows, cols = out.shape; guard both, then out[row, col] = img[row, cols - 1 - col].",
    ),
)

# ----------------------------------------------------------------------------- blur


@cuda.jit
def _blur(img, out):
    col, row = cuda.grid(2)
    rows, cols = img.shape
    if row < rows and col < cols:
        total = np.float32(0.0)  # float32 throughout: a bare 0.0 would make total a float64
        for dr in range(-1, 2):
            for dc in range(-1, 2):
                r = min(max(row + dr, 0), rows - 1)  # clamp to the edge
                c = min(max(col + dc, 0), cols - 1)
                total += img[r, c]
        out[row, col] = total / np.float32(9.0)


def _blur_expect(img):
    padded = np.pad(img.astype(np.float64), 1, mode="edge")
    rows, cols = img.shape
    total = sum(padded[1 + dr : 1 + dr + rows, 1 + dc : 1 + dc + cols] for dr in (-1, 0, 1) for dc in (-1, 0, 1))
    return (total / 9.0).astype(np.float32)


def _blur_skip_edges(img):
    """The other common edge rule: average only the neighbours inside the image."""
    rows, cols = img.shape
    padded = np.pad(img.astype(np.float64), 1)
    ones = np.pad(np.ones_like(img, dtype=np.float64), 1)
    total = sum(padded[1 + dr : 1 + dr + rows, 1 + dc : 1 + dc + cols] for dr in (-1, 0, 1) for dc in (-1, 0, 1))
    count = sum(ones[1 + dr : 1 + dr + rows, 1 + dc : 1 + dc + cols] for dr in (-1, 0, 1) for dc in (-1, 0, 1))
    return (total / count).astype(np.float32)


blur = ImageExercise(
    prompt=(
        "Write a 3x3 box blur: out[row, col] is the mean of img over the 3x3 neighbourhood of (row, col). "
        "At the border, clamp neighbour coordinates to the image (edge pixels repeat)."
    ),
    args=(In("img", shape=_gray, low=0.0, high=1.0), Out("out", shape=_gray)),
    expect=_blur_expect,
    reference=_blur,
    launch=_LAUNCH,
    sizes=_image_sizes,
    rtol=1e-5,
    atol=1e-6,
    mistakes=(
        (
            _blur_skip_edges,
            "at the border you averaged only the neighbours inside the image; this exercise "
            "clamps instead: r = min(max(row + dr, 0), rows - 1), and always divides by 9.",
        ),
        (lambda img: img.copy(), "out is a copy of img: sum the 3x3 neighbourhood and divide by 9."),
    ),
    hints=(
        "Two loops, dr and dc in range(-1, 2), add up 9 neighbours; divide by 9.0.",
        "Neighbours of border pixels fall outside the image: clamp with min(max(row + dr, 0), rows - 1).",
        "Read only from img and write only out[row, col]: writing into img while neighbours read it is a race.",
    ),
)

EXERCISES = register(__name__, globals())
