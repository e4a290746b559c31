#!/usr/bin/env python3
"""Every Numba kernel exercise, checked a second way: from the PTX Numba's own compiler makes.

    COURSE_MODE=cpu python tools/numba_ptx_agreement.py            # all; writes the two records below
    COURSE_MODE=cpu python tools/numba_ptx_agreement.py --only nb02 --print

Why: the CPU tracer runs the learner's Python under an emulation of GPU arithmetic, and each way
that emulation differs from a GPU is a place a check could be wrong. helpers.ptx.numba_run runs
the kernel from the PTX a GPU would run instead. This script grades each exercise's reference and
each catalogued wrong answer (tests/wrong_solutions/) with the check's tracing step running on
that PTX, and records whether the status is the one the tracer gives (the catalogue test holds
the tracer to those statuses: passed for a reference, the catalogued status for a wrong answer).
A kernel whose PTX uses something the interpreter cannot run is recorded with the reason.

Writes docs/data/numba-ptx.json (one row per answer) and docs/numba-ptx.md (the summary, and a
table of every answer whose status or message differs, or that could not run).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]  # the catalogue of wrong answers is test data

RECORD = ROOT / "docs" / "data" / "numba-ptx.json"
REPORT = ROOT / "docs" / "numba-ptx.md"

# Why an answer's status differs when its kernel runs from Numba's PTX: each difference explained,
# or tests/tools/test_numba_ptx_agreement.py fails until it is.
REASONS = {
    ("nb04.mirror", "negative index"): (
        "Numba indexes as NumPy does: `img[r, -1 - c]` wraps to the mirrored column, so the compiled kernel "
        "mirrors correctly. The tracer refuses negative indices from the Python source (in CUDA C they are "
        "out of bounds, and a learner who relies on wrap-around writes a kernel that breaks when ported); the "
        "PTX no longer shows that the index was negative."
    ),
}
_GRID_SYNC = (
    "`cuda.cg.this_grid().sync()` compiles to calls of `cudaCGGetIntrinsicHandle` and `cudaCGSynchronizeGrid`, "
    "which live in libcudadevrt and are linked only when the kernel is built for a GPU; the PTX interpreter runs no "
    "external call and says so, while the check's tracer models the grid-wide barrier itself."
)
for _kind in (
    "reference",
    "divergent grid sync",
    "plain write where an atomic is needed",
    "over budget (the sum in thread 0's loop)",
    "wrong numbers",
):
    REASONS[("nb17.normalize", _kind)] = _GRID_SYNC


@dataclass
class Row:
    exercise: str
    answer: str  # "reference" or the catalogued wrong answer's kind
    expected: str  # the tracer's status (what the catalogue test requires of it)
    status: str  # the status with the tracing step run on Numba's PTX
    message_kept: bool  # the catalogued phrase is still in the message (a reference: True)
    cpu_seconds: float
    message: str


def cases(only=()):
    """(exercise, wrong answer or None) for every Numba kernel exercise, reference first."""
    import helpers  # noqa: F401  (decides the mode before Numba loads)
    from helpers.exercises import KernelExercise
    from helpers.problems import all_exercises
    from support.catalogue import WRONG

    for ex in all_exercises():
        if isinstance(ex, KernelExercise) and (not only or ex.notebook in only):
            yield ex, None
            for wrong in WRONG[ex.notebook].get(ex.name, []):
                yield ex, wrong


def grade(ex, wrong) -> Row:
    """One answer graded with the check's tracing step on Numba's PTX: the check is given an executor
    whose trace runs the kernel from that PTX (everything else as a notebook's check does it)."""
    from helpers.exercises.executor import LocalExecutor
    from helpers.ptx import numba_run

    class FromPtx(LocalExecutor):
        def trace(self, kernel, grid, block, call_args, outputs):
            return numba_run.trace(kernel, grid, block, *call_args, outputs=tuple(outputs))

    t0 = time.process_time()
    if wrong is None:
        answer, options = ex.reference_answer(), ex.reference_options()
    else:
        answer, options = wrong.answer, wrong.options
    r = ex.grade(answer, seed=3, executor=FromPtx(), **options)
    return Row(
        ex.id,
        "reference" if wrong is None else wrong.kind,
        "passed" if wrong is None else wrong.status,
        r.status,
        wrong is None or wrong.says in r.message,
        round(time.process_time() - t0, 2),
        r.message,
    )


def report(rows: list, stamp: str) -> str:
    same = sum(r.status == r.expected for r in rows)
    differ = [r for r in rows if r.status != r.expected or not r.message_kept]
    lines = [
        "# Numba kernels from their real PTX",
        "",
        f"Written by `python tools/numba_ptx_agreement.py` ({stamp}); do not edit by hand.",
        "",
        f"Every Numba kernel exercise's reference and catalogued wrong answer, {len(rows)} answers over "
        f"{len({r.exercise for r in rows})} exercises, graded with the check's tracing step run on the PTX that "
        "Numba's compiler makes (`helpers.ptx.numba_run`: the compile server's NVVM with line info, the PTX "
        "interpreter, verdicts mapped back to the Python lines and parameter names).",
        "",
        f"- **Same status as through the tracer:** {same} of {len(rows)}.",
        f"- **Message differs** (same status, the catalogued phrase not in the message): "
        f"{sum(r.status == r.expected and not r.message_kept for r in rows)}.",
        f"- **CPU time:** {sum(r.cpu_seconds for r in rows):.0f} s for all (the compile server's time not included).",
        "",
    ]
    if differ:
        lines += ["| Exercise | Answer | Tracer | From PTX | What the PTX run said | Why |", "|" + "---|" * 6]
        for r in differ:
            said = r.message.replace("|", "\\|").replace("\n", " ")[:220]
            why = REASONS.get((r.exercise, r.answer), "same status; the wording comes from the Python source")
            lines.append(f"| {r.exercise} | {r.answer} | {r.expected} | {r.status} | {said} | {why} |")
    else:
        lines.append("Every answer got the same status and kept its catalogued message.")
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--only", default="", help="comma-separated notebook modules, e.g. nb02,nb05")
    p.add_argument("--print", action="store_true", help="print the rows; write no record")
    p.add_argument("--report-only", action="store_true", help="rewrite docs/numba-ptx.md from the JSON record")
    args = p.parse_args(argv)
    if args.report_only:
        record = json.loads(RECORD.read_text())
        REPORT.write_text(report([Row(**r) for r in record["rows"]], record["written"]))
        return 0
    only = tuple(m for m in args.only.split(",") if m)
    rows = []
    for ex, wrong in cases(only):
        rows.append(grade(ex, wrong))
        r = rows[-1]
        flag = "" if r.status == r.expected and r.message_kept else "   <-- differs"
        print(
            f"{r.exercise:28} {r.answer[:34]:34} {r.expected:13} {r.status:13} {r.cpu_seconds:6.2f}s{flag}", flush=True
        )
    if args.print or only:
        return 0 if all(r.status == r.expected for r in rows) else 1
    stamp = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    RECORD.write_text(json.dumps({"written": stamp, "rows": [asdict(r) for r in rows]}, indent=1) + "\n")
    REPORT.write_text(report(rows, stamp))
    print(f"wrote {RECORD.relative_to(ROOT)} and {REPORT.relative_to(ROOT)}")
    return 0 if all(r.status == r.expected for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
