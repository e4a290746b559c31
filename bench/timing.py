"""GPU timing shared by the benchmark scripts: sizes, CUDA-event timing and the measured ceilings.

``Timer`` holds everything the scripts time with: random inputs, the batched CUDA-event timing
loop, the two ceilings (device-to-device copy, cuBLAS float32 SGEMM) and the SGEMM error check.
``bench/run.py`` adds one method per course kernel on top of it (``Bench``); ``bench/sgemm_tune.py``,
``bench/sgemm_c.py`` and ``bench/cccl.py`` time their own kernels with a ``Timer`` directly. This
module imports no other benchmark script but ``bench/report.py`` (pure Python), so every script
can import it without an import cycle.

The SGEMM ceiling is TF32-free only if ``CUPY_TF32=0`` and ``NVIDIA_TF32_OVERRIDE=0`` were set
before CuPy loaded: every script that measures it (run.py, sgemm_tune.py, sgemm_c.py) sets them first.
"""

from __future__ import annotations

import dataclasses
import math
import platform
import re
import statistics
import time
from dataclasses import dataclass
from typing import Callable

from bench import report


@dataclass(frozen=True)
class Sizes:
    stream_n: int  # elements of each streaming array
    reduce_n: int
    transpose: int  # square side
    sgemm: int  # M = N = K
    repeats: int  # timed batches per kernel
    batch_seconds: float  # aim for batches this long (at most 50 launches)
    budget_seconds: float  # stop adding batches to a slow kernel after this long


FULL = Sizes(
    stream_n=1 << 26, reduce_n=1 << 27, transpose=8192, sgemm=4096, repeats=15, batch_seconds=0.004, budget_seconds=4.0
)
QUICK = Sizes(
    stream_n=1 << 24, reduce_n=1 << 25, transpose=4096, sgemm=2048, repeats=5, batch_seconds=0.002, budget_seconds=1.0
)


class Timer:
    """Inputs, timing and ceilings on the current GPU (CuPy arrays, Numba for events and views)."""

    def __init__(self, sizes: Sizes, seed: int, log=print):
        import cupy as cp
        from numba import cuda

        self.cp, self.cuda = cp, cuda
        self.sizes, self.seed, self.log = sizes, seed, log
        self.rng = cp.random.default_rng(seed)
        self.dev = cuda.get_current_device()
        self.sm_count = int(self.dev.MULTIPROCESSOR_COUNT)

    # -- inputs --------------------------------------------------------------------------------
    def rand(self, shape, low=-1.0, high=1.0):
        cp = self.cp
        return self.rng.random(shape, dtype=cp.float32) * cp.float32(high - low) + cp.float32(low)

    def nb(self, a):
        """A Numba view of a CuPy array (no copy, no stream sync: both use the default stream)."""
        return self.cuda.as_cuda_array(a, sync=False)

    def free(self):
        self.cp.cuda.Device().synchronize()
        self.cp.get_default_memory_pool().free_all_blocks()

    # -- timing --------------------------------------------------------------------------------
    def time(self, launch: Callable[[], None]):
        """Median seconds per launch, and the number of timed batches.

        One untimed launch goes first in every batch so that the GPU is busy while Python queues
        the timed ones: the start event then fires when the untimed launch ends, with the timed
        launches already waiting, and Numba's per-launch Python overhead is not measured.
        """
        cuda = self.cuda
        launch()
        cuda.synchronize()
        t0 = time.perf_counter()
        launch()
        cuda.synchronize()
        rough = max(time.perf_counter() - t0, 1e-6)
        inner = int(min(50, max(1, math.ceil(self.sizes.batch_seconds / rough))))
        start, end = cuda.event(timing=True), cuda.event(timing=True)
        samples = []
        began = time.perf_counter()
        for _ in range(self.sizes.repeats):
            launch()
            start.record()
            for _ in range(inner):
                launch()
            end.record()
            end.synchronize()
            samples.append(cuda.event_elapsed_time(start, end) / 1e3 / inner)
            if len(samples) >= 3 and time.perf_counter() - began > self.sizes.budget_seconds:
                break
        return statistics.median(samples), len(samples)

    # -- ceilings ------------------------------------------------------------------------------
    def ceiling_copy(self):
        cp = self.cp
        n = self.sizes.stream_n
        src, dst = self.rand(n), cp.empty(n, dtype=cp.float32)
        nbytes = src.nbytes

        def launch():
            cp.cuda.runtime.memcpyAsync(dst.data.ptr, src.data.ptr, nbytes, cp.cuda.runtime.memcpyDeviceToDevice, 0)

        launch()
        if not bool((dst == src).all()):
            raise RuntimeError("device-to-device copy produced different bytes")
        seconds, runs = self.time(launch)
        src = dst = None  # free the buffers now (launch() is not called again)
        self.free()
        return report.Ceiling(
            "copy",
            "Device-to-device copy",
            2 * nbytes / seconds,
            f"`cudaMemcpyAsync`, {nbytes / 2**20:.0f} MiB, read + write bytes, median of {runs}"
            + self._nominal_bandwidth(2 * nbytes / seconds),
        )

    def _nominal_bandwidth(self, measured):
        try:  # attributes the driver may not report (deprecated in CUDA 13 on some systems)
            clock_khz = int(self.dev.MEMORY_CLOCK_RATE)
            bus_bits = int(self.dev.GLOBAL_MEMORY_BUS_WIDTH)
        except Exception:  # nice to have only: the report leaves the nominal peak out
            return ""
        if not clock_khz or not bus_bits:
            return ""
        peak = 2 * clock_khz * 1e3 * bus_bits / 8
        return (
            f"; nominal DRAM peak from driver attributes {peak / 1e9:,.0f} GB/s "
            f"(copy reaches {100 * measured / peak:.0f}%)"
        )

    def ceiling_sgemm(self):
        cp = self.cp
        from cupy._core import _routines_linalg as linalg

        s = self.sizes.sgemm
        A, B = self.rand((s, s)), self.rand((s, s))
        C = cp.empty((s, s), dtype=cp.float32)

        def launch():
            cp.matmul(A, B, out=C)

        launch()
        err = self.sgemm_error(A, B, C)
        compute = linalg.compute_type_to_str(linalg.get_compute_type(cp.float32))
        tf32 = "TF32 suspected: error too large for FP32" if err > 1e-6 else "plain FP32"
        seconds, runs = self.time(launch)
        A = B = C = None  # free the buffers now (launch() is not called again)
        self.free()
        return report.Ceiling(
            "sgemm",
            "cuBLAS SGEMM (float32, TF32 off)",
            2 * s**3 / seconds,
            f"`cupy.matmul`, {s}³, CuPy compute type {compute}; scaled error vs float64 "
            f"{err:.1e} ({tf32}); median of {runs}",
        )

    # -- checking ------------------------------------------------------------------------------
    def sgemm_error(self, A, B, C, rows=64):
        """max |C - C64| / (|A| @ |B|) over a random sample of rows (float64 on the GPU)."""
        cp = self.cp
        import numpy as np

        pick = np.random.default_rng(self.seed).choice(A.shape[0], size=min(rows, A.shape[0]), replace=False)
        idx = cp.asarray(np.sort(pick))
        A64, B64 = A[idx].astype(cp.float64), B.astype(cp.float64)
        want = A64 @ B64
        scale = cp.maximum(cp.abs(A64) @ cp.abs(B64), 1e-30)
        return report.max_scaled_error(C[idx], want, scale, xp=cp)


def sgemm_timer(size: int, seed: int) -> Timer:
    """A Timer for one SGEMM size with a shorter timing budget (the tuning and CUDA C scripts)."""
    return Timer(dataclasses.replace(FULL, sgemm=size, repeats=9, budget_seconds=1.5), seed, log=lambda *a: None)


def slug(name: str) -> str:
    """'NVIDIA H200' -> 'h200', 'NVIDIA H100 80GB HBM3' -> 'h100-80gb': a record's file name per GPU kind."""
    words = re.findall(r"[a-z0-9]+", name.lower().replace("nvidia", ""))
    return "-".join(words[:2]) or "gpu"


def machine() -> dict:
    """Where a recorded benchmark ran: GPU, driver, library versions, date (stored with the JSON)."""
    import cupy as cp
    import numba_cuda
    from numba import cuda

    dev = cuda.get_current_device()
    cc = dev.compute_capability
    drv = cuda.cudadrv.driver.driver.get_version()
    return {
        "GPU": f"{dev.name.decode() if isinstance(dev.name, bytes) else dev.name} (sm_{cc[0]}{cc[1]}, "
        f"{dev.MULTIPROCESSOR_COUNT} SMs)",
        "driver CUDA": f"{drv[0]}.{drv[1]}",
        "numba-cuda": numba_cuda.__version__,
        "cupy": cp.__version__,
        "python": platform.python_version(),
        "host CPU": host_cpu(),  # host-side figures (launch costs, the CPU baselines) depend on it
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
    }


def host_cpu(cpuinfo: str = "/proc/cpuinfo") -> str:
    """The host's CPU model and its logical CPU count, e.g. "AMD EPYC 9654 96-Core Processor x 16"."""
    import os

    try:
        with open(cpuinfo) as f:
            model = next((ln.split(":", 1)[1].strip() for ln in f if ln.startswith("model name")), "")
    except OSError:
        model = ""
    return f"{model or platform.processor() or 'unknown'} x {os.cpu_count()}"
