"""``python -m helpers.grade SUBMISSIONS --out DIR``: unpack -> discover -> execute+grade -> report.

Exit status: 0 when every submission was graded (whatever the students' grades, crashes
included), 1 when the grader itself failed somewhere (an internal error, an exercise the course
does not define), 2 for a usage problem (no submissions, bad options), 130 when interrupted
(``--resume`` continues).
"""

from __future__ import annotations

import argparse
import concurrent.futures as cf
import csv
import hashlib
import importlib
import json
import os
import queue
import secrets
import shutil
import sys
import tempfile
import time
import traceback
import zipfile
from dataclasses import dataclass
from pathlib import Path

from .._files import atomic_write
from . import lms, outputs, process, report, sandbox
from .course import load_course
from .devices import visible_devices
from .execute import Settings, child_env, grade_submission
from .process import ROOT
from .progress import MODES as PROGRESS_MODES
from .progress import Progress
from .records import copy_pictures
from .roster import RosterError, read_roster
from .submissions import MAX_UPLOAD_BYTES, discover, unpack
from .template import templates

RECORD_VERSION = 1


class GraderError(Exception):
    """A problem with how the grader was called or set up (exit status 2)."""


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m helpers.grade",
        description=(
            "Grade a folder or zip of submitted course notebooks: each runs in its own process, the "
            "grader's own checks decide, and grades.csv, grades.json and one feedback page per student are written."
        ),
    )
    p.add_argument("submissions", type=Path, help="a folder (one subfolder or notebook per student) or a .zip of one")
    p.add_argument("--out", type=Path, default=Path("grades"), help="where the results go (default: grades/)")
    p.add_argument(
        "-j",
        "--jobs",
        type=int,
        default=0,
        help="submissions graded at once (default: CPU cores; on GPUs: one per GPU)",
    )
    p.add_argument("--resume", action="store_true", help="keep the submissions already graded in OUT, grade the rest")
    p.add_argument(
        "--salt", help="secret mixed into every seed (default: random on the first run, kept in OUT/run.json)"
    )
    p.add_argument(
        "--points", type=Path, help="JSON {exercise: points} or CSV 'exercise,points' overriding each exercise's points"
    )
    p.add_argument("--notebook", help="grade every notebook as this course notebook (number or name, e.g. 02)")
    p.add_argument(
        "--course", type=Path, default=ROOT / "notebooks", help="the pristine course notebooks (default: notebooks/)"
    )
    p.add_argument(
        "--cell-timeout", type=float, default=120.0, help="seconds per cell and per exercise check (default 120)"
    )
    p.add_argument(
        "--grade-timeout", type=float, default=None, help="seconds per exercise check (default: --cell-timeout)"
    )
    p.add_argument("--timeout", type=float, default=900.0, help="seconds per notebook run (default 900)")
    p.add_argument(
        "--retries", type=int, default=1, help="re-runs that skip a cell which crashed or hung the notebook (default 1)"
    )
    p.add_argument(
        "--memory-mb",
        type=int,
        default=None,
        help="address-space cap per submission in CPU mode (default 4096; 0: none)",
    )
    p.add_argument(
        "--mode",
        choices=("auto", "cpu", "gpu"),
        default="auto",
        help="run submissions on the GPU(s) or the CPU simulator",
    )
    p.add_argument(
        "--max-upload-mb",
        type=float,
        default=MAX_UPLOAD_BYTES / (1 << 20),
        help=(
            "what one student's submission may unpack in all, every nested zip included; past it none of it "
            f"is graded (default {MAX_UPLOAD_BYTES >> 20})"
        ),
    )
    p.add_argument(
        "--keep-scratch", action="store_true", help="keep the per-submission working folders (for debugging)"
    )
    p.add_argument(
        "--no-sandbox",
        action="store_true",
        help="run submissions without namespaces even where they are available (docs/grading.md says what is lost)",
    )
    p.add_argument(
        "--lms-columns",
        choices=lms.PER,
        default="notebook",
        help="canvas.csv and moodle.csv: one grade column per notebook (default) or per exercise",
    )
    p.add_argument(
        "--roster", type=Path, help="CSV naming each student's LMS identity (docs/grading.md; a Canvas export works)"
    )
    p.add_argument(
        "--progress",
        choices=PROGRESS_MODES,
        default="auto",
        help="a bar (on a terminal, the default), one line per submission (in a log), or nothing",
    )
    return p


def parse_args(argv=None):
    return build_parser().parse_args(argv)


def seed_for(salt: str, student: str, exercise: str) -> int:
    digest = hashlib.sha256(f"{salt}\0{student}\0{exercise}".encode()).digest()
    return int.from_bytes(digest[:8], "little") % 1_000_000


def seeds_for(salt: str, student: str, nb) -> dict:
    """Each exercise's seed, and beside it (``"<id> recheck"``) the secret from which the judge draws
    the seeds of checks made after the student's process saw the inputs (judge.recheck_seed)."""
    seeds = {e.id: seed_for(salt, student, e.id) for e in nb.exercises}
    for e in nb.exercises:
        seeds[f"{e.id} recheck"] = hashlib.sha256(f"{salt}\0{student}\0{e.id}\0recheck".encode()).hexdigest()
    return seeds


def decide_mode(wanted: str) -> tuple[str, list]:
    """("cpu", []) or ("gpu", [device ids for CUDA_VISIBLE_DEVICES, one per worker])."""
    if wanted == "cpu":
        return "cpu", []
    from helpers import env

    if not env.MODE.gpu:
        if wanted == "gpu":
            raise GraderError(f"--mode gpu, but {env.MODE.reason}")
        return "cpu", []
    return "gpu", visible_devices(os.environ.get("CUDA_VISIBLE_DEVICES"), env.MODE.info.count)


def point_table(course: dict, override: Path | None) -> tuple[dict, list]:
    """{exercise id: max points}: each exercise's own ``points``, then the override file."""
    warnings, table = [], {}
    for nb in course.values():
        for spec in nb.exercises:
            try:
                ex = getattr(importlib.import_module(f"helpers.problems.{spec.module}"), spec.name)
                table[spec.id] = float(ex.points)
            except Exception as e:  # any failure is reported; the child reports it per submission too
                table[spec.id] = 1.0
                warnings.append(f"{spec.id}: cannot read its points ({type(e).__name__}: {e}); using 1")
    if override:
        try:
            text = override.read_text()
            data = (
                json.loads(text)
                if override.suffix.lower() == ".json"
                else {
                    row[0].strip(): row[1]
                    for row in csv.reader(text.splitlines())
                    if len(row) >= 2 and not row[0].startswith("#")
                }
            )
            data = {k: float(v) for k, v in data.items() if k != "exercise"}
        except (OSError, ValueError) as e:
            raise GraderError(f"--points {override}: {e}") from None
        unknown = sorted(set(data) - set(table))
        if unknown:
            raise GraderError(f"--points names exercises the course does not grade: {', '.join(unknown)}")
        table.update(data)
    return table, warnings


def fingerprint(sub, nb, salt: str) -> str:
    h = hashlib.sha256()
    h.update(f"{RECORD_VERSION}\0{salt}\0{sub.student}\0{nb.stem}\0".encode())
    h.update(f"{sub.name}\0".encode("utf-8", "surrogateescape"))  # an id another name had in an earlier run
    h.update(json.dumps([e.__dict__ for e in nb.exercises], sort_keys=True).encode())
    h.update(f"{sub.problem}\0".encode())
    if sub.path is not None:
        try:
            with open(sub.path, "rb") as f:
                for block in iter(lambda: f.read(1 << 20), b""):
                    h.update(block)
        except OSError as e:
            h.update(f"unreadable: {e}".encode())
    return h.hexdigest()


def record_path(out: Path, sub) -> Path:
    return out / "records" / f"{sub.student}__{sub.notebook}.json"


def manifest_for(out: Path, args) -> dict:
    path = out / "run.json"
    old = {}
    if path.exists():
        try:
            old = json.loads(path.read_text())
        except ValueError:
            old = {}
    salt = args.salt if args.salt is not None else old.get("salt") or secrets.token_hex(8)
    if args.resume and old.get("salt") and old["salt"] != salt:
        raise GraderError(f"--resume with a different --salt than the run in {out} (its salt is in {path})")
    return {
        "salt": salt,
        "submissions": str(args.submissions),
        "course": str(args.course),
        "started": old.get("started") if args.resume else time.strftime("%Y-%m-%d %H:%M:%S"),
    }


@dataclass(frozen=True)
class Setup:
    """What a run needs before anything is unpacked: the course and the roster."""

    course: dict
    roster: object


def check(args) -> Setup:
    """The options checked, the course and the roster read; a problem is a GraderError."""
    course = load_course(args.course)
    if not course:
        raise GraderError(f"no course notebooks with exercises in {args.course}")
    if args.notebook and not any(args.notebook in (nb.stem, nb.number) for nb in course.values()):
        raise GraderError(f"--notebook {args.notebook}: no such course notebook with exercises ({', '.join(course)})")
    if not args.max_upload_mb > 0:
        raise GraderError(f"--max-upload-mb {args.max_upload_mb:g}: must be more than 0")
    if not args.submissions.exists():
        raise GraderError(f"{args.submissions} does not exist")
    try:
        return Setup(course, read_roster(args.roster) if args.roster else None)
    except RosterError as e:
        raise GraderError(str(e)) from None


def find(args, course: dict, scratch: Path) -> tuple[list, list]:
    """The class's submissions (unpacked into ``scratch``) and what discovery noted."""
    damaged = {}
    try:
        root, zip_notes = unpack(args.submissions, scratch, damaged)
    except (OSError, zipfile.BadZipFile, EOFError) as e:
        raise GraderError(f"{args.submissions}: {e}") from None
    upload = int(args.max_upload_mb * (1 << 20))
    subs, notes = discover(root, course, scratch, args.notebook, damaged, zip_notes, upload)
    if not subs:
        raise GraderError(f"no submissions found in {args.submissions} (expected one folder or notebook per student)")
    return subs, notes


def run(args, keys=None, hide=()) -> int:
    """Grade the class into ``args.out``; ``keys``: only these submissions (one Slurm task's
    share, helpers/grading/slurm.py), ``hide``: more folders no child may see."""
    started = time.monotonic()
    setup = check(args)
    course, roster = setup.course, setup.roster
    out = args.out
    out.mkdir(parents=True, exist_ok=True)
    manifest = manifest_for(out, args)
    mode, devices = decide_mode(args.mode)
    jobs = args.jobs or (len(devices) if mode == "gpu" else os.cpu_count() or 1)
    if mode == "gpu":
        jobs = min(jobs, len(devices))
    memory = args.memory_mb if args.memory_mb is not None else (4096 if mode == "cpu" else 0)
    settings = Settings(
        args.cell_timeout,
        args.grade_timeout or args.cell_timeout,
        args.timeout,
        args.retries,
        memory if mode == "cpu" else 0,
        mode,
    )
    # Probed once per run; OUT and the submissions are never bound into a child's tree.
    found = sandbox.detect(args.no_sandbox, mode == "gpu", hide=(out.resolve(), args.submissions.resolve(), *hide))
    settings.sandbox = found if found.kind else None
    settings.template, settings.compile_template = templates(settings, child_env(settings, Path(tempfile.gettempdir())))
    box = found.describe()
    manifest.update(mode=mode, jobs=jobs, cell_timeout=args.cell_timeout, timeout=args.timeout, sandbox=box)
    if mode == "gpu":
        manifest["devices"] = devices[:jobs]
    atomic_write(out / "run.json", json.dumps(manifest, indent=1))
    max_points, warnings = point_table(course, args.points)

    scratch = Path(tempfile.mkdtemp(prefix="grade-"))
    try:
        subs, notes = find(args, course, scratch)
        warnings += notes
        if keys is not None:
            subs = [sub for sub in subs if sub.key in keys]
        records, todo = {}, []
        if not args.resume and (out / "records").exists():
            shutil.rmtree(out / "records")
            shutil.rmtree(out / "feedback", ignore_errors=True)
        for sub in subs:
            nb = course[sub.notebook]
            fp = fingerprint(sub, nb, manifest["salt"])
            old = load_record(record_path(out, sub)) if args.resume else None
            if old and old.get("fingerprint") == fp:
                records[sub.key] = old
            else:
                todo.append((sub, nb, fp))
        failed = _execute(todo, records, out, scratch, settings, manifest, max_points, jobs, devices, args.progress)
    finally:
        for t in (settings.template, settings.compile_template):
            if t is not None:
                t.close()
        if not args.keep_scratch:
            shutil.rmtree(scratch, ignore_errors=True)
        else:
            print(f"scratch kept in {scratch}", file=sys.stderr)
    seconds = time.monotonic() - started
    lms_columns = args.lms_columns
    problems = outputs.finish(out, records.values(), max_points, manifest, warnings, lms_columns, roster, seconds, box)
    return 1 if failed or problems else 0


def load_record(path: Path):
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return None


def _execute(todo, records, out, scratch, settings, manifest, max_points, jobs, devices, show="auto") -> int:
    """Grade ``todo`` on ``jobs`` workers; each finished submission is written at once."""
    if not todo:
        return 0
    progress = Progress(len(todo), sys.stderr, show, gpus=devices[:jobs])
    gpus = queue.Queue()
    for d in devices[:jobs] or [None] * jobs:  # GPU mode: one token per GPU used; CPU mode: one per worker
        gpus.put(d)
    failed = 0

    def work(i, sub, nb, fp):
        gpu = gpus.get()
        progress.start(sub.key, gpu)
        try:
            where = scratch / "runs" / f"{i:05d}"
            started = time.time()
            rec = grade_submission(sub, nb, manifest["seeds"][sub.key], settings, where, gpu)
            if gpu is not None and rec.get("runs"):  # a child ran on this GPU (a missing notebook runs nothing)
                rec.update(gpu=gpu, started_at=round(started, 3), finished_at=round(time.time(), 3))
            copy_pictures(rec, out / "feedback" / sub.student, where)
            return rec
        finally:
            gpus.put(gpu)

    manifest["seeds"] = {sub.key: seeds_for(manifest["salt"], sub.student, nb) for sub, nb, _ in todo}
    process.STOP.clear()
    pool = cf.ThreadPoolExecutor(max_workers=jobs)
    futures = {pool.submit(work, i, sub, nb, fp): (sub, nb, fp) for i, (sub, nb, fp) in enumerate(todo)}
    try:
        for fut in cf.as_completed(futures):
            sub, nb, fp = futures[fut]
            try:
                rec = fut.result()
            except Exception:  # any grader bug: this submission is marked, the batch goes on
                failed += 1
                rec = _internal_error(sub, nb, traceback.format_exc())
            rec["fingerprint"] = fp
            atomic_write(record_path(out, sub), json.dumps(rec, indent=1, default=str))
            records[sub.key] = rec
            ordered = sorted(records.values(), key=lambda r: (r["student"], r["notebook"]))
            report.write_tables(out, ordered, max_points, {k: v for k, v in manifest.items() if k != "seeds"})
            report.write_feedback(out, ordered, max_points, student=sub.student)
            progress.update(sub.key, rec["outcome"], gpu=rec.get("gpu"))
    except KeyboardInterrupt:
        # Ctrl-C: start nothing new, kill the running children, keep every record already written.
        process.stop_all()
        pool.shutdown(wait=False, cancel_futures=True)
        cf.wait(futures, timeout=10)
        raise
    finally:
        pool.shutdown(wait=False, cancel_futures=True)
        progress.close()
    manifest.pop("seeds", None)
    return failed


def _internal_error(sub, nb, tb: str) -> dict:
    last = tb.strip().splitlines()[-1]
    return {
        "student": sub.student,
        "name": sub.name,
        "notebook": nb.stem,
        "file": str(sub.path),
        "outcome": "grader_error",
        "problem": f"the grader failed on this submission ({last}); please report it",
        "grader_problem": last,
        "exercises": [
            {"exercise": e.id, "status": "not_graded", "message": "not graded: the grader itself failed."}
            for e in nb.exercises
        ],
        "notes": [],
        "cell_errors": [],
        "review": [],
        "output": tb,
        "tamper": None,
        "runs": [],
        "skipped_cells": [],
    }


def main(argv=None) -> int:
    return guarded(lambda: run(parse_args(argv)))


def guarded(work) -> int:
    """``work()``'s exit status; a usage problem is 2, Ctrl-C 130 (python -m helpers.grade's statuses)."""
    try:
        return work()
    except GraderError as e:
        print(f"grade: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("\ninterrupted: what was graded is saved; rerun with --resume to continue", file=sys.stderr)
        return 130
