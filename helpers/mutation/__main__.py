"""``python -m helpers.mutation [-j N] [--fresh] [--merge] [EXERCISE ...]``: grade every mutant in this
process's mode (CPU unless COURSE_MODE=gpu on a GPU host), write that mode's record, then the
report page. ``--merge`` with exercise ids grades only those and puts their rows into the existing
record (the record lists them as merged: graded later than the rest).

Each outcome is appended to ``build/mutation-<mode>.jsonl`` as it is graded: a run that is stopped
resumes there (while the course's code is unchanged; ``--fresh`` starts over). With exercise ids
(``nb02.vector_add``) only those are graded and printed; no record is written. ``-j N`` grades in N
worker processes (each a fresh interpreter: the compile server, the tracer and Numba's state are per
process).
"""

from __future__ import annotations

import argparse
import multiprocessing
import sys

from .. import env
from ..problems import all_exercises
from .journal import Journal, fingerprint, journal_path
from .report import write_merged, write_page, write_record
from .run import exercise_id, grade_job, mutants, targets

SLOWEST = 10  # the slowest mutants are printed: where a run's time goes


def _exercises(only) -> list:
    return [ex for ex in all_exercises() if targets(ex) and (not only or exercise_id(ex) in only)]


def _graded(todo, jobs: int, one_each: bool):
    """Outcomes as they come. ``one_each``: every mutant in a fresh worker, as on a GPU, where a mutant
    that writes out of bounds poisons its process's CUDA context and every later call there fails
    (the next mutants would be 'killed' by the fault of another)."""
    if (jobs > 1 and len(todo) > 1) or one_each:
        with multiprocessing.get_context("spawn").Pool(jobs, maxtasksperchild=1 if one_each else None) as pool:
            yield from pool.imap_unordered(grade_job, todo, chunksize=1)
    else:
        yield from map(grade_job, todo)


def main(argv) -> int:
    parser = argparse.ArgumentParser(prog="python -m helpers.mutation")
    parser.add_argument("-j", "--jobs", type=int, default=1, help="worker processes (default 1)")
    parser.add_argument("--fresh", action="store_true", help="grade every mutant again, ignoring the journal")
    parser.add_argument("--merge", action="store_true", help="put the named exercises' rows into the record")
    parser.add_argument("exercises", nargs="*", help="only these exercise ids; no record is written")
    args = parser.parse_args(argv)
    only = set(args.exercises)
    mode = "gpu" if env.on_gpu() else "cpu"
    path = journal_path(mode)
    if args.fresh:
        path.unlink(missing_ok=True)
    journal = Journal(path, fingerprint())
    every = [m for ex in _exercises(only) for m, *_ in mutants(ex)]
    todo = [(m.exercise, m.key) for m in every if not journal.has(m.key, m.source)]
    print(f"{len(every)} mutants, {len(every) - len(todo)} already graded in {path}", flush=True)
    for count, outcome in enumerate(_graded(todo, args.jobs, one_each=mode == "gpu"), 1):
        journal.add(outcome)
        if count % 20 == 0 or count == len(todo):
            print(f"graded {count}/{len(todo)}", flush=True)
    outcomes = [journal.done[m.key] for m in every]
    for exercise in dict.fromkeys(m.exercise for m in every):
        found = [o for o in outcomes if o.mutant.exercise == exercise]
        alive = [o for o in found if not o.killed]
        print(f"{exercise}: {len(found)} mutants, {len(found) - len(alive)} killed", flush=True)
        for o in alive:
            print(f"  survived ({o.status}): {o.mutant.key}", flush=True)
    for o in sorted(outcomes, key=lambda o: -o.seconds)[:SLOWEST]:
        print(f"  {o.seconds:7.1f} s  {o.mutant.key}")
    device = (env.MODE.info.name or "a GPU") if mode == "gpu" else ""
    if only and args.merge:
        print(f"merged into {write_merged(mode, outcomes, sorted(only), device)}; wrote {write_page()}")
    elif not only:
        print(f"wrote {write_record(mode, outcomes, device)} and {write_page()}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
