"""How much slower is tracing a kernel than simply running it on Numba's CUDA simulator?

    .venv/bin/python bench/trace_speed.py

A 1024-thread launch (4 blocks x 256 threads) of two kernels: SAXPY, and a shared-memory
block reduction with syncthreads.  Each leg is warmed up, then timed several times; the
median is reported.  "trace" is the recording run alone; "trace+analysis" also computes the
verdicts and metrics.  The course requirement: tracing costs at most 3x the simulator.
"""

import os
import statistics
import sys
import time
import warnings
from pathlib import Path

os.environ["NUMBA_ENABLE_CUDASIM"] = "1"
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import numpy as np  # noqa: E402
from numba import cuda, float32  # noqa: E402

import helpers  # noqa: E402,F401  - decides the mode before numba.cuda is imported
from helpers.tracer import trace  # noqa: E402

warnings.simplefilter("ignore")
GRID, BLOCK = 4, 256
N = GRID * BLOCK


@cuda.jit
def saxpy(a, x, y, out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = a * x[i] + y[i]


@cuda.jit
def block_sum(x, partial):
    s = cuda.shared.array(256, float32)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    s[t] = x[i] if i < x.size else 0
    cuda.syncthreads()
    stride = cuda.blockDim.x // 2
    while stride > 0:
        if t < stride:
            s[t] += s[t + stride]
        cuda.syncthreads()
        stride //= 2
    if t == 0:
        partial[cuda.blockIdx.x] = s[0]


def median_seconds(fn, repeat):
    fn()  # warm-up
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def main(repeat=7):
    rng = np.random.default_rng(0)
    x, y = rng.random(N, dtype=np.float32), rng.random(N, dtype=np.float32)
    out, partial = np.zeros(N, np.float32), np.zeros(GRID, np.float32)
    cases = {
        "saxpy": (saxpy, (np.float32(2.0), x, y, out)),
        "block_sum (shared + syncthreads)": (block_sum, (x, partial)),
    }
    print(f"launch: {GRID} blocks x {BLOCK} threads = {N} threads; median of {repeat} runs")
    print(f"{'kernel':34} {'simulator':>10} {'trace':>10} {'ratio':>6} {'trace+analysis':>15} {'ratio':>6}")
    worst = 0.0
    for name, (kernel, args) in cases.items():
        sim = median_seconds(lambda: kernel[GRID, BLOCK](*args), repeat)
        tr = median_seconds(lambda: trace(kernel, GRID, BLOCK, *args), repeat)

        def full():
            t = trace(kernel, GRID, BLOCK, *args)
            t.verdicts, t.metrics  # noqa: B018 - force the analysis

        both = median_seconds(full, repeat)
        worst = max(worst, both / sim)
        print(
            f"{name:34} {sim * 1e3:8.1f}ms {tr * 1e3:8.1f}ms {tr / sim:5.2f}x {both * 1e3:13.1f}ms {both / sim:5.2f}x"
        )
    verdict = "OK" if worst <= 3 else "TOO SLOW"
    print(f"worst ratio (trace+analysis / simulator): {worst:.2f}x -> {verdict} (limit 3x)")
    return worst


if __name__ == "__main__":
    sys.exit(0 if main() <= 3 else 1)
