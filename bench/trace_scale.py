"""How the CPU tracer scales: SAXPY at 10^4, 10^5 and 10^6 threads, and a 128x128 tiled matmul.

    .venv/bin/python bench/trace_scale.py              # every case
    .venv/bin/python bench/trace_scale.py saxpy-1e6    # one case
    .venv/bin/python bench/trace_scale.py --per-thread # every thread as its own Python call, no NumPy lanes

Each case runs in a fresh Python process, so its peak memory (ru_maxrss) is its own: the
process imports the course, notes its resident memory, then traces the launch and computes its
verdicts and metrics. CPU seconds (time.process_time, which a loaded 2-core machine disturbs
less than wall time) cover the trace and the analysis; "MB" is the peak resident memory of the
whole process, "+MB" what tracing added to it after the imports, and "B/access" that addition
per recorded access. The issue 33 target: SAXPY at 10^6 threads in at most 5 s of CPU and 400 MB.
Blocks whose threads take one path run as NumPy lanes (helpers.tracer.vector); `--per-thread`
turns that off, to measure the per-thread path the lanes fall back to.
"""

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import NamedTuple

ROOT = Path(__file__).resolve().parent.parent
TILE = 16
CASES = {
    "saxpy-1e4": ("saxpy", 10_000),
    "saxpy-1e5": ("saxpy", 100_000),
    "saxpy-1e6": ("saxpy", 1_000_000),
    "matmul-128": ("matmul", 128),
}


class Row(NamedTuple):
    """One traced case: what it cost and what the tracer found."""

    case: str
    threads: int
    accesses: int
    cpu_s: float
    peak_mb: float
    added_mb: float
    verdicts: str  # the verdict kinds, "none", or the error that stopped the trace

    @property
    def bytes_per_access(self):
        return self.added_mb * 2**20 / self.accesses if self.accesses else float("nan")


def _rss_mb():
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # kilobytes on Linux


def _kernels():
    from numba import cuda, float32

    @cuda.jit
    def saxpy(a, x, y, out):
        i = cuda.grid(1)
        if i < out.size:
            out[i] = a * x[i] + y[i]

    @cuda.jit
    def matmul_tiled(A, B, C):
        sA = cuda.shared.array((TILE, TILE), float32)
        sB = cuda.shared.array((TILE, TILE), float32)
        tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
        row = cuda.blockIdx.y * TILE + ty
        col = cuda.blockIdx.x * TILE + tx
        acc = float32(0.0)
        for t0 in range(0, A.shape[1], TILE):
            sA[ty, tx] = A[row, t0 + tx]
            sB[ty, tx] = B[t0 + ty, col]
            cuda.syncthreads()
            for k in range(TILE):
                acc += sA[ty, k] * sB[k, tx]
            cuda.syncthreads()
        C[row, col] = acc

    return saxpy, matmul_tiled


def run_case(name, per_thread=False):
    """Trace one case in this process; the Row as a dict."""
    os.environ["NUMBA_ENABLE_CUDASIM"] = "1"
    sys.path.insert(0, str(ROOT))
    import numpy as np

    import helpers  # noqa: F401  - decides the mode before numba.cuda is imported
    from helpers.errors import CourseError
    from helpers.tracer import trace, vector

    vector.ENABLED = not per_thread

    saxpy, matmul_tiled = _kernels()
    kind, size = CASES[name]
    rng = np.random.default_rng(0)
    if kind == "saxpy":
        x, y = rng.random(size, dtype=np.float32), rng.random(size, dtype=np.float32)
        out = np.zeros(size, np.float32)
        block = 256
        launch = (saxpy, -(-size // block), block, np.float32(2.0), x, y, out)
        threads = launch[1] * block
    else:
        A, B = rng.random((size, size), dtype=np.float32), rng.random((size, size), dtype=np.float32)
        C = np.zeros((size, size), np.float32)
        launch = (matmul_tiled, (size // TILE, size // TILE), (TILE, TILE), A, B, C)
        threads = size * size
    base = _rss_mb()
    t0 = time.process_time()
    try:
        t = trace(*launch, watchdog=0)
        kinds = sorted({v.kind for v in t.verdicts})
        t.metrics  # noqa: B018 - force the analysis
        found, accesses = ", ".join(kinds) or "none", len(t.accesses)
    except CourseError as e:
        found, accesses = f"stopped: {str(e)[:90]}", 0
    cpu = time.process_time() - t0
    peak = _rss_mb()
    if kind == "matmul" and accesses and not np.allclose(C, A @ B, rtol=1e-4):
        found += " (WRONG PRODUCT)"
    return Row(name, threads, accesses, cpu, peak, peak - base, found)._asdict()


def measure(name, per_thread=False):
    """Run one case in a fresh interpreter, so its peak memory is its own."""
    cmd = [sys.executable, __file__, "--child", name] + (["--per-thread"] if per_thread else [])
    done = subprocess.run(cmd, capture_output=True, text=True, check=True, cwd=ROOT)
    return Row(**json.loads(done.stdout.strip().splitlines()[-1]))


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    per_thread = "--per-thread" in argv
    argv = [a for a in argv if a != "--per-thread"]
    if argv[:1] == ["--child"]:
        print(json.dumps(run_case(argv[1], per_thread)))
        return 0
    names = argv or list(CASES)
    print("every thread as its own Python call (--per-thread)" if per_thread else "NumPy lanes where threads agree")
    print(f"{'case':11} {'threads':>9} {'accesses':>10} {'CPU s':>7} {'MB':>6} {'+MB':>6} {'B/access':>8}  verdicts")
    for name in names:
        r = measure(name, per_thread)
        print(
            f"{r.case:11} {r.threads:9,} {r.accesses:10,} {r.cpu_s:7.2f} {r.peak_mb:6.0f} {r.added_mb:6.0f} "
            f"{r.bytes_per_access:8.0f}  {r.verdicts}",
            flush=True,
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
