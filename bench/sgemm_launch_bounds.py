"""Does `launch_bounds=` or `max_registers=` change the SGEMM ladder? The tuned generated Numba kernel
(bench/sgemm.py, docs/data/sgemm_tune.json's best config) compiled as it is and with each option, on one GPU.

    COURSE_MODE=gpu python bench/sgemm_launch_bounds.py --out docs/data/sgemm_launch_bounds.json

numba-cuda 0.30's `@cuda.jit(launch_bounds=(T, B))` writes `.maxntid T` and `.minnctapersm B` into the PTX, so
ptxas must fit B blocks of T threads on an SM (capping registers at 65536 / (T * B)); `max_registers=R` caps
them directly. Each variant is compiled in its own worker process (5-40 s each, in parallel), checked against
float64 before it is timed (a wrong result is recorded, not timed), and timed alone on the GPU; cuBLAS (TF32
off) is timed in the same run as the ceiling. The record keeps registers, spills (local bytes) and resident
blocks per SM: what explains a change of speed, or why there is none.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench import sgemm_tune  # noqa: E402  (sets CUPY_TF32=0 before CuPy is imported)
from bench.timing import machine  # noqa: E402


def variants(threads: int) -> list[tuple[str, tuple]]:
    """(label, cuda.jit keywords as pairs): as compiled by the ladder, then each option."""
    out = [("as in the ladder", ())]
    for blocks in (1, 2, 3):
        out.append((f"launch_bounds=({threads}, {blocks})", (("launch_bounds", (threads, blocks)),)))
    for regs in (128, 96, 64):
        out.append((f"max_registers={regs}", (("max_registers", regs),)))
    return out


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", default="docs/data/sgemm_launch_bounds.json")
    p.add_argument("--size", type=int, default=4096)
    p.add_argument("--seed", type=int, default=20261123)
    a = p.parse_args(argv)
    from bench import sgemm

    cfg = sgemm.tuned()
    lock = mp.get_context("spawn").Lock()
    sgemm_tune._init(lock)
    began = time.perf_counter()
    before = sgemm_tune.cublas(a.size, a.seed)
    todo = variants(cfg.threads)
    recs = []
    with mp.get_context("spawn").Pool(len(todo), initializer=sgemm_tune._init, initargs=(lock,)) as pool:
        jobs = [pool.apply_async(sgemm_tune.measure, (cfg.as_dict(), a.size, a.seed, False, opts)) for _, opts in todo]
        for (label, _), job in zip(todo, jobs):
            try:
                r = job.get(timeout=600)
            except Exception as e:  # a worker that died is data, not a crash of the benchmark
                r = {"status": "failed", "error": f"{type(e).__name__}: {e}"}
            recs.append({"variant": label, **r})
    after = sgemm_tune.cublas(a.size, a.seed)
    ceiling = max(before["tflops"], after["tflops"])
    for r in recs:
        if r.get("status") == "ok":
            r["of_cublas"] = r["tflops"] / ceiling
        print(
            f"{r['variant']:26s} {r.get('status')}: {r.get('tflops', 0):5.1f} TFLOP/s "
            f"({100 * r.get('of_cublas', 0):.0f}% of cuBLAS) regs {r.get('registers', '-')} "
            f"local {r.get('local_bytes', '-')} B blocks/SM {r.get('blocks_per_sm', '-')} {r.get('error', '')}",
            flush=True,
        )
    out = {
        "what": "the tuned generated Numba SGEMM (bench/sgemm.py) with cuda.jit's launch_bounds= and max_registers=; "
        "fractions of cuBLAS FP32 (TF32 off) measured in the same run (the better of before and after)",
        "config": cfg.name(),
        "size": a.size,
        "machine": machine(),
        "cublas": {"before": before, "after": after, "tflops": ceiling},
        "variants": recs,
        "seconds": round(time.perf_counter() - began, 1),
    }
    Path(a.out).parent.mkdir(parents=True, exist_ok=True)
    Path(a.out).write_text(json.dumps(out, indent=1) + "\n")
    print(f"cuBLAS {ceiling:.1f} TFLOP/s; wrote {a.out} in {out['seconds']} s")
    return 0 if any(r.get("status") == "ok" for r in recs) else 1


if __name__ == "__main__":
    sys.exit(main())
