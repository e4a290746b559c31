"""Kernel exercises on images: the same checks as ``KernelExercise``, told in (row, col).

The engine describes outputs as flat arrays. For an image that hides the pattern, so a
"never written" result is traced again on the same shape and described in 2-D (with a
picture of which pixels were written), and "out[k] is" becomes "out[row, col] is". The
exercise's launch must be a ``grid2d`` rule whose ``shape(n)`` gives the image's (rows, cols).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from .base import source
from .executor import LOCAL
from .explain import one_d_cause
from .kernels import KernelExercise
from .results import Graded


@dataclass(eq=False, repr=False)
class ImageExercise(KernelExercise):
    """A KernelExercise whose messages speak in (row, col) rather than flat indices.

    The engine describes outputs as flat arrays. For an image that hides the pattern, so a
    "never written" result is traced again here on the same shape and described in 2D (with
    a picture of which pixels were written), and "out[k] is" becomes "out[row, col] is".
    """

    def _grade(self, kernel, rng, launch=None, executor=LOCAL) -> Graded:
        graded = super()._grade(kernel, rng, launch, executor)
        status, message = graded.status, graded.message
        if status == "passed":
            message = re.sub(
                r"correct for n = ([\d, ]+)",
                lambda m: (
                    "correct on images of "
                    + ", ".join("{}x{}".format(*self.launch.shape(int(k))) for k in m.group(1).split(", "))
                ),
                message,
            )
        if status != "failed":
            return graded._replace(message=message)
        m = re.search(r"(\d+) of (\d+) (?:elements )?", message)
        n = int(m.group(2)) if m else None
        if n is not None and "never written" in message and not message.startswith("the CPU tracer"):
            described = _describe_unwritten(self, kernel, n, executor)
            if described:
                message, picture = described
                return graded._replace(message=message, picture=picture)
        if n is not None:
            cols = self.launch.shape(n)[1]
            message = re.sub(
                r"^(\w+)\[(\d+)\] is",
                lambda k: f"{k.group(1)}[{int(k.group(2)) // cols}, {int(k.group(2)) % cols}] is",
                message,
            )
            message = message.replace(
                f"of {n} elements", f"of {n} pixels of the {self.launch.shape(n)[0]}x{cols} image", 1
            )
        return graded._replace(message=message)


def _describe_unwritten(ex, kernel, n, executor):
    """Trace the learner's kernel on an image of the failing shape; say which pixels stay unwritten."""
    from matplotlib.colors import ListedColormap
    from matplotlib.figure import Figure

    rows, cols = ex.launch.shape(n)
    rng = np.random.default_rng(0)
    args = []
    for a in ex.args:
        shape = a.shape(n) if callable(a.shape) else a.shape
        args.append(rng.uniform(0, 1, shape).astype(a.dtype) if a.role == "in" else np.full(shape, np.nan, a.dtype))
    out_pos = [p for p, a in enumerate(ex.args) if a.role == "out"][0]
    fresh = [a.copy() for a in args]
    for case in range(ex.launch.shapes):  # the check cycles through launch shapes: find the one that fails
        grid, block = ex.launch.config(n, case)
        args = [a.copy() for a in fresh]
        try:
            executor.trace(kernel, grid, block, args, [])
        except Exception:  # any failure: the engine's own message stands
            return None
        missing = np.isnan(args[out_pos])
        if missing.any():
            break
    else:
        return None
    name = ex.args[out_pos].name
    written = ~missing
    rr, cc = np.nonzero(written)
    gx, gy = grid[0] * block[0], grid[1] * block[1]
    yy, xx = np.mgrid[0:rows, 0:cols]
    one_d = one_d_cause(source(kernel), grid, block)
    if one_d:  # the formula itself is the cause, whatever pattern of pixels it left
        cause = one_d
    elif written.any() and rr.max() < block[1] and cc.max() < block[0]:
        cause = (
            "only the first block's pixels were written: add the block offset, "
            "col, row = cuda.grid(2) (not cuda.threadIdx.x and .y alone)."
        )
    elif np.array_equal(written, (yy < gx) & (xx < gy)):
        cause = (
            "row and col look swapped: x runs along columns, so write col, row = cuda.grid(2); "
            "the grid's x threads cover the columns, its y threads the rows."
        )
    else:
        cause = (
            "does every pixel get exactly one thread? col, row = cuda.grid(2), guarded by row < rows and col < cols."
        )
    message = (
        f"{int(missing.sum())} of {n} pixels of {name} were never written on the {rows}x{cols} image "
        f"(grey in the picture, first at {name}[{int(np.argwhere(missing)[0][0])}, "
        f"{int(np.argwhere(missing)[0][1])}]): {cause}"
    )
    fig = Figure(figsize=(min(8, 1 + cols * 0.18), min(5, 0.8 + rows * 0.18)))
    ax = fig.add_subplot()
    ax.imshow(missing.astype(int), cmap=ListedColormap(["#2da44e", "#afb8c1"]), vmin=0, vmax=1, interpolation="nearest")
    ax.set_xlabel("col")
    ax.set_ylabel("row")
    ax.set_title(f"{name}: green = written, grey = never written", fontsize=9)
    return message, fig
