"""``python -m helpers.mutation [-j N] [EXERCISE ...]``: grade every mutant in this process's mode
(CPU unless COURSE_MODE=gpu on a GPU host), write that mode's record, then the report page.

With exercise ids (``nb02.vector_add``) only those are graded and printed; no record is written.
``-j N`` grades in N worker processes (each a fresh interpreter: the compile server, the tracer
and Numba's state are per process).
"""

from __future__ import annotations

import argparse
import multiprocessing
import sys

from .. import env
from ..problems import all_exercises
from .report import write_page, write_record
from .run import exercise_id, grade_job, mutants, targets


def _exercises(only) -> list:
    return [ex for ex in all_exercises() if targets(ex) and (not only or exercise_id(ex) in only)]


def main(argv) -> int:
    parser = argparse.ArgumentParser(prog="python -m helpers.mutation")
    parser.add_argument("-j", "--jobs", type=int, default=1, help="worker processes (default 1)")
    parser.add_argument("exercises", nargs="*", help="only these exercise ids; no record is written")
    args = parser.parse_args(argv)
    only = set(args.exercises)
    jobs = [(exercise_id(ex), m.key) for ex in _exercises(only) for m, *_ in mutants(ex)]
    if args.jobs > 1:
        with multiprocessing.get_context("spawn").Pool(args.jobs) as pool:
            outcomes = pool.map(grade_job, jobs, chunksize=1)
    else:
        outcomes = [grade_job(job) for job in jobs]
    for exercise in dict.fromkeys(e for e, _ in jobs):
        found = [o for o in outcomes if o.mutant.exercise == exercise]
        alive = [o for o in found if not o.killed]
        print(f"{exercise}: {len(found)} mutants, {len(found) - len(alive)} killed", flush=True)
        for o in alive:
            print(f"  survived ({o.status}): {o.mutant.key}", flush=True)
    if only:
        return 0
    mode = "gpu" if env.on_gpu() else "cpu"
    device = (env.MODE.info.name or "a GPU") if mode == "gpu" else ""
    print(f"wrote {write_record(mode, outcomes, device)} and {write_page()}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
