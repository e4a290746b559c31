"""The parent's side of one submission: start a fresh child process, enforce the limits, read
its signed results, and turn crashes, timeouts and damaged files into per-exercise outcomes.

Containment: the child runs in its own session (``killpg`` reaches whatever it starts), with
a minimal environment (no instructor secrets), stdin from the job only, stdout+stderr into a
pipe of which only the head and the tail are kept, a per-cell timer inside and a per-notebook
wall clock outside; where the system offers namespaces, inside the sandbox of ``sandbox.py``
(the working folder is bound at its own path, so the results file and pictures travel as they do
without one). After a hard crash or a kill in cell N, the notebook is run once more
without cell N, so one broken cell does not cost every later exercise.
"""

from __future__ import annotations

import collections
import json
import os
import secrets
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from .cells import GPU_POISONED
from .course import CourseNotebook
from .records import (
    HEAD_BYTES,
    MAX_RESULT_LINE,
    MAX_RESULTS_BYTES,
    TAIL_BYTES,
    collect,
    finish,
    open_regular,
    output_text,
    read_results,
)
from .records import verified as _verified
from .review import code_cells, review_flags
from .submissions import Submission, read_cells

ROOT = Path(__file__).resolve().parents[2]
# -I ignores PYTHONPATH, so the child gets the grader's own import path explicitly: where the
# course's packages come from PYTHONPATH (offline GPU nodes, COURSE_ENV=current) the child must
# import the same numpy and numba as the grader, not whatever the base interpreter ships.
_BOOT = "import sys; sys.path[:0] = {paths!r}; from helpers.grading.child import main; main()"
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


@dataclass
class Attempt:
    skip: list
    returncode: int | None = None
    killed: bool = False  # by the notebook timeout
    stuck: str | None = None  # killed by the watchdog: what was stuck
    seconds: float = 0.0
    lines: list = field(default_factory=list)
    forged: int = 0
    head: bytes = b""
    tail: bytes = b""
    output_bytes: int = 0
    flooded: str | None = None  # the results file was over the caps: why

    @property
    def done(self) -> bool:
        return any(m.get("type") == "done" for m in self.lines)

    @property
    def last_phase(self) -> dict:
        """The last thing the child said it was doing: a cell, the time after one, or a grade."""
        phases = [m for m in self.lines if m.get("type") in ("ready", "cell", "between", "grading")]
        return phases[-1] if phases else {}

    def failure(self, timeout: float) -> str | None:
        """None when the child finished; else what happened, in words."""
        if self.done:
            return None
        if self.killed:
            return f"the notebook ran longer than {timeout:g} s and was stopped"
        if self.stuck:
            return self.stuck
        rc = self.returncode
        if rc is not None and rc < 0:
            name = {
                signal.SIGSEGV: "a segmentation fault",
                signal.SIGABRT: "an abort",
                signal.SIGBUS: "a bus error",
                signal.SIGFPE: "a floating-point exception",
                signal.SIGILL: "an illegal instruction",
                signal.SIGKILL: "being killed (out of memory?)",
                signal.SIGXFSZ: "writing a file that was too large",
            }
            return f"the notebook's process crashed ({name.get(-rc, f'signal {-rc}')})"
        if rc == GPU_POISONED:
            return (
                "the code left the GPU unusable (an illegal memory access or a failed launch: "
                "an index past the end of an array?)"
            )
        if not any(m.get("type") == "ready" for m in self.lines):
            return (
                f"the grader's process did not start (exit code {rc})" if rc else "the grader's process did not start"
            )
        return f"the notebook's process ended early (exit code {rc}: os._exit or a fatal error)"


def child_env(settings: Settings, workdir: Path, gpu: str | None) -> dict:
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
    else:
        env["CUDA_VISIBLE_DEVICES"] = gpu if gpu is not None else os.environ.get("CUDA_VISIBLE_DEVICES", "0")
    return env


def _pump(stream, attempt: Attempt):
    tail = collections.deque()
    size = 0
    head = bytearray()
    while True:
        chunk = stream.read1(65536) if hasattr(stream, "read1") else stream.read(65536)
        if not chunk:
            break
        attempt.output_bytes += len(chunk)
        if len(head) < HEAD_BYTES:
            head += chunk[: HEAD_BYTES - len(head)]
        tail.append(chunk)
        size += len(chunk)
        while size - len(tail[0]) >= TAIL_BYTES:
            size -= len(tail.popleft())
    attempt.head, attempt.tail = bytes(head), b"".join(tail)[-TAIL_BYTES:]


STOP = threading.Event()  # set on Ctrl-C: no further child starts
_RUNNING: set = set()
_LOCK = threading.Lock()


class Interrupted(Exception):
    """The grader was told to stop (Ctrl-C): no new child process is started."""


def stop_all() -> None:
    """Ctrl-C: start nothing new and kill every running child's process group."""
    STOP.set()
    with _LOCK:
        running = list(_RUNNING)
    for proc in running:
        _kill_group(proc)


def run_child(job: dict, workdir: Path, settings: Settings, gpu: str | None, judge=None) -> Attempt:
    """One run of the notebook in a fresh process; never raises for anything the student did.

    With ``judge`` (a ``(specs, exercises)`` pair) the child only runs code: it holds no exercise,
    reference or key, and this process grades what it sends back (judge.py)."""
    if STOP.is_set():
        raise Interrupted("the grader was interrupted")
    attempt = Attempt(skip=list(job["skip_cells"]))
    workdir.mkdir(parents=True, exist_ok=True)
    if judge is not None:
        return _run_judged(job, workdir, settings, gpu, judge, attempt)
    results = workdir / "results.jsonl"
    results.write_bytes(b"")
    key = secrets.token_bytes(32)
    payload = json.dumps({**job, "key": key.hex(), "results": str(results)}).encode() + b"\n"
    proc, reader, started = _start(workdir, settings, gpu, attempt)
    try:
        proc.stdin.write(payload)
        proc.stdin.close()
    except OSError:
        pass  # the child died at once; its exit status tells why
    attempt.returncode, attempt.killed, attempt.stuck = _watch(proc, results, key, settings, started)
    _kill_group(proc)
    if attempt.returncode is None:
        attempt.returncode = proc.wait()
    _finish(proc, reader, started, settings, attempt)
    attempt.lines, attempt.forged, attempt.flooded = read_results(results, key)
    return attempt


def _argv():
    return [
        sys.executable,
        "-I",
        "-u",
        "-c",
        _BOOT.format(paths=[str(ROOT)] + [p for p in sys.path if p and os.path.isabs(p)]),
    ]


def _run_judged(job, workdir, settings, gpu, judge, attempt) -> Attempt:
    from .judge import Channel, ChildGone, Judge, public_spec

    specs, exercises = judge
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
    child_job = {**job, "judge": True, "channel_fd": write_fd, "public": public_spec(modules), "exercises": []}
    try:
        channel.send(json.loads(json.dumps(child_job)))
        Judge(specs, exercises, channel, job.get("pictures")).converse(attempt.lines, settings.cell_timeout)
    except ChildGone as gone:
        attempt.killed, attempt.stuck, attempt.flooded = gone.killed, gone.stuck, gone.flooded
    finally:
        os.close(read_fd)
        attempt.forged = channel.forged
        channel.compiler.close()
        channel.nvrtc.close()
        channel.tracer.close()
    _kill_group(proc)
    try:
        attempt.returncode = proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        attempt.returncode = None
    _finish(proc, reader, started, settings, attempt)
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

    return Worker(kind, child_env(settings, workdir, gpu), _in_sandbox(workdir, settings), timeout)


def _nvrtc(workdir, settings, gpu):
    return _worker("nvrtc", workdir, settings, gpu, 60.0)


def _compiler(workdir, settings, gpu):
    """The judge's own Numba compile server for one submission, started on its first kernel: in
    the submission's sandbox (it acts on what the student's process described, see
    compile_check/trust.py) but never running the student's notebook, so its answer is the
    compiler's."""
    from ..compile_check import client

    wrap = _in_sandbox(workdir, settings)
    return client.Private(lambda: client.Server(env=child_env(settings, workdir, gpu), wrap=wrap))


def _start(workdir, settings, gpu, attempt, hide_problems=False, pass_fds=()):
    """The child process, in its sandbox where there is one, registered for Ctrl-C, its output pumped
    into ``attempt``: (process, output reader, start time)."""
    argv, env = _argv(), child_env(settings, workdir, gpu)
    box = settings.sandbox
    if box is not None:  # the same paths inside: the workdir is bound at its own name, writable
        argv, env = box.wrap(argv, workdir, hide_problems=hide_problems), box.env(env, workdir)
    started = time.monotonic()
    proc = subprocess.Popen(
        argv,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        cwd=workdir,
        env=env,
        start_new_session=True,
        pass_fds=pass_fds,
    )
    with _LOCK:
        _RUNNING.add(proc)
    if STOP.is_set():
        _kill_group(proc)
    reader = threading.Thread(target=_pump, args=(proc.stdout, attempt), daemon=True)
    reader.start()
    return proc, reader, started


def _finish(proc, reader, started, settings, attempt):
    """After the child is gone: its exit status as the sandbox reports it, unregistered, output read."""
    if settings.sandbox is not None:
        attempt.returncode = settings.sandbox.returncode(attempt.returncode)
    with _LOCK:
        _RUNNING.discard(proc)
    if STOP.is_set():
        raise Interrupted("the grader was interrupted")
    reader.join(timeout=5)  # a grandchild that left the session could hold the pipe: do not wait for it
    attempt.seconds = time.monotonic() - started


WATCH_CHUNK = 8 << 20  # bytes of the results file the watchdog reads per look
GRACE = 3.0  # seconds on top of a phase's own timer before the watchdog kills


def _watch(proc, results: Path, key: bytes, settings: Settings, started: float):
    """Wait for the child. Kill it when the notebook runs out of time, or when one phase (a cell,
    one grade) outlives its own timer: code that ignores or swallows the timer is stopped here.
    Returns (returncode, killed by the notebook timeout, message about a stuck phase)."""
    # "between" is the grader's own work after a cell (closing figures, the tamper check): no
    # student code runs there, but a loaded machine can be slow, so it gets a cell's time.
    limits = {
        "cell": settings.cell_timeout + GRACE,
        "grading": 2 * settings.grade_timeout + GRACE,
        "between": max(15.0, settings.cell_timeout) + GRACE,
    }
    offset, phase, since, partial = 0, None, time.monotonic(), b""
    while True:
        try:
            return proc.wait(timeout=0.25), False, None
        except subprocess.TimeoutExpired:
            pass
        now = time.monotonic()
        if now - started > settings.timeout:
            return None, True, None
        chunk = b""
        if offset <= MAX_RESULTS_BYTES:  # past the cap: only the notebook's wall clock still applies
            try:
                with open_regular(results) as f:
                    f.seek(offset)
                    chunk = f.read(WATCH_CHUNK)
            except OSError:
                pass
        elif phase is not None:
            phase = None  # a flooded results file: phases can no longer be followed, so no phase kill
        if chunk:
            offset += len(chunk)
            lines = (partial + chunk).split(b"\n")
            partial = lines.pop()
            if len(partial) > MAX_RESULT_LINE:
                partial = b""  # an endless line is no message of the child's
            for line in lines:
                msg = _verified(line, key)
                if msg is not None:
                    phase, since = msg, now
        if phase is not None and phase.get("type") in limits and now - since > limits[phase["type"]]:
            return (
                None,
                False,
                "the code kept running after its time was up (it ignores or swallows the timer) and was stopped",
            )


def _kill_group(proc):
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError, OSError):
        pass


def _judge_for(nb: CourseNotebook, specs: list):
    """(specs, {id: exercise}) when every exercise of this notebook can be judged in this process,
    the student's code only run in the child; else None (the child grades, as before)."""
    import importlib

    from .judge import judgeable

    exercises = {}
    for spec in specs:
        try:
            ex = getattr(importlib.import_module(f"helpers.problems.{spec['module']}"), spec["name"], None)
        except Exception:  # noqa: BLE001 - the child reports a broken course module, as before
            return None
        if ex is None:
            return None
        exercises[spec["id"]] = ex
    return (specs, exercises) if judgeable(list(exercises.values())) else None


def _judge_excluding(judge, exclude):
    """The judge of a rerun: exercises that crashed or hung an earlier run are not asked again."""
    if judge is None:
        return None
    specs, exercises = judge
    return [s for s in specs if s["id"] not in exclude], {k: v for k, v in exercises.items() if k not in exclude}


def grade_submission(
    sub: Submission, nb: CourseNotebook, seeds: dict, settings: Settings, scratch: Path, gpu: str | None = None
) -> dict:
    """Everything about one submission as a JSON-able record (see report.py for how it is shown)."""
    started = time.time()
    record = {
        "student": sub.student,
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
            }
            for e in nb.exercises
        ],
    }
    judge = _judge_for(nb, job["exercises"])
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
