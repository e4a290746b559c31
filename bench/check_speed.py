"""How long does `check()` take on a correct answer, in CPU mode, as a learner meets it?

    .venv/bin/python bench/check_speed.py [--repeat 5] [--only nb05]

Every shipped exercise is checked with its reference answer in one process, as in a JupyterLab
session: the compile server is started once first (timed on its own: a learner pays it once,
in the background, at their first kernel check), then each exercise is checked

- cold: the first check of that answer (a kernel's GPU compile check runs for real), and
- warm: the same answer again, `--repeat` times (the learner re-runs the cell; median).

The course's limit (issue 12): the median over exercises of a correct answer's check stays at or
under 1.5 s on the 2-core machine. Both medians are compared with it; the exit status is 1 when
either is over, and when any reference answer does not pass (a fast wrong verdict proves nothing).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import platform
import statistics
import sys
import time
import warnings
from pathlib import Path

os.environ["NUMBA_ENABLE_CUDASIM"] = "1"
os.environ.setdefault("COURSE_PROGRESS_FILE", os.devnull)  # never touch a learner's progress
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import helpers  # noqa: E402,F401  - decides the mode before numba.cuda is imported
from helpers import compile_check  # noqa: E402
from helpers.exercises import KernelExercise  # noqa: E402
from helpers.problems import all_exercises  # noqa: E402

LIMIT_S = 1.5
warnings.simplefilter("ignore")


def _check(ex):
    """One learner-visible check (grade + the green line + progress), its output swallowed."""
    options = ex.reference_options() if isinstance(ex, KernelExercise) else {}
    answer = ex.reference_answer()
    with contextlib.redirect_stdout(io.StringIO()):
        t0 = time.perf_counter()
        ex.check(answer, seed=1, **options)
        seconds = time.perf_counter() - t0
    return seconds, ex.last_result


def _start_server():
    """Time the compile server's start and first compile on a kernel no exercise uses."""
    import numpy as np
    from numba import cuda

    @cuda.jit
    def warm_up(a):
        i = cuda.grid(1)
        if i < a.size:
            a[i] = 1.0

    t0 = time.perf_counter()
    r = compile_check.start(warm_up, (np.zeros(4, np.float32),)).result()
    return time.perf_counter() - t0, r


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeat", type=int, default=5, help="warm checks per exercise (median)")
    ap.add_argument("--only", default="", help="exercise ids starting with this, e.g. nb05")
    args = ap.parse_args(argv)

    start_s, started = _start_server()
    cpu = platform.processor() or platform.machine()
    print(f"machine: {cpu}, {os.cpu_count()} cores, Python {platform.python_version()}")
    print(f"compile server start + first compile: {start_s:.2f} s ({'ok' if started.ok else started.message})")
    rows, failed = [], []
    for ex in all_exercises():
        if not ex.id.startswith(args.only):
            continue
        cold, result = _check(ex)
        if result.status != "passed":
            failed.append(f"{ex.id}: {result.status}: {result.message}")
        warm = statistics.median(_check(ex)[0] for _ in range(args.repeat))
        rows.append((ex.id, type(ex).__name__, cold, warm))
        print(f"  {ex.id:32} {type(ex).__name__:18} cold {cold * 1e3:8.0f} ms   warm {warm * 1e3:8.0f} ms")

    if not rows:
        print("no exercise matched --only")
        return 1
    cold_med = statistics.median(r[2] for r in rows)
    warm_med = statistics.median(r[3] for r in rows)
    slow = sorted(rows, key=lambda r: -r[2])[:5]
    print(f"\n{len(rows)} exercises; median check time: cold {cold_med:.2f} s, warm {warm_med:.2f} s", end=" ")
    print(f"(limit {LIMIT_S} s)")
    print("slowest cold checks: " + ", ".join(f"{r[0]} {r[2]:.2f} s" for r in slow))
    for line in failed:
        print("NOT PASSED " + line)
    ok = cold_med <= LIMIT_S and warm_med <= LIMIT_S and not failed
    print("OK" if ok else "OVER THE LIMIT" if not failed else "A REFERENCE ANSWER DID NOT PASS")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
