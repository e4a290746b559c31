"""``python -m helpers.mutation [EXERCISE ...]``: grade every mutant in this process's mode
(CPU unless COURSE_MODE=gpu on a GPU host), write that mode's record, then the report page.

With exercise ids (``nb02.vector_add``) only those are graded and printed; no record is written.
"""

from __future__ import annotations

import sys

from .. import env
from ..problems import all_exercises
from .report import write_page, write_record
from .run import exercise_id, run_exercise, targets


def main(argv) -> int:
    only = set(argv)
    outcomes = []
    for ex in all_exercises():
        if not targets(ex) or (only and exercise_id(ex) not in only):
            continue
        found = run_exercise(ex)
        alive = [o for o in found if not o.killed]
        print(f"{exercise_id(ex)}: {len(found)} mutants, {len(found) - len(alive)} killed", flush=True)
        for o in alive:
            print(f"  survived ({o.status}): {o.mutant.key}", flush=True)
        outcomes += found
    if only:
        return 0
    mode = "gpu" if env.on_gpu() else "cpu"
    device = (env.MODE.info.name or "a GPU") if mode == "gpu" else ""
    print(f"wrote {write_record(mode, outcomes, device)} and {write_page()}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
