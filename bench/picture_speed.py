"""How long the notebooks' pictures take to draw, as Jupyter shows them (rendered to PNG).

    .venv/bin/python bench/picture_speed.py

The pictures a learner sees most: notebook 02's and 04's launch pictures, the race picture of a
tiled matmul missing its second barrier (what the check shows), that trace's block view, and
notebook 05's bank-conflict picture. Each is drawn once to warm up, then 5 times; the median
is reported against the course's limit of 2 s per picture. The tests assert what keeps a
picture quick (few artists, at most about 1,500 px tall), never a time.
"""

from __future__ import annotations

import io
import os
import statistics
import sys
import time
import warnings
from pathlib import Path

os.environ.setdefault("NUMBA_ENABLE_CUDASIM", "1")
ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

import matplotlib  # noqa: E402

matplotlib.use("Agg")
import numpy as np  # noqa: E402
from numba import cuda, float32  # noqa: E402

import helpers  # noqa: E402,F401  - decides the mode before numba.cuda is imported
from helpers import geometry, trace  # noqa: E402
from helpers.problems import nb05  # noqa: E402

warnings.simplefilter("ignore")
LIMIT_S, RUNS = 2.0, 5


def _pictures():
    from wrong_solutions.nb05 import matmul_no_second_barrier

    a = np.random.default_rng(0).random((14, 19), dtype=np.float32)
    b = np.random.default_rng(1).random((19, 21), dtype=np.float32)
    checked = nb05.matmul_tiled.grade(matmul_no_second_barrier, seed=3)  # graded once: only drawing is timed
    racy = trace(matmul_no_second_barrier, (3, 2), (8, 8), a, b, np.zeros((14, 21), np.float32))
    tile = np.arange(32 * 32, dtype=np.float32).reshape(32, 32)
    column = trace(_column_sums, 1, 32, tile, np.zeros(32, np.float32), outputs=("out",))
    return {
        "launch, notebook 02 (20 threads in blocks of 8)": lambda: geometry.draw_launch(geometry.launch_1d(20, 8)),
        "launch, notebook 04 (10 x 13 in 4 x 4 blocks)": lambda: geometry.draw_launch(
            geometry.launch_2d((10, 13), block=(4, 4))
        ),
        "the matmul race, as the check shows it": lambda: checked.picture,
        "that trace, block 0": lambda: racy.show(block=0),
        "bank conflicts, a column read": lambda: column.show_banks(),
    }


@cuda.jit
def _column_sums(tile, out):
    t = cuda.threadIdx.x
    s = cuda.shared.array((32, 32), float32)
    for c in range(32):
        s[t, c] = tile[t, c]
    cuda.syncthreads()
    total = float32(0)
    for c in range(32):
        total += s[c, t]
    out[t] = total


def main() -> int:
    failed = 0
    print(f"{'picture':52} {'median':>8}  limit {LIMIT_S:.0f} s")
    for name, draw in _pictures().items():
        times = []
        for run in range(RUNS + 1):
            start = time.perf_counter()
            draw().savefig(io.BytesIO(), format="png")
            if run:  # the first draw warms up
                times.append(time.perf_counter() - start)
        median = statistics.median(times)
        failed += median > LIMIT_S
        print(f"{name:52} {median:7.2f}s  {'ok' if median <= LIMIT_S else 'OVER'}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
