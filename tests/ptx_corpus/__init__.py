"""The differential corpus: kernels run on an NVIDIA GPU and in helpers.ptx, compared output by output.

`cases()` is every case: the hand-written corpus (memory_cases, integer_cases, float_cases) and
every CUDA C source of the course (course.py, found automatically). GPU results are stored in
`gpu_results.npz` next to this file by tools/ptx_differential.py; tests/ptx/test_differential.py
replays the corpus in the interpreter against them.
"""

from __future__ import annotations

from pathlib import Path

from . import float_cases, integer_cases, memory_cases
from .case import CATEGORIES, Case, Verdict, compare, ulp_distance

RESULTS = Path(__file__).with_name("gpu_results.npz")
RECORD = Path(__file__).with_name("record.json")
CORPUS = memory_cases.CASES + integer_cases.CASES + float_cases.CASES


def cases():
    """Corpus + course cases (the course ones are built from the sources found in solutions/ now)."""
    from . import course

    found = CORPUS + course.cases()
    names = [c.name for c in found]
    dup = {n for n in names if names.count(n) > 1}
    if dup:
        raise ValueError(f"case names must be unique: {sorted(dup)}")
    return found


__all__ = ["CATEGORIES", "CORPUS", "Case", "RECORD", "RESULTS", "Verdict", "cases", "compare", "ulp_distance"]
