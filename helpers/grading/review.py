"""Static review of a student's cells: code that is legitimate in a course notebook only very rarely
(stack inspection, ctypes, tracing hooks, reference solutions...). Flagged for a human to look at in
the summary and feedback; a flag never changes a grade by itself.
"""

from __future__ import annotations

import re

from .course import cell_source

_REVIEW = [
    (
        r"sys\._getframe|\bf_back\b|\bf_locals\b|\bf_globals\b|inspect\.(currentframe|stack)\b",
        "inspects the call stack",
    ),
    (r"\bgc\.get_(objects|referrers|referents)\b", "searches the garbage collector's objects"),
    (r"\bctypes\b", "uses ctypes"),
    (r"__code__|__closure__|__globals__", "rewrites function internals"),
    (r"\bsys\.modules\b|importlib\.reload|\bbuiltins\b|__builtins__", "changes modules or builtins"),
    (r"sys\.(settrace|setprofile)|threading\.(settrace|setprofile)", "installs a tracing hook"),
    (
        r"helpers\.(exercises|grading|_progress)|\bExercise\b|\._grade\b|\.grade\s*\(|\bgrade_kernel\b",
        "touches the grading engine",
    ),
    (r"\b(np|numpy)\.(allclose|isclose|array_equal|testing)\s*=", "reassigns a NumPy comparison"),
    (r"\.reference\b|\breference_answer\b|\bnb\d\d\._\w+", "uses a reference solution"),
    (r"os\._exit|os\.kill|signal\.(signal|alarm|setitimer)|\bos\.fork\b|setsid", "exits, kills or handles signals"),
    (r"/proc/|\bos\.(dup2|write)\b", "writes to low-level files"),
]


def code_cells(cells) -> list:
    return [(i, cell_source(c)) for i, c in enumerate(cells) if c.get("cell_type") == "code" and cell_source(c).strip()]


def review_flags(cells, pristine_sources=()) -> list[str]:
    """Suspicious code in the student's cells. A match that also occurs in the pristine course
    notebook (notebook 10 teaches ctypes for kernel arguments) is the course's, not the student's."""
    course = "\n".join(pristine_sources)
    flags = []
    for index, source in cells:
        for pattern, what in _REVIEW:
            for m in re.finditer(pattern, source):
                if m.group(0) not in course:
                    flags.append(f"cell {index + 1} {what} (`{m.group(0)}`)")
                    break
    return flags
