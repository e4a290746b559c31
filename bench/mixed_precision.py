"""Notebook 18's figures: TFLOP/s of its WMMA kernel against cuBLAS at FP16/BF16-class and FP32 inputs, and the
error each precision costs against an FP64 reference as K grows.

    COURSE_MODE=gpu python bench/mixed_precision.py            # writes docs/data/mixed-precision-<gpu>.json

Timing: CUDA events around --reps launches on one stream, after --warmup untimed ones, the median of --rounds
rounds; every timed result is checked against float64 first (a wrong kernel records its error, not a figure).
Rows, each on M = N = K = --size (a multiple of 16):
- "wmma fp16->fp32": notebook 18's kernel (helpers/problems/nb18.WMMA_AB_SRC, C = A B, one warp per 16x16 tile,
  no shared memory: a teaching kernel, not a tuned one) on float16 A, B and float32 C;
- "cuBLAS fp16 (fp32 accumulate)": cupy.matmul on float16 (CuPy 14 calls cublasGemmEx with
  CUBLAS_COMPUTE_32F and the tensor-op algorithm);
- "cuBLAS fp32": cupy.matmul on float32 with the default compute type (CUBLAS_COMPUTE_32F, no tensor cores);
- "cuBLAS tf32": the same with cupy._core.set_compute_type(float32, COMPUTE_TYPE_TF32)
  (CUBLAS_COMPUTE_32F_FAST_TF32).
The error table runs on the GPU as well: max |C - C64| / (|A| |B|)[same element], K from 256 to --size.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

TILE = 16


def tflops(m: int, n: int, k: int, ms: float) -> float:
    """2 m n k floating-point operations (a multiply and an add per term) in ms milliseconds, in TFLOP/s."""
    if ms <= 0:
        raise ValueError(f"a time must be positive, not {ms} ms")
    return 2.0 * m * n * k / (ms * 1e-3) / 1e12


def relative_error(got, a64, b64) -> float:
    """max over elements of |got - A B| / (|A| |B|): the error measured in the units a rounding bound uses."""
    import numpy as np

    exact = a64 @ b64
    scale = np.abs(a64) @ np.abs(b64)
    return float(np.max(np.abs(np.asarray(got, np.float64) - exact) / np.where(scale > 0, scale, 1.0)))


def check_size(size: int) -> int:
    if size <= 0 or size % TILE:
        raise ValueError(f"--size must be a positive multiple of {TILE}, not {size}")
    return size


def _time(cp, launch, warmup: int, reps: int, rounds: int) -> float:
    stream = cp.cuda.Stream(non_blocking=True)
    times = []
    with stream:
        for _ in range(warmup):
            launch()
        for _ in range(rounds):
            start, end = cp.cuda.Event(), cp.cuda.Event()
            start.record(stream)
            for _ in range(reps):
                launch()
            end.record(stream)
            end.synchronize()
            times.append(cp.cuda.get_elapsed_time(start, end) / reps)
    return statistics.median(times)


def measure(cp, np, size: int, warmup: int, reps: int, rounds: int) -> dict:
    from cupy._core import _routines_linalg as linalg

    from helpers.problems.nb18 import WMMA_AB_SRC

    rng = np.random.default_rng(0)
    a64, b64 = rng.standard_normal((size, size)), rng.standard_normal((size, size))
    a16, b16 = cp.asarray(a64.astype(np.float16)), cp.asarray(b64.astype(np.float16))
    a32, b32 = cp.asarray(a64.astype(np.float32)), cp.asarray(b64.astype(np.float32))
    h64 = (cp.asnumpy(a16).astype(np.float64), cp.asnumpy(b16).astype(np.float64))
    f64 = (cp.asnumpy(a32).astype(np.float64), cp.asnumpy(b32).astype(np.float64))
    from helpers import cuda_c

    kernel = cp.RawKernel(WMMA_AB_SRC, "wmma_ab", options=cuda_c.include_options())  # mma.h needs crt/mma.h too
    c = cp.zeros((size, size), cp.float32)
    n32 = np.int32(size)

    def wmma():
        kernel((size // TILE, size // TILE), (32,), (a16, b16, c, n32, n32, n32))

    rows = {}

    def row(name, launch, result, inputs, tol):
        c.fill(0)
        launch()
        cp.cuda.Device().synchronize()
        err = relative_error(cp.asnumpy(result()), *inputs)
        if err > tol:
            rows[name] = {"error": f"result off by {err:.3g} (more than {tol:g}): not timed"}
            return
        ms = _time(cp, launch, warmup, reps, rounds)
        rows[name] = {"ms": ms, "tflops": tflops(size, size, size, ms), "rel_error": err}

    row("wmma fp16->fp32", wmma, lambda: c, h64, 1e-5)
    out = {}
    row("cuBLAS fp16 (fp32 accumulate)", lambda: out.__setitem__("c", a16 @ b16), lambda: out["c"], h64, 1e-2)
    old = linalg.get_compute_type(np.float32)
    try:
        linalg.set_compute_type(np.float32, linalg.COMPUTE_TYPE_FP32)
        row("cuBLAS fp32", lambda: out.__setitem__("c", a32 @ b32), lambda: out["c"], f64, 1e-5)
        linalg.set_compute_type(np.float32, linalg.COMPUTE_TYPE_TF32)
        row("cuBLAS tf32", lambda: out.__setitem__("c", a32 @ b32), lambda: out["c"], f64, 1e-2)
    finally:
        linalg.set_compute_type(np.float32, old)
    return rows


def errors_by_k(cp, np, size: int) -> list:
    """The error of each precision against float64 at K = 256, 1024, ... up to size (M = N = 256)."""
    from cupy._core import _routines_linalg as linalg

    rng = np.random.default_rng(1)
    out, k = [], 256
    old = linalg.get_compute_type(np.float32)
    try:
        while k <= size:
            a, b = rng.standard_normal((256, k)), rng.standard_normal((k, 256))
            h = (a.astype(np.float16).astype(np.float64), b.astype(np.float16).astype(np.float64))
            f = (a.astype(np.float32).astype(np.float64), b.astype(np.float32).astype(np.float64))
            r = {"K": k}
            r["fp16 in, fp32 acc"] = relative_error(
                cp.asnumpy(cp.asarray(h[0], cp.float16) @ cp.asarray(h[1], cp.float16)), *h
            )
            linalg.set_compute_type(np.float32, linalg.COMPUTE_TYPE_FP32)
            r["fp32"] = relative_error(cp.asnumpy(cp.asarray(f[0], cp.float32) @ cp.asarray(f[1], cp.float32)), *f)
            linalg.set_compute_type(np.float32, linalg.COMPUTE_TYPE_TF32)
            r["tf32"] = relative_error(cp.asnumpy(cp.asarray(f[0], cp.float32) @ cp.asarray(f[1], cp.float32)), *f)
            out.append(r)
            k *= 4
    finally:
        linalg.set_compute_type(np.float32, old)
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=None, help="JSON record (default docs/data/mixed-precision-<gpu>.json)")
    ap.add_argument("--size", type=int, default=4096, help="M = N = K of the timed products (multiple of 16)")
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--reps", type=int, default=10, help="launches per timed round")
    ap.add_argument("--rounds", type=int, default=7, help="rounds (median)")
    args = ap.parse_args(argv)
    check_size(args.size)

    import helpers

    if not helpers.on_gpu():
        print(
            f"bench/mixed_precision.py needs a GPU ({helpers.MODE.reason}); run it on a GPU machine with "
            "COURSE_MODE=gpu.",
            file=sys.stderr,
        )
        return 2
    import cupy as cp
    import numpy as np

    from bench.timing import machine, slug

    record = {
        "machine": machine(),
        "settings": vars(args),
        "rows": measure(cp, np, args.size, args.warmup, args.reps, args.rounds),
        "error_by_k": errors_by_k(cp, np, args.size),
    }
    out = Path(args.out or ROOT / "docs" / "data" / f"mixed-precision-{slug(record['machine']['GPU'])}.json")
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(record, indent=1) + "\n")
    print(f"{record['machine']['GPU']}, M = N = K = {args.size}, median of {args.rounds}:")
    for name, r in record["rows"].items():
        print(f"  {name:32s}: " + (r["error"] if "error" in r else f"{r['tflops']:7.1f} TFLOP/s ({r['ms']:.3f} ms)"))
    for r in record["error_by_k"]:
        print("  K = {K:5d}: ".format(**r) + ", ".join(f"{k} {v:.2e}" for k, v in r.items() if k != "K"))
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
