"""The parent's side of one submission: the job a fresh child process runs, the environment it
runs in, the judge's own workers for a judged notebook, and the reruns after a crash.

Containment: the child runs in its own session (``killpg`` reaches whatever it starts), with
a minimal environment (no instructor secrets), stdin from the job only, stdout+stderr into a
pipe of which only the head and the tail are kept, a per-cell timer inside and a per-notebook
wall clock outside (``process.py``); where the system offers namespaces, inside the sandbox of
``sandbox.py`` (the working folder is bound at its own path, so pictures travel as they do
without one). After a hard crash or a kill in cell N, the notebook is run once
more without cell N, so one broken cell does not cost every later exercise.
"""

from __future__ import annotations

import json
import os
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple

from . import process
from .attempt import Attempt
from .course import CourseNotebook
from .process import check_stop, kill_group
from .records import collect, finish, output_text
from .review import code_cells, review_flags
from .submissions import Submission, read_cells

_ENV_KEEP = (
    "PATH",
    "HOME",
    "LANG",
    "LC_ALL",
    "TMPDIR",
    "USER",
    "LOGNAME",
    "CUDA_HOME",
    "CUDA_PATH",
    "LD_LIBRARY_PATH",
    "NUMBA_CUDA_DRIVER",
    "CUPY_CACHE_DIR",
    "MPLCONFIGDIR",
    "XDG_CACHE_HOME",
)


@dataclass
class Settings:
    cell_timeout: float = 120.0
    grade_timeout: float = 120.0  # per exercise check
    timeout: float = 900.0  # per notebook run
    retries: int = 1  # extra runs that skip a cell which crashed or hung the notebook
    memory_mb: int = 0
    mode: str = "cpu"  # "cpu" or "gpu" for the children
    sandbox: object = None  # a sandbox.Sandbox; None: no sandbox (library callers, tests)
    template: object = None  # a template.Template the children and workers are forked from; None: started
    compile_template: object = None  # the same for the judge's compile servers (compile_check/server.py)
    # the judge's compile answers in this run, per GPU, by exact request (every source text, global and
    # type): NVVM's answer to the same description is the same, so each distinct kernel compiles once
    compiled: dict = field(default_factory=dict)


def child_env(settings: Settings, workdir: Path, gpu: str | None = None) -> dict:
    env = {k: os.environ[k] for k in _ENV_KEEP if k in os.environ}
    env.update(
        {
            "PYTHONHASHSEED": "0",
            "PYTHONDONTWRITEBYTECODE": "1",
            "PYTHONIOENCODING": "utf-8",
            "PYTHONUNBUFFERED": "1",
            "MPLBACKEND": "Agg",
            "OMP_NUM_THREADS": "1",
            "OPENBLAS_NUM_THREADS": "1",
            "MKL_NUM_THREADS": "1",
            "COURSE_PROGRESS_FILE": str(workdir / "progress.json"),
            "NUMBA_CACHE_DIR": str(workdir / "numba-cache"),
            "COURSE_MODE": settings.mode,
        }
    )
    env.setdefault("MPLCONFIGDIR", str(Path.home() / ".config" / "matplotlib"))
    if settings.mode == "cpu":
        env["NUMBA_ENABLE_CUDASIM"] = "1"
        env["COURSE_SIZES"] = "small"  # every submission runs every cell: the notebooks' helpers.size(..., small=)
    else:
        env["CUDA_VISIBLE_DEVICES"] = gpu if gpu is not None else os.environ.get("CUDA_VISIBLE_DEVICES", "0")
    return env


def run_child(job: dict, workdir: Path, settings: Settings, gpu: str | None, judge) -> Attempt:
    """One run of the notebook in a fresh process; never raises for anything the student did.

    The child only runs code: it holds no exercise, reference or key, and this process grades what it
    sends back with ``judge`` (a ``JudgePlan``; judge.py)."""
    from .judge import Channel, ChildGone, Judge, public_spec

    check_stop()
    attempt = Attempt(skip=list(job["skip_cells"]))
    workdir.mkdir(parents=True, exist_ok=True)
    specs, exercises, shown = judge
    read_fd, write_fd = os.pipe()
    try:
        proc, reader, started = _start(workdir, settings, gpu, attempt, hide_problems=True, pass_fds=(write_fd,))
    finally:
        os.close(write_fd)
    proc.judge_fd = read_fd
    channel = Channel(proc, settings, started, attempt.lines)
    channel.compiler = _compiler(workdir, settings, gpu)
    channel.nvrtc = _nvrtc(workdir, settings, gpu)
    channel.tracer = _worker("tracer", workdir, settings, gpu, settings.grade_timeout)
    # The child learns which exercises exist and the constants notebooks use; not the answers'
    # expressions, the seeds or anything of an exercise beyond its prompt.
    modules = sorted({s["module"] for s in job["exercises"]})
    child_job = {**job, "channel_fd": write_fd, "public": public_spec(modules), "exercises": []}
    try:
        channel.send(json.loads(json.dumps(child_job)))
        Judge(specs, exercises, channel, job.get("pictures"), shown).converse(attempt.lines, settings.cell_timeout)
    except ChildGone as gone:
        attempt.killed, attempt.stuck, attempt.flooded = gone.killed, gone.stuck, gone.flooded
    finally:
        os.close(read_fd)
        attempt.forged = channel.forged
        channel.compiler.close()
        channel.nvrtc.close()
        channel.tracer.close()
    kill_group(proc)
    try:
        attempt.returncode = proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        attempt.returncode = None
    process.finish(proc, reader, started, settings.sandbox, attempt)
    return attempt


def _in_sandbox(workdir, settings):
    """``wrap(argv, env)`` for a process of the judge's that acts on what a submission sent: in the
    submission's sandbox, with helpers/problems hidden."""

    def wrap(argv, env):
        box = settings.sandbox
        if box is None:
            return argv, env
        return box.wrap(argv, workdir, hide_problems=True), box.env(env, workdir)

    return wrap


def _worker(kind, workdir, settings, gpu, timeout):
    """One of the judge's own processes for one submission (workers.py), started on first use."""
    from .workers import Worker

    def fork(env):
        return process.forked(settings.template, ["worker", kind, timeout], env, workdir, stderr=False)

    return Worker(kind, child_env(settings, workdir, gpu), _in_sandbox(workdir, settings), timeout, fork)


def _nvrtc(workdir, settings, gpu):
    return _worker("nvrtc", workdir, settings, gpu, 60.0)


def _compiler(workdir, settings, gpu):
    """The judge's own Numba compile server for one submission, started on its first kernel: in
    the submission's sandbox (it acts on what the student's process described, see
    compile_check/trust.py) but never running the student's notebook, so its answer is the
    compiler's."""
    from ..compile_check import client

    wrap = _in_sandbox(workdir, settings)
    answers = settings.compiled.setdefault(str(gpu), {})

    def fork(env):
        return process.forked(settings.compile_template, ["compile"], env, workdir, stderr=False)

    return client.Private(lambda: client.Server(child_env(settings, workdir, gpu), wrap, fork), answers)


def _start(workdir, settings, gpu, attempt, hide_problems=False, pass_fds=()):
    """The child process in the environment ``child_env`` makes: (process, output reader, start time)."""
    env = child_env(settings, workdir, gpu)
    return process.start(workdir, env, settings.sandbox, attempt, hide_problems, pass_fds, settings.template)


def _judge_for(specs: list) -> tuple:
    """(the JudgePlan of the exercises this process can load and judge, {id: row} for the rest): a course
    module that cannot be imported, or names no such exercise, is the course's problem, said as such on
    that exercise's row; the student's process never grades anything."""
    import importlib

    from ..exercises import Exercise
    from .judge import judgeable

    exercises, problems = {}, {}
    for spec in specs:
        module = f"helpers.problems.{spec['module']}"
        try:
            ex = getattr(importlib.import_module(module), spec["name"], None)
            why = f"helpers/problems/{spec['module']}.py has no exercise {spec['name']}"
        except Exception as e:  # any failure is a course (instructor) problem, not the student's
            ex, why = None, f"{module} cannot be imported ({type(e).__name__}: {str(e)[:200]})"
        if isinstance(ex, Exercise) and not judgeable([ex]):
            ex, why = None, f"{spec['id']} is of a kind the grader cannot judge from outside the student's process"
        if isinstance(ex, Exercise):
            exercises[spec["id"]] = ex
        else:
            message = f"not graded: {why} (a problem with the course, not with this notebook)."
            problems[spec["id"]] = {"status": "not_graded", "message": message, "grader_problem": True, "run": 0}
    return JudgePlan([s for s in specs if s["id"] in exercises], exercises, {}), problems


class JudgePlan(NamedTuple):
    """What the judge of each run of one submission grades with."""

    specs: list
    exercises: dict  # id -> Exercise
    shown: dict  # id -> gradings whose inputs reached the student's process, over all runs (judge.py)


def _judge_excluding(judge, exclude):
    """The judge of a rerun: exercises that crashed or hung an earlier run are not asked again."""
    specs = [s for s in judge.specs if s["id"] not in exclude]
    return JudgePlan(specs, {k: v for k, v in judge.exercises.items() if k not in exclude}, judge.shown)


def grade_submission(
    sub: Submission, nb: CourseNotebook, seeds: dict, settings: Settings, scratch: Path, gpu: str | None = None
) -> dict:
    """Everything about one submission as a JSON-able record (see report.py for how it is shown)."""
    started = time.time()
    record = {
        "student": sub.student,
        "name": sub.name,  # as handed in: the folder, zip or file name the id comes from
        "notebook": nb.stem,
        "file": str(sub.path) if sub.path else None,
        "notes": list(sub.notes),
        "outcome": "completed",
        "problem": None,
        "exercises": [],
        "cell_errors": [],
        "tamper": None,
        "review": [],
        "output": "",
        "output_bytes": 0,
        "runs": [],
        "skipped_cells": [],
    }
    by_id = {}
    if sub.path is None and sub.problem:
        record.update(outcome="invalid", problem=sub.problem)
        return finish(record, nb, by_id, started)
    if sub.path is None:
        record.update(outcome="missing", problem=sub.notes[0] if sub.notes else "not handed in")
        return finish(record, nb, by_id, started)
    cells, problem = (None, sub.problem) if sub.problem else read_cells(sub.path)
    if problem:
        record.update(outcome="invalid", problem=problem)
        return finish(record, nb, by_id, started)
    ccells = code_cells(cells)
    pristine, _ = read_cells(nb.path)
    record["review"] = review_flags(ccells, [src for _, src in code_cells(pristine or [])])
    first_line = {i: (s.strip().splitlines() or [""])[0][:60] for i, s in ccells}
    job = {
        "cells": [{"index": i, "source": s} for i, s in ccells],
        "cell_timeout": settings.cell_timeout,
        "grade_timeout": settings.grade_timeout,
        "memory_mb": settings.memory_mb,
        "skip_cells": [],
        "exercises": [
            {
                "id": e.id,
                "module": e.module,
                "name": e.name,
                "answer": e.answer,
                "options": e.options,
                "seed": seeds[e.id],
                "recheck": seeds.get(f"{e.id} recheck"),  # the secret of later checks' seeds (judge.py)
            }
            for e in nb.exercises
        ],
    }
    judge, course_problems = _judge_for(job["exercises"])
    by_id.update(course_problems)
    job["exercises"] = judge.specs
    skip, exclude, failure = [], [], None
    for run in range(1 + max(settings.retries, 0)):
        workdir = scratch / f"run{run}"
        (workdir / "pictures").mkdir(parents=True, exist_ok=True)
        child_job = {**job, "skip_cells": skip, "exclude": exclude, "pictures": str(workdir / "pictures")}
        attempt = run_child(child_job, workdir, settings, gpu, _judge_excluding(judge, exclude))
        restarted = False
        if not attempt.killed and not any(m.get("type") == "ready" for m in attempt.lines):
            # Nothing of the student's ran (no "ready"): a start-up failure of the machine, not of the
            # notebook, so one more start is fair and costs nothing when the notebook is the cause.
            # A sibling, not a subfolder: the first child could have put a link where it would go.
            again = scratch / f"run{run}-again"
            (again / "pictures").mkdir(parents=True, exist_ok=True)
            child_job = {**child_job, "pictures": str(again / "pictures")}
            attempt, restarted = run_child(child_job, again, settings, gpu, _judge_excluding(judge, exclude)), True
        failure = attempt.failure(settings.timeout)
        phase = attempt.last_phase
        where = ""
        if failure and phase.get("type") in ("cell", "between"):
            where = f" in cell {phase['cell'] + 1} (`{first_line.get(phase['cell'], '')}`)"
        elif failure and phase.get("type") == "grading":
            where = f" while grading {phase['exercise']}"
        record["runs"].append(
            {
                "skip": [c + 1 for c in skip],
                "exclude": list(exclude),
                "seconds": round(attempt.seconds, 2),
                "returncode": attempt.returncode,
                "failure": failure and failure + where,
                **({"restarted": True} if restarted else {}),
            }
        )
        collect(record, attempt, by_id, run, skip, first_line)
        if run == 0 or not record["output"]:
            record["output"] = output_text(attempt)
            record["output_bytes"] = attempt.output_bytes
        if failure is None or record["tamper"] or all(e.id in by_id for e in nb.exercises):
            break
        if phase.get("type") == "grading" and phase["exercise"] not in by_id:
            # The student's code crashed or hung the process while being graded: that exercise
            # gets the error, and the notebook runs again without grading it.
            by_id[phase["exercise"]] = {
                "status": "error",
                "run": run,
                "message": f"grading did not finish: {failure}. The other exercises were graded in a second run.",
            }
            exclude = [*exclude, phase["exercise"]]
        elif phase.get("type") in ("cell", "between") and phase["cell"] not in skip:
            skip = [*skip, phase["cell"]]
            record["skipped_cells"].append(
                {"cell": phase["cell"] + 1, "why": failure, "first_line": first_line.get(phase["cell"], "")}
            )
        else:
            break
    if failure:
        last = record["runs"][-1]["failure"]
        record.update(outcome="timeout" if "longer than" in failure else "crashed", problem=last)
    return finish(record, nb, by_id, started)
