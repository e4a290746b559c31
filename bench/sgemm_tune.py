"""Autotune the generated SGEMM kernels (bench/sgemm.py) on the GPU and record why each is fast or slow.

    COURSE_MODE=gpu python bench/sgemm_tune.py --out docs/data/sgemm_tune.json [--size 4096] [--jobs 16]

Compiling one generated kernel takes Numba 5-40 s, so worker processes compile in parallel while a
lock lets only one of them use the GPU at a time: every timing runs alone on the GPU. Each config
is checked against float64 before it is timed (a wrong kernel is recorded as failed, never as
fast), and cuBLAS (TF32 off) is timed in the same run, before and after, as the ceiling.
For each config the record keeps what explains its speed: registers per thread, local memory
(spills), static shared memory, and resident blocks per SM from the driver's occupancy query.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("CUPY_TF32", "0")
os.environ.setdefault("NVIDIA_TF32_OVERRIDE", "0")
ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.timing import machine, sgemm_timer  # noqa: E402  (imports CuPy only when a Timer is made)

SIG = "void(float32[:, ::1], float32[:, ::1], float32[:, ::1])"
_LOCK = None


def _init(lock):
    global _LOCK
    _LOCK = lock


def attributes(kern, threads):
    """Registers, local (spill) bytes, shared bytes and resident blocks/SM of the compiled kernel."""
    from numba import cuda

    ovl = next(iter(kern.overloads.values()))
    fn = ovl._codelibrary.get_cufunc()  # Numba internals: the only way to the CUfunction's attributes
    ctx = cuda.current_context()
    blocks = ctx.get_active_blocks_per_multiprocessor(fn, threads, 0)
    dev = cuda.get_current_device()
    warps = blocks * threads // 32
    return {
        "registers": int(fn.attrs.regs),
        "local_bytes": int(fn.attrs.local),
        "shared_bytes": int(fn.attrs.shared),
        "blocks_per_sm": int(blocks),
        "occupancy": round(warps / (dev.MAX_THREADS_PER_MULTIPROCESSOR // 32), 3),
    }


def measure(cfg_dict, size, seed, guarded=False, jit_options=()):
    """Compile (in parallel with other workers), then time alone on the GPU; returns a record.
    ``jit_options``: cuda.jit keywords as (name, value) pairs (bench/sgemm_launch_bounds.py)."""
    from bench import sgemm

    cfg = sgemm.Config(**cfg_dict)
    rec = {"config": cfg_dict, "name": cfg.name(), "guarded": guarded}
    t0 = time.perf_counter()
    try:
        kern = sgemm.make_kernel(cfg, guarded=guarded, jit_options=tuple(jit_options))
        kern.compile(SIG)
        rec["compile_s"] = round(time.perf_counter() - t0, 1)
    except Exception as e:  # a config the compiler refuses is data, not a crash
        rec.update(status="compile failed", error=f"{type(e).__name__}: {str(e).splitlines()[0][:200]}")
        return rec
    with _LOCK:
        try:
            b = sgemm_timer(size, seed)
            cp = b.cp
            A, B = b.rand((size, size)), b.rand((size, size))
            C = cp.full((size, size), cp.nan, dtype=cp.float32)
            a_, b_, c_ = b.nb(A), b.nb(B), b.nb(C)
            grid = ((size + cfg.BN - 1) // cfg.BN, (size + cfg.BM - 1) // cfg.BM)
            block = (cfg.threads,)
            rec.update(attributes(kern, cfg.threads))
            kern[grid, block](a_, b_, c_)
            b.cuda.synchronize()
            err = b.sgemm_error(A, B, C)
            tol = size * 2.0**-24
            rec["scaled_error"] = float(err)
            if not err <= tol:
                rec.update(status="wrong result", error=f"scaled error {err:.1e} > {tol:.1e}")
                return rec
            secs, runs = b.time(lambda: kern[grid, block](a_, b_, c_))
            rec.update(status="ok", seconds=secs, runs=runs, tflops=2 * size**3 / secs / 1e12)
            A = B = C = a_ = b_ = c_ = None
            b.free()
        except Exception as e:
            rec.update(status="failed", error=f"{type(e).__name__}: {str(e).splitlines()[0][:200]}")
    return rec


def cublas(size, seed):
    with _LOCK:
        b = sgemm_timer(size, seed)
        c = b.ceiling_sgemm()
        b.free()
        return {"tflops": c.value / 1e12, "how": c.detail}


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", default="docs/data/sgemm_tune.json")
    p.add_argument("--size", type=int, default=4096)
    p.add_argument("--jobs", type=int, default=min(16, os.cpu_count() or 2))
    p.add_argument("--seed", type=int, default=20261123)
    p.add_argument("--limit", type=int, default=0, help="only the first N configs (a quick try)")
    a = p.parse_args(argv)
    from bench import sgemm

    space = [c.as_dict() for c in sgemm.search_space()]
    if a.limit:
        space = space[: a.limit]
    lock = mp.get_context("spawn").Lock()
    _init(lock)
    began = time.perf_counter()
    before = cublas(a.size, a.seed)
    print(f"cuBLAS before: {before['tflops']:.1f} TFLOP/s", flush=True)
    recs = []
    with mp.get_context("spawn").Pool(a.jobs, initializer=_init, initargs=(lock,), maxtasksperchild=4) as pool:
        jobs = [pool.apply_async(measure, (c, a.size, a.seed)) for c in space]
        for j in jobs:
            try:
                r = j.get(timeout=900)
            except Exception as e:
                r = {"status": "failed", "error": f"{type(e).__name__}: {e}"}
            recs.append(r)
            print(
                f"{r.get('name', '?'):28s} {r.get('status')}: {r.get('tflops', 0):5.1f} TFLOP/s "
                f"regs {r.get('registers', '-')} local {r.get('local_bytes', '-')} "
                f"blocks/SM {r.get('blocks_per_sm', '-')} compile {r.get('compile_s', '-')} s {r.get('error', '')}",
                flush=True,
            )
    after = cublas(a.size, a.seed)
    ceiling = max(before["tflops"], after["tflops"])
    for r in recs:
        if r.get("status") == "ok":
            r["of_cublas"] = r["tflops"] / ceiling
    ok = sorted((r for r in recs if r.get("status") == "ok"), key=lambda r: -r["tflops"])
    out = {
        "what": "generated Numba SGEMM configs (bench/sgemm.py) timed on one GPU; fractions of cuBLAS FP32 "
        "(TF32 off) measured in the same run (the better of before and after)",
        "size": a.size,
        "machine": machine(),
        "cublas": {"before": before, "after": after, "tflops": ceiling},
        "best": ok[0]["config"] if ok else None,
        "configs": recs,
        "seconds": round(time.perf_counter() - began, 1),
    }
    Path(a.out).parent.mkdir(parents=True, exist_ok=True)
    Path(a.out).write_text(json.dumps(out, indent=1) + "\n")
    if ok:
        print(f"best: {ok[0]['name']} {ok[0]['tflops']:.1f} TFLOP/s = {100 * ok[0]['of_cublas']:.0f}% of cuBLAS")
    print(f"wrote {a.out} in {out['seconds']} s")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
