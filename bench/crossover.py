#!/usr/bin/env python3
"""CPU (Numba @njit(parallel=True)) against GPU (Numba @cuda.jit) by size: where the GPU starts to win.

    COURSE_MODE=gpu .venv/bin/python -m bench.crossover --out docs/data --docs docs/benchmarks-<gpu>.md

For each workload and each size n = 2^10 .. 2^28 (float32), three times, each the median of
several runs after a warm-up:

- cpu_ms: the same loop as a `prange` loop under @njit(parallel=True), on every core Numba uses
  (numba.get_num_threads()), writing into a preallocated NumPy array; host clock.
- gpu_kernel_ms: the @cuda.jit kernel on arrays already on the GPU; CUDA events.
- gpu_total_ms: copy the inputs from pageable NumPy arrays into preallocated device arrays, launch,
  copy the result back into a preallocated NumPy array, synchronize; host clock. (Device memory
  is allocated once, outside the timing: the GPU's best case. Allocation per call costs more.)

Workloads: SAXPY (2 flops per 12 bytes: memory-bound everywhere) and a compute-heavy element-wise
loop (STEPS dependent sines per element). The GPU result is checked against the CPU result
at every size before its time counts. Writes <out>/crossover.json (machine, versions, date and
the rows notebook 12 plots) and, with --docs, replaces the crossover section of that Markdown
file (appends it the first time). Needs a GPU: in CPU mode it says so in one line and exits 2.
About a minute and a half on an H100 host with 16 cores.
"""

from __future__ import annotations

import argparse
import datetime
import json
import math
import os
import platform
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import helpers  # noqa: E402, I001  (decides CPU or GPU mode before Numba is imported)
import numpy as np  # noqa: E402
from numba import cuda, njit, prange  # noqa: E402

STEPS = 8  # sines per element in the compute-heavy workload
THREADS = 256
BEGIN, END = "<!-- crossover:begin (bench/crossover.py writes this section) -->", "<!-- crossover:end -->"
WORKLOADS = {
    "saxpy": "SAXPY, out = a·x + y (float32; 12 bytes and 2 flops per element: memory-bound)",
    "sine": f"{STEPS} dependent steps v = sin(v)·0.999 + x·0.001 per element (float32; 8 bytes and {STEPS} sines "
    "per element: compute-heavy)",
}


# ----------------------------------------------------------------------------- pure logic (tested in CPU mode)


def wins_from(rows, key="gpu_total_ms"):
    """The smallest n from which rows[key] beats cpu_ms at that size and every larger one; None if never."""
    answer = None
    for row in sorted(rows, key=lambda r: r["n"], reverse=True):
        if row[key] >= row["cpu_ms"]:
            break
        answer = row["n"]
    return answer


def _n(n):
    return f"2^{n.bit_length() - 1}" if n and n & (n - 1) == 0 else f"{n:,}"


def _ms(v):
    return f"{v * 1e3:,.1f} µs" if v < 1 else f"{v:,.2f} ms"


def render_markdown(result: dict) -> str:
    """The docs/benchmarks-<gpu>.md section for one run of this script."""
    m = result["machine"]
    libs = ", ".join(f"{k} {v}" for k, v in m["versions"].items() if v)
    out = [
        BEGIN,
        "## CPU baseline against the GPU, by size (notebook 12)",
        "",
        f"Written by `python -m bench.crossover` on {result['date']}. GPU: {m['gpu']}. CPU: {m['cpu']} "
        f"({m['cpu_count']} logical cores; Numba used {m['numba_threads']} threads, threading layer "
        f"{m['threading_layer']}). {libs}; Python {m['python']}.",
        "",
        "CPU: `@njit(parallel=True)` with `prange`, host clock. GPU kernel: `@cuda.jit`, arrays already on the GPU, "
        "CUDA events. GPU total: copy the inputs in from pageable NumPy memory, launch, copy the result back, into "
        "buffers allocated once outside the timing. Medians after a warm-up; every GPU result was checked against "
        "the CPU's. The raw numbers: `docs/data/crossover.json`; notebook 12 plots them.",
        "",
    ]
    for key, w in result["workloads"].items():
        rows = w["rows"]
        kernel, total = wins_from(rows, "gpu_kernel_ms"), wins_from(rows, "gpu_total_ms")
        out += [
            f"### {w['description']}",
            "",
            f"GPU kernel alone faster from n = {_n(kernel) if kernel else 'never (in these sizes)'}; "
            f"GPU with transfers faster from n = {_n(total) if total else 'never (in these sizes)'}.",
            "",
            "| n | CPU, all cores | GPU kernel | GPU with transfers | checked |",
            "|---|---:|---:|---:|---|",
        ]
        for r in rows:
            out.append(
                f"| {_n(r['n'])} | {_ms(r['cpu_ms'])} | {_ms(r['gpu_kernel_ms'])} | {_ms(r['gpu_total_ms'])} | "
                f"{'ok' if r['ok'] else '**wrong**'} |"
            )
        out.append("")
    out.append(END)
    return "\n".join(out) + "\n"


def update_section(text: str, section: str) -> str:
    """``text`` with its crossover section replaced by ``section`` (appended when there is none)."""
    if BEGIN in text and END in text:
        head, rest = text.split(BEGIN, 1)
        tail = rest.split(END, 1)[1]
        return head + section.rstrip("\n") + tail
    return text.rstrip("\n") + "\n\n" + section


# ----------------------------------------------------------------------------- the kernels


A = np.float32(2.0)
KEEP, MIX = np.float32(0.999), np.float32(0.001)


@njit(parallel=True)
def saxpy_cpu(x, y, out):
    for i in prange(x.size):
        out[i] = A * x[i] + y[i]


@cuda.jit
def saxpy_gpu(x, y, out):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = A * x[i] + y[i]


@njit(parallel=True)
def sine_cpu(x, y, out):
    for i in prange(x.size):
        v = y[i]
        for _ in range(STEPS):
            v = math.sin(v) * KEEP + x[i] * MIX
        out[i] = v


@cuda.jit
def sine_gpu(x, y, out):
    i = cuda.grid(1)
    if i < x.size:
        v = y[i]
        for _ in range(STEPS):
            v = math.sin(v) * KEEP + x[i] * MIX
        out[i] = v


KERNELS = {"saxpy": (saxpy_cpu, saxpy_gpu), "sine": (sine_cpu, sine_gpu)}  # the same loop body for both


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def measure(sizes, repeats_small, repeats_large, seed=1234):
    """{workload: [row per size]} on this machine's CPU and GPU."""
    rng = np.random.default_rng(seed)
    top = max(sizes)
    x, y = rng.random(top, dtype=np.float32), rng.random(top, dtype=np.float32)
    out_cpu, out_gpu = np.empty_like(x), np.empty_like(x)
    d_x, d_y, d_out = cuda.device_array_like(x), cuda.device_array_like(y), cuda.device_array_like(x)
    start, stop = cuda.event(), cuda.event()
    results = {}
    for name, (cpu_fn, gpu_fn) in KERNELS.items():
        rows = []
        for n in sizes:
            hx, hy, hc, hg = x[:n], y[:n], out_cpu[:n], out_gpu[:n]
            dx, dy, dout = d_x[:n], d_y[:n], d_out[:n]
            blocks = (n + THREADS - 1) // THREADS
            repeats = repeats_small if n <= 1 << 24 else repeats_large

            def cpu():
                cpu_fn(hx, hy, hc)

            def kernel():
                gpu_fn[blocks, THREADS](dx, dy, dout)

            def total():
                dx.copy_to_device(hx)
                dy.copy_to_device(hy)
                kernel()
                dout.copy_to_host(hg)
                cuda.synchronize()

            cpu(), total()  # warm-up: compile, first touch, module load
            cpu_times, kernel_times, total_times = [], [], []
            for _ in range(repeats):
                t0 = time.perf_counter()
                cpu()
                cpu_times.append((time.perf_counter() - t0) * 1e3)
                start.record()
                kernel()
                stop.record()
                stop.synchronize()
                kernel_times.append(start.elapsed_time(stop))
                t0 = time.perf_counter()
                total()
                total_times.append((time.perf_counter() - t0) * 1e3)
            err = float(np.max(np.abs(hg - hc))) if n else 0.0  # values lie in [0, 1)
            rows.append(
                {
                    "n": n,
                    "cpu_ms": statistics.median(cpu_times),
                    "gpu_kernel_ms": statistics.median(kernel_times),
                    "gpu_total_ms": statistics.median(total_times),
                    "repeats": repeats,
                    "max_abs_err": err,
                    "ok": bool(np.allclose(hg, hc, rtol=1e-5, atol=1e-6)),
                }
            )
            print(
                f"{name:8} n=2^{n.bit_length() - 1:<2} cpu {rows[-1]['cpu_ms']:9.3f} ms  kernel "
                f"{rows[-1]['gpu_kernel_ms']:9.3f} ms  total {rows[-1]['gpu_total_ms']:9.3f} ms  err {err:.1e}",
                flush=True,
            )
        results[name] = {"description": WORKLOADS[name], "rows": rows}
    return results


def machine() -> dict:
    import numba

    info = helpers.MODE.info
    return {
        "gpu": f"{info.name} (sm_{str(info.compute_capability).replace('.', '')}, driver {info.driver_version or '?'}, "
        f"CUDA {info.driver_cuda})",
        "cpu": _cpu_model(),
        "cpu_count": os.cpu_count(),
        "numba_threads": numba.get_num_threads(),
        "threading_layer": numba.threading_layer(),
        "versions": {k: v for k, v in helpers.env.library_versions().items() if v},
        "python": sys.version.split()[0],
    }


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.crossover", description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True, help="folder for crossover.json (docs/data for the course's copy)")
    ap.add_argument("--docs", help="Markdown file whose crossover section to replace (docs/benchmarks-<gpu>.md)")
    ap.add_argument("--max-log2", type=int, default=28, help="largest size is 2^this (default 28)")
    ap.add_argument("--repeats", type=int, default=7, help="timed runs per size up to 2^24 (median)")
    ap.add_argument("--repeats-large", type=int, default=3, help="timed runs per size above 2^24 (median)")
    args = ap.parse_args(argv)
    if not helpers.on_gpu():
        print(
            f"bench/crossover.py needs a GPU ({helpers.MODE.reason}); run it on a GPU machine with COURSE_MODE=gpu.",
            file=sys.stderr,
        )
        return 2
    began = time.perf_counter()
    sizes = [1 << k for k in range(10, args.max_log2 + 1)]
    workloads = measure(sizes, args.repeats, args.repeats_large)
    result = {
        "script": "bench/crossover.py",
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "machine": machine(),
        "method": {
            "cpu": "@njit(parallel=True) + prange, host clock, median after warm-up",
            "gpu_kernel": "@cuda.jit, device-resident arrays, CUDA events, median after warm-up",
            "gpu_total": "pageable host -> preallocated device copies, launch, copy back, synchronize; host clock",
            "threads_per_block": THREADS,
        },
        "workloads": workloads,
    }
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "crossover.json").write_text(json.dumps(result, indent=1) + "\n")
    print(f"wrote {out / 'crossover.json'}")
    if args.docs:
        docs = Path(args.docs)
        docs.write_text(update_section(docs.read_text() if docs.exists() else "", render_markdown(result)))
        print(f"updated the crossover section of {docs}")
    print(f"took {time.perf_counter() - began:.0f} s")
    bad = [(k, r["n"]) for k, w in workloads.items() for r in w["rows"] if not r["ok"]]
    if bad:
        print(f"GPU and CPU results differ at {bad}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
