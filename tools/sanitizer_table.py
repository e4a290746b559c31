"""compute-sanitizer's four tools beside the course's CPU tracer, on the same buggy kernels.

    python tools/sanitizer_table.py --gpu --out docs/data/sanitizer.json    # on a GPU host (minutes)
    python tools/sanitizer_table.py --child NAME                             # one launch (run under the tool)

Every buggy kernel of the tracer's corpus (tests/corpus/buggy.py) is launched once, on the GPU,
under memcheck, racecheck, initcheck and synccheck (each a separate run with --error-exitcode),
plus one case the corpus cannot hold: a one-element overrun of a CuPy array, which lands inside
the memory pool's larger allocation. The record keeps, per kernel and tool, whether the tool
reported an error and its first error line. Notebook 15 sets it beside the tracer's verdicts,
which it computes live on the CPU.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TOOLS = ("memcheck", "racecheck", "initcheck", "synccheck")
POOL_CASE = "cupy_pool_overrun"
POOL_NOTE = "a @cuda.jit kernel without a guard writes element 1000 of a 1000-element CuPy array (pool memory)"


def corpus_cases():
    sys.path.insert(0, str(ROOT / "tests"))
    sys.path.insert(0, str(ROOT))
    import helpers  # noqa: F401 - before Numba: it picks the simulator or the GPU
    from corpus import BUGGY

    return [c for c in BUGGY if c.raises is None]


def child(name: str) -> int:
    import numpy as np
    from numba import cuda

    if name == POOL_CASE:
        import cupy as cp

        @cuda.jit
        def fill(out):
            i = cuda.grid(1)
            out[i] = 1.0  # no guard: thread 1000 writes one past the end

        a = cp.zeros(1000, dtype=cp.float32)
        fill[1, 1001](cuda.as_cuda_array(a))
        cuda.synchronize()
        return 0
    case = next(c for c in corpus_cases() if c.name == name)
    args = [cuda.to_device(a) if isinstance(a, np.ndarray) else a for a in case.make_args()]
    kern = (
        case.kernel[case.griddim, case.blockdim, 0, case.sharedmem]
        if case.configured
        else case.kernel[case.griddim, case.blockdim]
    )
    kern(*args)
    cuda.synchronize()
    return 0


def run_one(name: str, tool: str) -> dict:
    # --report-api-errors no: Numba's driver probing (cuGetProcAddress) would count as errors in every run
    cmd = [
        "compute-sanitizer",
        "--tool",
        tool,
        "--error-exitcode",
        "99",
        "--print-limit",
        "3",
        "--report-api-errors",
        "no",
    ]
    cmd += [sys.executable, str(Path(__file__).resolve()), "--child", name]
    t0 = time.perf_counter()
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=90, cwd=ROOT)
    except subprocess.TimeoutExpired:
        return {"caught": None, "hang": True, "note": "the launch never finished (killed after 90 s): a deadlock"}
    text = p.stdout + p.stderr
    m = re.search(r"ERROR SUMMARY: (\d+) error", text)
    race = re.search(r"RACECHECK SUMMARY: (\d+) hazards? displayed \((\d+) errors?, (\d+) warnings?\)", text)
    errors = int(m.group(1)) if m else (int(race.group(2)) + int(race.group(3)) if race else None)
    first = next(
        (
            ln.strip(" =")
            for ln in text.splitlines()
            if re.search(r"========= (Invalid|Race|Uninitialized|Barrier|Divergent|Program hit|.*hazard)", ln)
        ),
        "",
    )
    rec = {
        "caught": bool(errors),
        "errors": errors,
        "exit": p.returncode,
        "seconds": round(time.perf_counter() - t0, 1),
    }
    if first:
        rec["first"] = first[:200]
    if errors is None or p.returncode not in (0, 99):
        rec["caught"] = bool(errors) if errors is not None else None
        tail = [ln for ln in p.stderr.strip().splitlines() if ln.strip() and not ln.startswith("=========")]
        rec["note"] = (tail or ["no output"])[-1][:200]
    return rec


def gpu(out: Path, jobs: int, only=()) -> int:
    if not shutil.which("compute-sanitizer"):
        print("compute-sanitizer is not on PATH: install the CUDA toolkit, or run this where it is.")
        return 1
    names = [c.name for c in corpus_cases()] + [POOL_CASE]
    if only:
        names = [n for n in names if n in only]
    expect = {c.name: sorted(c.expect) for c in corpus_cases()}
    expect[POOL_CASE] = ["out_of_bounds"]
    results: dict = {n: {} for n in names}
    with concurrent.futures.ThreadPoolExecutor(jobs) as ex:
        futs = {ex.submit(run_one, n, t): (n, t) for n in names for t in TOOLS}
        for f in concurrent.futures.as_completed(futs):
            n, t = futs[f]
            results[n][t] = f.result()
            print(f"{n:28s} {t:10s} {results[n][t]}", flush=True)
    ver = subprocess.run(["compute-sanitizer", "--version"], capture_output=True, text=True).stdout.strip().splitlines()
    record = {
        "what": "compute-sanitizer run on each buggy kernel of tests/corpus (one launch per tool); caught = the "
        "tool reported at least one error",
        "compute-sanitizer": ver[-1] if ver else "?",
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "gpu": subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True).stdout.strip().splitlines()[0],
        "tracer_expects": expect,
        "notes": {POOL_CASE: POOL_NOTE},
        "results": results,
    }
    out.write_text(json.dumps(record, indent=1) + "\n")
    print(f"wrote {out}")
    return 0


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--gpu", action="store_true")
    p.add_argument("--child")
    p.add_argument("--out", default=str(ROOT / "docs/data/sanitizer.json"))
    p.add_argument("--only", nargs="*", default=(), help="just these cases")
    p.add_argument("--jobs", type=int, default=min(12, os.cpu_count() or 2))
    a = p.parse_args(argv)
    if a.child:
        return child(a.child)
    if a.gpu:
        return gpu(Path(a.out), a.jobs, a.only)
    p.print_help()
    return 0


if __name__ == "__main__":
    sys.exit(main())
