"""Launch a few of the course's kernels once each, for Nsight Compute to profile (notebook 15).

    ncu --csv --metrics ... python bench/profile_kernels.py
    python bench/profile_kernels.py --record docs/data/ncu_course.json   # runs ncu itself, on a GPU host

Launch order is the table's order: vector add, naive transpose, padded transpose, block reduction.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

LAUNCHES = (
    "vector add, 2^24 float32",
    "transpose, naive, 4096²",
    "transpose, tiled + padded, 4096²",
    "block reduction, 2^24",
)


def launch_all():
    import numpy as np
    from numba import cuda

    from bench import kernels as K

    n, s = 1 << 24, 4096
    a, b, c = (cuda.to_device(np.ones(n, np.float32)) for _ in range(3))
    m, t = cuda.to_device(np.ones((s, s), np.float32)), cuda.device_array((s, s), np.float32)
    blocks = K.reduction_blocks(n, cuda.get_current_device().MULTIPROCESSOR_COUNT)
    partial, res = cuda.device_array(blocks, np.float32), cuda.device_array(1, np.float32)
    g, blk = K.streaming_launch(n)
    K.vector_add[g, blk](a, b, c)
    g2, b2 = K.transpose_launch(s, s)
    K.transpose_naive[g2, b2](m, t)
    K.transpose_padded[g2, b2](m, t)
    K.reduce_sum(a, partial, res)
    cuda.synchronize()


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--record", help="run ncu on this script and write the parsed rows here (GPU host)")
    a = p.parse_args(argv)
    if not a.record:
        launch_all()
        return 0
    from helpers import profiling

    rows = profiling.ncu([sys.executable, str(Path(__file__).resolve())], profiling.BASIC)
    for label, row in zip(LAUNCHES + ("reduction, second pass",), rows):
        row["launch"] = label
    gpu = __import__("subprocess").run(["nvidia-smi", "-L"], capture_output=True, text=True).stdout.splitlines()[0]
    record = {
        "gpu": gpu,
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "metrics": profiling.BASIC,
        "rows": rows,
    }
    Path(a.record).write_text(json.dumps(record, indent=1) + "\n")
    profiling.show(rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
