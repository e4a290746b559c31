#!/usr/bin/env python3
"""One kernel (SAXPY, out = a*x + y, float32) in four libraries: launch overhead and throughput.

Numba (@cuda.jit), CuPy (RawKernel), PyCUDA (SourceModule + prepared_call) and cuda.core
(Program + launch) run the same computation on the same CuPy-allocated arrays, on the legacy
default stream all four use by default. Measured per library:

- launch overhead: host time per launch of a one-block kernel, K launches then one
  synchronize, median over rounds (what each call costs from Python);
- GPU time per tiny launch: CUDA events around K launches, median over rounds;
- throughput: CUDA events around one launch per size, after a warm-up, median of repeats;
  SAXPY moves 12 bytes per element, so GB/s = 12 n / time.

GPU only. Writes a Markdown fragment to --out (docs/benchmarks-<gpu>.md includes it):

    COURSE_MODE=gpu .venv/bin/python bench/interop.py --out build/bench-interop.md
"""

from __future__ import annotations

import argparse
import datetime
import importlib.util
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # `import helpers` from a checkout

SAXPY_SRC = r"""
extern "C" __global__ void saxpy(const float* x, const float* y, float* out, float a, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = a * x[i] + y[i];
}
"""
THREADS = 256


def make_launchers(n, cp, np, cuda, pycuda_ok):
    """{library: zero-argument launch function}, all on the same arrays, plus the arrays."""
    from cuda.core import Device, LaunchConfig, Program, ProgramOptions, launch

    @cuda.jit
    def saxpy_numba(a, x, y, out):
        i = cuda.grid(1)
        if i < out.size:
            out[i] = a * x[i] + y[i]

    x, y = cp.random.random(n, dtype=cp.float32), cp.random.random(n, dtype=cp.float32)
    out = cp.zeros_like(x)
    a, blocks, n32 = np.float32(2.0), (n + THREADS - 1) // THREADS, np.int32(n)
    xn, yn, outn = (cuda.as_cuda_array(v) for v in (x, y, out))  # wrapped once, as a program would
    raw = cp.RawKernel(SAXPY_SRC, "saxpy")
    dev = Device(0)
    dev.set_current()
    kernel = (
        Program(SAXPY_SRC, code_type="c++", options=ProgramOptions(arch=f"sm_{dev.arch}"))
        .compile("cubin")
        .get_kernel("saxpy")
    )
    config, stream = LaunchConfig(grid=blocks, block=THREADS), dev.default_stream
    px, py, pout = x.data.ptr, y.data.ptr, out.data.ptr

    launchers = {
        "Numba `@cuda.jit`": lambda: saxpy_numba[blocks, THREADS](a, xn, yn, outn),
        "CuPy `RawKernel`": lambda: raw((blocks,), (THREADS,), (x, y, out, a, n32)),
        "cuda.core `launch`": lambda: launch(stream, config, kernel, px, py, pout, a, n32),
    }
    if pycuda_ok:
        from pycuda.compiler import SourceModule

        f = SourceModule(SAXPY_SRC, no_extern_c=True).get_function("saxpy")
        f.prepare("PPPfi")
        launchers["PyCUDA `prepared_call`"] = lambda: f.prepared_call(
            (blocks, 1), (THREADS, 1, 1), px, py, pout, a, n32
        )
    return launchers, (x, y, out)


def host_us_per_launch(launch, sync, launches, rounds):
    per = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        for _ in range(launches):
            launch()
        sync()
        per.append((time.perf_counter() - t0) / launches * 1e6)
    return statistics.median(per)


def event_ms(cp, launch, count, rounds):
    start, stop, times = cp.cuda.Event(), cp.cuda.Event(), []
    for _ in range(rounds):
        launch()  # untimed: the GPU is busy while Python queues the timed launches (else the host's cost is timed)
        start.record()
        for _ in range(count):
            launch()
        stop.record()
        stop.synchronize()
        times.append(cp.cuda.get_elapsed_time(start, stop) / count)
    return statistics.median(times)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True, help="Markdown fragment to write")
    ap.add_argument("--sizes", default="100000,1000000,10000000,100000000", help="comma-separated element counts")
    ap.add_argument("--repeats", type=int, default=30, help="timed launches per size (median)")
    ap.add_argument("--launches", type=int, default=2000, help="launches per overhead round")
    ap.add_argument("--rounds", type=int, default=7, help="overhead rounds (median)")
    args = ap.parse_args(argv)

    import helpers

    if not helpers.on_gpu():
        print(
            f"bench/interop.py needs a GPU ({helpers.MODE.reason}); run it on a GPU machine with COURSE_MODE=gpu.",
            file=sys.stderr,
        )
        return 2
    import cupy as cp
    import numpy as np
    from numba import cuda

    pycuda_ok = importlib.util.find_spec("pycuda") is not None
    if pycuda_ok:
        import pycuda.autoprimaryctx  # noqa: F401 - share the primary context with the others

    sizes = [int(float(s)) for s in args.sizes.split(",")]
    sync = cp.cuda.Device().synchronize

    tiny, (tx, ty, tout) = make_launchers(THREADS, cp, np, cuda, pycuda_ok)
    overhead, tiny_gpu = {}, {}
    for name, launch in tiny.items():
        tout.fill(0)
        launch()
        sync()  # warm-up: compile, load, caches
        if not bool(cp.allclose(tout, 2 * tx + ty)):
            raise SystemExit(f"{name} computed a wrong SAXPY")
        overhead[name] = host_us_per_launch(launch, sync, args.launches, args.rounds)
        tiny_gpu[name] = event_ms(cp, launch, args.launches, args.rounds) * 1e3

    gbps = {name: {} for name in tiny}
    for n in sizes:
        launchers, (x, y, out) = make_launchers(n, cp, np, cuda, pycuda_ok)
        for name, launch in launchers.items():
            out.fill(0)
            launch()
            sync()
            if not bool(cp.allclose(out, 2 * x + y)):
                raise SystemExit(f"{name} computed a wrong SAXPY at n={n}")
            ms = event_ms(cp, launch, 10, args.repeats)
            gbps[name][n] = 12 * n / ms / 1e6
        del launchers, x, y, out
        cp.get_default_memory_pool().free_all_blocks()

    info, versions = helpers.MODE.info, helpers.env.library_versions()
    libs = ", ".join(f"{k} {v}" for k, v in versions.items() if v)
    lines = [
        "### One kernel, four libraries (SAXPY, float32)",
        "",
        f"Measured by `bench/interop.py` on {info.name} (sm_{info.compute_capability.replace('.', '')}, driver "
        f"{info.driver_version or '?'}, CUDA {info.driver_cuda}), {datetime.date.today().isoformat()}; {libs}; "
        f"Python {sys.version.split()[0]}.",
        "",
        f"Launch overhead: host time per launch of a {THREADS}-thread kernel, {args.launches} launches then one "
        f"synchronize, median of {args.rounds} rounds. GPU µs/launch: CUDA events around the same launches. "
        f"Throughput: CUDA events around a queued batch of 10 launches behind one untimed launch, median of "
        f"{args.repeats}; 12 bytes per element.",
        "",
        "| library | host µs/launch | GPU µs/launch | " + " | ".join(f"GB/s n={n:,}" for n in sizes) + " |",
        "|---|---:|---:|" + "---:|" * len(sizes),
    ]
    for name in tiny:
        lines.append(
            f"| {name} | {overhead[name]:.1f} | {tiny_gpu[name]:.1f} | "
            + " | ".join(f"{gbps[name][n]:.0f}" for n in sizes)
            + " |"
        )
    if not pycuda_ok:
        lines += ["", "PyCUDA was not installed on this machine, so it has no row."]
    text = "\n".join(lines) + "\n"
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
