#!/usr/bin/env python3
"""cuTile Python's README vector add on a GPU (issue 16 item 4): does cuda.tile compile and run here?

    pip install "cuda-tile[tileiras]" cupy-cuda13x      # tileiras, nvvm and nvcc wheels of one CUDA version
    env -u CUDA_HOME python bench/cutile_vector_add.py [--record]

Why ``-u CUDA_HOME``: tileiras loads libNVVM from ``$CUDA_HOME`` before its own wheel's, so on a
host whose toolkit is older than tileiras (CUDA 13.0 against tileiras 13.4 on the course's H100)
every compile failed with "failed to compile Tile IR program". ``--record`` writes
docs/data/cutile.json (the landscape row of notebook 12 cites it).
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

RECORD = Path(__file__).resolve().parent.parent / "docs" / "data" / "cutile.json"
TILE = 16


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if os.environ.get("CUDA_HOME"):
        print(f"note: CUDA_HOME={os.environ['CUDA_HOME']}; if tileiras fails, run with env -u CUDA_HOME")
    import cuda.tile as ct
    import cupy
    import numpy as np

    @ct.kernel
    def vector_add_kernel(a, b, result):
        bid = ct.bid(0)
        ta = ct.load(a, index=(bid,), shape=(TILE,))
        tb = ct.load(b, index=(bid,), shape=(TILE,))
        ct.store(result, index=(bid,), tile=ta + tb)

    out = {"date": time.strftime("%Y-%m-%d"), "cuda_tile": getattr(ct, "__version__", None), "vector_add": {}}
    rng = cupy.random.default_rng(0)
    for n in (128, 1 << 20):
        a = rng.random(n, dtype=cupy.float32)
        b = rng.random(n, dtype=cupy.float32)
        r = cupy.zeros_like(a)
        t0 = time.perf_counter()
        ct.launch(cupy.cuda.get_current_stream(), (ct.cdiv(n, TILE), 1, 1), vector_add_kernel, (a, b, r))
        cupy.cuda.get_current_stream().synchronize()
        ok = bool(np.allclose(cupy.asnumpy(r), cupy.asnumpy(a) + cupy.asnumpy(b)))
        out["vector_add"][f"n={n}"] = {"correct": ok, "first_s": round(time.perf_counter() - t0, 3)}
    print(json.dumps(out, indent=1))
    if "--record" in argv:
        old = json.loads(RECORD.read_text()) if RECORD.exists() else {}
        RECORD.write_text(json.dumps({**old, **out}, indent=1) + "\n")
    return 0 if all(v["correct"] for v in out["vector_add"].values()) else 1


if __name__ == "__main__":
    raise SystemExit(main())
