"""Problem sizes for the mode a notebook runs in: ``helpers.size(1_000_000, small=1_000)``.

A GPU runs the text's size; so does CPU mode, where Numba's launches run from their PTX
(helpers/ptx/launch.py), except where a notebook names a smaller ``cpu`` size (a cell that would take
more than about 10 s of CPU) or a ``small`` one for the grader's children and for machines where
Numba's kernels can only run on its simulator.
"""

from __future__ import annotations

import os

from .env import MODE, NO_CUDA_WHEELS, NO_WHEELS_HERE

__all__ = ["SMALL_SIZES", "size"]

# "small": the sizes a notebook runs in CPU mode where it must be quick, that is in the grader's children (every
# submission runs every cell; helpers/grading/execute.py sets it) and where Numba's compiler cannot run, so that
# Numba kernels run on the simulator (macOS). Decided once, from the environment, like MODE.
SMALL_SIZES = os.environ.get("COURSE_SIZES", "").strip().lower() == "small" or NO_CUDA_WHEELS


def size(gpu, cpu=None, why="", small=None):
    """Problem size for this mode: ``gpu`` (the text's) on a GPU, and in CPU mode too where the CPU runs it in
    seconds (Numba's launches from their PTX, helpers/ptx/launch.py, and CUDA C's on the same interpreter).
    ``cpu``: a smaller size for CPU mode where the text's would take more than about 10 s of CPU (a kernel with
    a long loop per thread) or is past what the interpreter runs; a line says which size ran, and ``why``.
    ``small``: the size when the grader runs the notebook, or where Numba's simulator runs its kernels (at
    about 0.4 ms per thread, README)."""
    if MODE.gpu:
        return gpu
    if SMALL_SIZES and small is not None:
        if NO_CUDA_WHEELS:
            print(
                f"CPU mode runs {_size_text(small)} here instead of the text's {_size_text(gpu)}: Numba's kernels "
                f"run on its simulator here ({NO_WHEELS_HERE})."
            )
        return small
    if cpu is None or cpu == gpu:
        return gpu
    print(f"CPU mode runs {_size_text(cpu)} here instead of the text's {_size_text(gpu)}{': ' + why if why else ''}.")
    return cpu


def _size_text(value) -> str:
    if isinstance(value, (tuple, list)):
        return " x ".join(_size_text(v) for v in value)
    return f"{value:,}" if isinstance(value, int) else str(value)
