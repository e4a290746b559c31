"""A made-up class of graded records, as OUT/records/ holds them, for the report and LMS tests
(tests/grading/test_class_report.py, test_lms.py, tests/browser/test_class_report.py): any number
of students over a few notebooks, every status, real message families (tracer verdicts, raised
exceptions, wrong values with varying numbers), students' names inside some messages (the
report must take them out), review flags, a crash, a missing notebook. Deterministic for a seed.
"""

from __future__ import annotations

import random

NOTEBOOKS = {
    "01_threads_blocks": ["nb01.blocks_per_grid", "nb01.global_index", "nb01.threads_launched"],
    "02_first_kernels": ["nb02.vector_add", "nb02.saxpy", "nb02.square_stride", "nb02.histogram"],
    "05_shared_memory": ["nb05.block_sum", "nb05.transpose", "nb05.stencil"],
}
POINTS = {"nb02.saxpy": 2.0, "nb05.transpose": 3.0}

FIRST = ["Alice", "Bob", "Chen", "Dana", "Emeka", "Farah", "Gao", "Hiro", "Ines", "Jonas", "Kemal", "Lena"]
LAST = ["Smith", "Okafor", "Liang", "Novak", "Haddad", "Tanaka", "Silva", "Berg", "Yilmaz", "Moreau"]
MORE = ["", " Ito", " Kerr", " Lund", " Diaz"]  # a third name past 120 students keeps names distinct


def _failure(rng: random.Random, exercise: str, name: str) -> tuple[str, str]:
    """(status, message) of a wrong answer, from a few real families with other numbers each time."""
    n, t = rng.randint(1, 5000), rng.choice([32, 128, 256])
    picks = [
        (
            "failed",
            f"the CPU tracer found a race. Race on out[{rng.randint(0, 99)}]: thread {rng.randint(0, 31)} of block 0 "
            f"wrote it at line {rng.randint(10, 90)} (`out[i] = a[i] + b[i]`) and thread 1 read it.",
        ),
        (
            "failed",
            f"the CPU tracer found an out-of-bounds access. Out of bounds: thread {t} of block 0 read x[{t}] at line "
            f"{rng.randint(10, 90)} (`out[i] = x[i]`), but x has shape ({t},).",
        ),
        (
            "failed",
            f"your function with n={n}, t={t} returned {n // t} but should return {(n + t - 1) // t} "
            f"({rng.randint(1, 200)} of 204 inputs wrong): n // t rounds down: round up with (n + t - 1) // t.",
        ),
        ("error", f"your function with n={n}, t={t} raised ZeroDivisionError: integer division or modulo by zero."),
        (
            "error",
            f"your function with n={n}, t=0 raised NameError: name '{name.split()[0].lower()}_helper' is not defined.",
        ),
        ("failed", f"the numbers are right, but reads per thread is {rng.uniform(2.5, 6):.2f}; the budget is 2."),
        ("failed", f"{name} wrote in {name.split()[0]}_notes: out[{rng.randint(0, 9)}] is 0.0 but should be 1.5."),
    ]
    weights = [6, 4, 5, 2, 1, 2, 1]
    return rng.choices(picks, weights)[0]


def student_names(n: int) -> list[str]:
    pairs = len(FIRST) * len(LAST)
    return [f"{FIRST[i % len(FIRST)]} {LAST[(i // len(FIRST)) % len(LAST)]}{MORE[i // pairs]}" for i in range(n)]


def make_records(students: int = 30, seed: int = 1) -> list[dict]:
    """One record per student x notebook, sorted like the grader sorts them."""
    rng = random.Random(seed)
    records = []
    for i, name in enumerate(student_names(students)):
        sid = name.replace(" ", "_")
        skill = rng.random()
        for nb, exercises in NOTEBOOKS.items():
            rec = {
                "student": sid,
                "name": name,
                "notebook": nb,
                "file": f"/tmp/grade-x/students/{sid}/{nb}.ipynb",
                "outcome": "completed",
                "exercises": [],
                "notes": [],
                "cell_errors": [],
                "review": [],
                "output": "",
                "tamper": None,
                "runs": [{"failure": None}],
                "skipped_cells": [],
                "seconds": round(rng.uniform(0.8, 4.0), 2),
            }
            if i % 17 == 5 and nb == "05_shared_memory":  # a notebook not handed in
                rec.update(outcome="missing", problem=f"no {nb} notebook was handed in", runs=[], seconds=0.0)
                rec["exercises"] = [
                    {"exercise": e, "status": "not_graded", "message": f"not graded: no {nb} notebook was handed in."}
                    for e in exercises
                ]
                records.append(rec)
                continue
            if i % 23 == 7 and nb == "02_first_kernels":  # crashed at the third exercise
                rec.update(outcome="crashed", problem="the notebook's process died (segmentation fault) in cell 9")
                rec["skipped_cells"] = [{"cell": 9, "why": "crashed the notebook", "first_line": "histogram[...]"}]
            if i % 29 == 3:
                rec["review"] = ["cell 4 inspects the call stack (`sys._getframe`)"]
            for k, ex in enumerate(exercises):
                seed_ = rng.randint(0, 999_999)
                roll = rng.random()
                if rec["outcome"] == "crashed" and k >= 2:
                    row = {"status": "not_graded", "message": "not graded: the notebook's process died, before this."}
                elif i % 41 == 11 and k == 0:
                    row = {"status": "tampering", "message": "no credit: the notebook changed the grading machinery."}
                elif roll < 0.12:
                    row = {"status": "not_attempted", "message": "not attempted: still the placeholder."}
                elif roll < 0.12 + 0.5 * (1 - skill):
                    status, message = _failure(rng, ex, name)
                    row = {"status": status, "message": message}
                else:
                    row = {"status": "passed", "message": "correct."}
                rec["exercises"].append({"exercise": ex, "seed": seed_, **row})
            records.append(rec)
    return sorted(records, key=lambda r: (r["student"], r["notebook"]))


def max_points() -> dict:
    return {e: POINTS.get(e, 1.0) for exercises in NOTEBOOKS.values() for e in exercises}


MANIFEST = {"salt": "never-shown", "mode": "cpu", "jobs": 2, "sandbox": "sandbox: bubblewrap", "started": "x"}
