"""Tensor-core GEMMs in CUDA C against cuBLAS at the same precision, and what lower precision costs in
accuracy: bench/tensor_gemm.cu (mma.sync, the instruction since Ampere) and bench/tensor_wgmma.cu
(Hopper's warpgroup wgmma, compiled for sm_90a).

    COURSE_MODE=gpu python bench/tensor_gemm.py --out docs/data

Inputs: A and B uniform in [-1, 1) in float32, rounded to bf16 (and fp16) for the tensor-core rows.
Rows: cuBLAS at FP32 (TF32 off), TF32, bf16 and fp16 (FP32 accumulation, `cublasGemmEx`), and the
course's kernels for each tile shape in VARIANTS (mma.sync) and WGMMA_VARIANTS at bf16 and fp16.
Each result is checked before timing: the course's kernel against float64 of the same rounded inputs
(it must be as exact as FP32 accumulation allows), and every row's error against float64 of the float32
inputs is recorded (the accuracy cost of the precision). Timing: CUDA events, a warm-up, the median
of batches (bench/timing.py).
Writes ``tensor-gemm-<gpu>.json`` in --out and judges the issue-31 target with bench/report.py.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

SOURCE = Path(__file__).with_name("tensor_gemm.cu")
WGMMA_SOURCE = Path(__file__).with_name("tensor_wgmma.cu")
# (label, macros): block tile BM x BN x BK, warp tile WM x WN, shared-memory stages
VARIANTS = (
    ("128x128x32 tile, 64x32 per warp, 4 stages", {"BM": 128, "BN": 128, "BK": 32, "WM": 64, "WN": 32, "STAGES": 4}),
    ("128x128x64 tile, 64x32 per warp, 3 stages", {"BM": 128, "BN": 128, "BK": 64, "WM": 64, "WN": 32, "STAGES": 3}),
    ("256x128x32 tile, 64x64 per warp, 3 stages", {"BM": 256, "BN": 128, "BK": 32, "WM": 64, "WN": 64, "STAGES": 3}),
    ("256x128x32 tile, 64x64 per warp, 4 stages", {"BM": 256, "BN": 128, "BK": 32, "WM": 64, "WN": 64, "STAGES": 4}),
    ("256x128x64 tile, 64x64 per warp, 3 stages", {"BM": 256, "BN": 128, "BK": 64, "WM": 64, "WN": 64, "STAGES": 3}),
    ("256x128x64 tile, 64x32 per warp, 3 stages", {"BM": 256, "BN": 128, "BK": 64, "WM": 64, "WN": 32, "STAGES": 3}),
    ("128x256x64 tile, 64x64 per warp, 3 stages", {"BM": 128, "BN": 256, "BK": 64, "WM": 64, "WN": 64, "STAGES": 3}),
    # mma.sync without `volatile`: the compiler may interleave it with the next k-step's ldmatrix
    (
        "128x256x64 tile, 64x64 per warp, 4 stages, free mma",
        {"BM": 128, "BN": 256, "BK": 64, "WM": 64, "WN": 64, "STAGES": 4, "FREEMMA": 1},
    ),
    (
        "256x128x64 tile, 64x64 per warp, 4 stages, free mma",
        {"BM": 256, "BN": 128, "BK": 64, "WM": 64, "WN": 64, "STAGES": 4, "FREEMMA": 1},
    ),
    (
        "128x128x64 tile, 64x64 per warp, 3 stages, free mma",
        {"BM": 128, "BN": 128, "BK": 64, "WM": 64, "WN": 64, "STAGES": 3, "FREEMMA": 1},
    ),
)
# Hopper's wgmma (bench/tensor_wgmma.cu): BN columns per block, WGS warpgroups of 64 rows each, the k-tile
# always 64 deep; INFLIGHT 1 keeps one k-tile's wgmma running across the next barrier.
WGMMA_VARIANTS = (
    ("128x256x64 tile, 2 warpgroups, 4 stages", {"BN": 256, "WGS": 2, "STAGES": 4, "INFLIGHT": 0}),
    (
        "128x256x64 tile, 2 warpgroups, 4 stages, one k-tile in flight",
        {"BN": 256, "WGS": 2, "STAGES": 4, "INFLIGHT": 1},
    ),
    ("128x128x64 tile, 2 warpgroups, 5 stages", {"BN": 128, "WGS": 2, "STAGES": 5, "INFLIGHT": 0}),
    (
        "128x128x64 tile, 2 warpgroups, 5 stages, one k-tile in flight",
        {"BN": 128, "WGS": 2, "STAGES": 5, "INFLIGHT": 1},
    ),
    (
        "256x128x64 tile, 4 warpgroups, 4 stages, one k-tile in flight",
        {"BN": 128, "WGS": 4, "STAGES": 4, "INFLIGHT": 1},
    ),
)
# cudaDataType and cublasComputeType values (library_types.h, cublas_api.h)
CUDA_R_32F, CUDA_R_16F, CUDA_R_16BF = 0, 2, 14
COMPUTE_32F, COMPUTE_32F_FAST_TF32 = 68, 77
GEMM_DEFAULT = -1


def threads(m: dict) -> int:
    if "WGS" in m:  # wgmma: warpgroups of 128 threads
        return 128 * m["WGS"]
    return (m["BM"] // m["WM"]) * (m["BN"] // m["WN"]) * 32


def tile(m: dict) -> tuple:
    """The block tile (BM, BN, BK) of either kernel's macros."""
    return (64 * m["WGS"], m["BN"], 64) if "WGS" in m else (m["BM"], m["BN"], m["BK"])


def shared_bytes(m: dict) -> int:
    bm, bn, bk = tile(m)
    # the wgmma kernel rounds its ring's start up to 1024 bytes (the swizzle's period): 1024 more to spare
    return m["STAGES"] * (bm + bn) * bk * 2 + (1024 if "WGS" in m else 0)


def to_bits(cp, x, precision: str):
    """float32 array -> uint16 bits of bf16 (round to nearest even) or fp16."""
    if precision == "fp16":
        return x.astype(cp.float16).view(cp.uint16)
    u = x.view(cp.uint32)
    return ((u + (((u >> 16) & 1) + 0x7FFF)) >> 16).astype(cp.uint16)


def from_bits(cp, bits, precision: str):
    if precision == "fp16":
        return bits.view(cp.float16).astype(cp.float32)
    return (bits.astype(cp.uint32) << 16).view(cp.float32)


def compile_kernel(macros: dict, precision: str, arch: str):
    """NVRTC through the course's compile (its include path has cuda_bf16.h), loaded with cuda.core.
    wgmma exists only on sm_90a (the architecture-specific target): the arch gets its "a"."""
    from cuda.core import ObjectCode

    from helpers import cuda_c

    defs = [f"-D{k}={v}" for k, v in macros.items()] + (["-DHALF=1"] if precision == "fp16" else [])
    wg = "WGS" in macros
    source, entry, arch = (WGMMA_SOURCE, "wg_gemm", arch + "a") if wg else (SOURCE, "tc_gemm", arch)
    cubin = cuda_c.compile(source.read_text(), target="cubin", arch=arch, options=tuple(defs))
    return ObjectCode.from_cubin(cubin).get_kernel(entry)


def allow_shared(kernel, nbytes: int) -> None:
    """Opt in to more than 48 KiB of dynamic shared memory (the kernel's ring of tiles)."""
    from cuda.bindings import driver
    from cuda.core import Device

    attr = driver.CUfunction_attribute.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES
    handle = kernel.handle
    if isinstance(handle, driver.CUkernel):
        (err,) = driver.cuKernelSetAttribute(attr, nbytes, handle, driver.CUdevice(Device().device_id))
    else:
        (err,) = driver.cuFuncSetAttribute(handle, attr, nbytes)
    if err != driver.CUresult.CUDA_SUCCESS:
        raise RuntimeError(f"cannot allow {nbytes} bytes of shared memory: {err.name}")


def course_launcher(kernel, macros, s, A, Bt, C):
    import numpy as np
    from cuda.core import Device, LaunchConfig, launch

    bm, bn, bk = tile(macros)
    if s % bm or s % bn or s % bk:
        raise ValueError(f"the size must be a multiple of {bm}, {bn} and {bk}")
    cfg = LaunchConfig(grid=(s // bm) * (s // bn), block=threads(macros), shmem_size=shared_bytes(macros))
    stream, args = Device().default_stream, (np.int32(s), np.int32(s), np.int32(s), A.data.ptr, Bt.data.ptr, C.data.ptr)
    return lambda: launch(stream, cfg, kernel, *args)


def cublas_launcher(cp, s, A, Bt, C, dtype: int, compute: int):
    """C (row-major) = A @ Bt.T through cublasGemmEx: column-major, so C^T = Bt^T... written as op(X) = X^T."""
    import numpy as np
    from cupy_backends.cuda.libs import cublas

    handle = cp.cuda.device.get_cublas_handle()
    one, zero = np.ones(1, np.float32), np.zeros(1, np.float32)
    a_ptr, b_ptr = one.ctypes.data, zero.ctypes.data

    def go():
        cublas.gemmEx(
            handle, cublas.CUBLAS_OP_T, cublas.CUBLAS_OP_N, s, s, s, a_ptr, Bt.data.ptr, dtype, s,
            A.data.ptr, dtype, s, b_ptr, C.data.ptr, CUDA_R_32F, s, compute, GEMM_DEFAULT,
        )  # fmt: skip

    go.keep = (one, zero)  # the scalars must outlive the launches
    return go


def scaled_error(cp, C, A64, B64, rows):
    """max |C - A64 @ B64| / (|A64| @ |B64|) over the sampled rows (float64 on the GPU)."""
    want = A64[rows] @ B64
    scale = cp.maximum(cp.abs(A64[rows]) @ cp.abs(B64), 1e-30)
    return float(cp.max(cp.abs(C[rows] - want) / scale))


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", default="docs/data", help="folder for tensor-gemm-<gpu>.json")
    p.add_argument("--size", type=int, default=8192)
    p.add_argument("--seed", type=int, default=20261128)
    p.add_argument("--precisions", default="bf16,fp16", help="input formats of the course's kernel to time")
    p.add_argument("--docs", default="", help="a Markdown report to append the table and the target to")
    a = p.parse_args(argv)
    from cuda.core import Device

    from bench.report import judge_limits, render_limits
    from bench.timing import machine, sgemm_timer, slug

    dev = Device(0)
    dev.set_current()
    t = sgemm_timer(a.size, a.seed)
    cp, s = t.cp, a.size
    A32, B32 = t.rand((s, s)), t.rand((s, s))
    rows = cp.asarray(sorted(set(int(i) for i in cp.random.default_rng(a.seed).integers(0, s, 48).get())))
    exact32 = (A32.astype(cp.float64), B32.astype(cp.float64))
    C = cp.empty((s, s), dtype=cp.float32)
    flops = 2 * s**3
    recs = []

    def measure(rec, go, exact):
        C.fill(cp.nan)
        go()
        dev.sync()
        rec["error_vs_fp64_of_fp32_inputs"] = scaled_error(cp, C, *exact32, rows)
        if exact is not None:
            rec["error_vs_fp64_of_rounded_inputs"] = err = scaled_error(cp, C, *exact, rows)
            if not err <= 4 * s * 2.0**-24:  # FP32 accumulation of exact products
                rec["status"] = "wrong result"
                return
        secs, runs = t.time(go)
        rec.update(status="ok", seconds=secs, runs=runs, tflops=flops / secs / 1e12)

    Bt32 = cp.ascontiguousarray(B32.T)
    for label, compute in (("cuBLAS FP32 (TF32 off)", COMPUTE_32F), ("cuBLAS TF32", COMPUTE_32F_FAST_TF32)):
        rec = {"name": label, "kernel": "cublas", "precision": "fp32" if compute == COMPUTE_32F else "tf32"}
        exact = exact32 if compute == COMPUTE_32F else None  # TF32 rounds the inputs: recorded, not checked
        measure(rec, cublas_launcher(cp, s, A32, Bt32, C, CUDA_R_32F, compute), exact)
        recs.append(rec)
    del Bt32
    for precision, dtype in (("bf16", CUDA_R_16BF), ("fp16", CUDA_R_16F)):
        if precision not in a.precisions.split(","):
            continue
        A16, Bt16 = to_bits(cp, A32, precision), to_bits(cp, cp.ascontiguousarray(B32.T), precision)
        exact = (from_bits(cp, A16, precision).astype(cp.float64), from_bits(cp, Bt16, precision).T.astype(cp.float64))
        base = {"name": f"cuBLAS {precision}", "kernel": "cublas", "precision": precision}
        measure(base, cublas_launcher(cp, s, A16, Bt16, C, dtype, COMPUTE_32F), exact)
        recs.append(base)
        designs = [("mma.sync", *v) for v in VARIANTS] + [("wgmma", *v) for v in WGMMA_VARIANTS]
        for instruction, label, macros in designs:
            rec = {"name": f"course {instruction} {precision}, {label}", "kernel": "course", "precision": precision}
            rec["instruction"] = instruction
            rec["macros"] = macros
            try:
                kern = compile_kernel(macros, precision, f"sm_{dev.arch}")
                allow_shared(kern, shared_bytes(macros))
                at = kern.attributes
                rec.update(registers=at.num_regs, local_bytes=at.local_size_bytes, shared_bytes=shared_bytes(macros))
                occ = kern.occupancy.max_active_blocks_per_multiprocessor(threads(macros), shared_bytes(macros))
                rec["blocks_per_sm"] = occ
                measure(rec, course_launcher(kern, macros, s, A16, Bt16, C), exact)
            except Exception as e:  # a variant that fails is recorded, the others still run
                rec.update(status="failed", error=f"{type(e).__name__}: {' '.join(str(e).split())[:300]}")
            if rec.get("status") == "ok" and base.get("status") == "ok":
                rec["of_cublas"] = base["seconds"] / rec["seconds"]
            recs.append(rec)
        del A16, Bt16, exact
        t.free()
    for r in recs:
        print(
            f"{r['name']:62s} {r['status']:12s} {r.get('tflops', 0):6.1f} TFLOP/s "
            f"{100 * r.get('of_cublas', 0):4.0f}% err(fp32 in) {r.get('error_vs_fp64_of_fp32_inputs', 0):.1e} "
            f"regs {r.get('registers', '-')} blocks/SM {r.get('blocks_per_sm', '-')} {r.get('error', '')}",
            flush=True,
        )
    m = machine()
    record = {"size": s, "machine": m, "seed": a.seed, "rows": recs}
    verdicts = [v for v in judge_limits({"tensor_gemm": record}) if v.limit.record == "tensor_gemm"]
    record["targets"] = [{"target": v.limit.name, "measured": v.value, "result": v.result} for v in verdicts]
    print(render_limits(verdicts), flush=True)
    out = Path(a.out) / f"tensor-gemm-{slug(m['GPU'].split('(')[0])}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(record, indent=1) + "\n")
    if a.docs:
        with open(a.docs, "a") as f:
            f.write("\n" + markdown(record) + "\n" + render_limits(verdicts) + "\n")
    return 0 if any(r.get("status") == "ok" and r["kernel"] == "course" for r in recs) else 1


def markdown(record: dict) -> str:
    """The record as a table: every row that ran, its speed against cuBLAS at its precision."""
    lines = [
        f"## Tensor-core GEMM, {record['size']}³ (`bench/tensor_gemm.py`)",
        "",
        "| Kernel | TFLOP/s | of cuBLAS | registers | blocks/SM | error vs FP64 of FP32 inputs |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for r in record["rows"]:
        if r.get("status") != "ok":
            lines.append(f"| {r['name']} | {r.get('status')}: {r.get('error', '')} | | | | |")
            continue
        share = f"{100 * r['of_cublas']:.0f} %" if "of_cublas" in r else "—"
        lines.append(
            f"| {r['name']} | {r['tflops']:.1f} | {share} | {r.get('registers', '—')} | {r.get('blocks_per_sm', '—')} "
            f"| {r['error_vs_fp64_of_fp32_inputs']:.1e} |"
        )
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    sys.exit(main())
