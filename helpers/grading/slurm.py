"""``python -m helpers.grade SUBMISSIONS --out OUT --slurm``: grade a class as a Slurm job array.

The class is split into shards; array task K grades shard K as a single-host run of its own
(``cli.run`` on those submissions only, into OUT/slurm/shard-K), and a last job, once every task
has ended however it ended, merges the shards' records into OUT and writes every output from them
with the same writers as a single-host run (``outputs``). What lands in OUT:

- ``slurm/plan.json``: which submissions each shard grades (and their fingerprints), what
  discovery noted (for the summary), the jobs submitted so far
- ``slurm/grade.sbatch``, ``slurm/merge.sbatch``: the scripts, written before anything is submitted
  (``--slurm-no-submit`` stops there)
- ``slurm/shard-K/``: task K's own run: records/, pictures, its part of grades.csv, run.json
- ``slurm/logs/``: each task's and the merge's output
- then, as a single-host run: grades.csv, totals.csv, grades.json, run.json, records/, feedback/,
  canvas.csv, moodle.csv, report.html

A task that fails or is killed loses only its shard's missing records: ``--slurm --resume``
submits again only the shards with a record missing (or stale), each of them keeps the records
it already wrote, and the merge runs once they end. The salt never appears on a command line or
in a script (other users of a cluster can read both): tasks read it from OUT/run.json, which
the sandbox hides from every child along with the rest of OUT.
"""

from __future__ import annotations

import argparse
import json
import math
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from .._files import atomic_write
from . import cli, devices, outputs
from .cli import GraderError
from .process import ROOT
from .submissions import Submission

TASK_SIZE = 10  # submissions per array task unless --slurm-tasks says otherwise
# Options that say how or where this run goes rather than how to grade: never handed on to tasks.
OWN = {"submissions", "out", "resume", "salt", "jobs", "mode", "progress"}


@dataclass(frozen=True)
class Plan:
    shards: tuple  # per shard, the keys ("student/notebook") of the submissions it grades
    fingerprints: dict  # key -> the fingerprint its record must carry (cli.fingerprint)
    notes: tuple  # what discovery noted, for the merged summary
    mode: str  # "gpu" (one GPU per task) or "cpu"
    submitted: tuple = ()  # {"array": job id, "shards": [...], "merge": job id} per submission

    def save(self, base: Path) -> None:
        atomic_write(base / "plan.json", json.dumps(asdict(self), indent=1))

    @classmethod
    def load(cls, base: Path) -> Plan:
        try:
            d = json.loads((base / "plan.json").read_text())
            return cls(
                tuple(map(tuple, d["shards"])), d["fingerprints"], tuple(d["notes"]), d["mode"], tuple(d["submitted"])
            )
        except (OSError, ValueError, KeyError, TypeError) as e:
            raise GraderError(f"{base / 'plan.json'}: no Slurm plan to read ({e}); run --slurm first") from None


@dataclass(frozen=True)
class Collected:
    records: dict  # key -> record, for every submission whose shard wrote it
    missing: dict  # shard -> keys without a current record


def add_arguments(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("Slurm (docs/grading.md, 'On a Slurm cluster')")
    g.add_argument(
        "--slurm",
        action="store_true",
        help="grade as a Slurm job array: one task per shard (one GPU each in GPU mode), then a merge into OUT; "
        "with --resume only the shards with records missing are submitted again",
    )
    g.add_argument(
        "--slurm-tasks", type=int, metavar="N", help=f"tasks in the array (default: one per {TASK_SIZE} submissions)"
    )
    g.add_argument(
        "--slurm-opt",
        action="append",
        default=[],
        metavar="OPTION",
        help="an sbatch option for every job, e.g. --slurm-opt=--partition=gpu --slurm-opt=--account=cs101",
    )
    g.add_argument(
        "--slurm-setup",
        action="append",
        default=[],
        metavar="LINE",
        help="a shell line each job runs first, e.g. --slurm-setup 'module load cuda/12.4'",
    )
    g.add_argument("--slurm-max-running", type=int, metavar="M", help="at most M tasks at once (the array's %%M)")
    g.add_argument("--slurm-wait", action="store_true", help="wait for the merge and exit with its status")
    g.add_argument("--slurm-no-submit", action="store_true", help="write the plan and the scripts, submit nothing")
    g.add_argument("--slurm-merge", action="store_true", help="merge the shards' records into OUT (the last job)")
    g.add_argument("--slurm-shard", type=int, help=argparse.SUPPRESS)  # what one array task runs


def main(argv=None) -> int:
    """``python -m helpers.grade``: a Slurm step when a --slurm option says so, else ``cli.run``."""
    p = cli.build_parser()
    add_arguments(p)
    args = p.parse_args(argv)
    if args.slurm_shard is not None:
        work = run_shard
    elif args.slurm_merge:
        work = merge
    elif args.slurm:
        work = submit
    else:
        work = cli.run
    return cli.guarded(lambda: work(args))


# ----------------------------------------------------------------------------- the plan


def split(keys, tasks: int) -> tuple:
    """``keys`` dealt round-robin into ``tasks`` shards (fewer when there are fewer keys): a
    student's notebooks, and each notebook's submissions, spread over the tasks."""
    keys = sorted(keys)
    n = max(1, min(tasks, len(keys)))
    return tuple(tuple(keys[i::n]) for i in range(n))


def shard_dir(base: Path, k: int) -> Path:
    return base / f"shard-{k:03d}"


def _record_file(base: Path, k: int, key: str) -> Path:
    student, _, notebook = key.partition("/")
    return shard_dir(base, k) / "records" / f"{student}__{notebook}.json"


def collect(plan: Plan, base: Path) -> Collected:
    """Every record the shards wrote that belongs to the plan (same fingerprint), and per shard
    what is still missing: a task that failed, was killed or never ran."""
    records, missing = {}, {}
    for k, keys in enumerate(plan.shards):
        for key in keys:
            rec = cli.load_record(_record_file(base, k, key))
            if rec and rec.get("fingerprint") == plan.fingerprints[key]:
                records[key] = rec
            else:
                missing.setdefault(k, []).append(key)
    return Collected(records, missing)


def task_options(args) -> list[str]:
    """The grading options every job is given: those the user set (paths made absolute: a job
    may start elsewhere), none of the options that say where or how this run goes."""
    defaults, opts = cli.build_parser(), []
    for dest, value in sorted(vars(args).items()):
        if dest in OWN or dest.startswith("slurm") or value == defaults.get_default(dest):
            continue
        flag = "--" + dest.replace("_", "-")
        if value is True:
            opts.append(flag)
        elif value not in (False, None):
            opts.append(f"{flag}={Path(value).resolve() if isinstance(value, Path) else value}")
    return opts


def script(args, plan: Plan, step: str) -> str:
    """The sbatch script of ``step`` ("grade": the array task; "merge": the last job)."""
    base = args.out.resolve() / "slurm"
    head = [f"#SBATCH --job-name={'grade' if step == 'grade' else 'grade-merge'}"]
    grade = [sys.executable, "-m", "helpers.grade", str(args.submissions.resolve()), f"--out={args.out.resolve()}"]
    if step == "grade":
        head.append(f"#SBATCH --output={base}/logs/grade-%A_%a.out")
        if plan.mode == "gpu":
            head.append("#SBATCH --gres=gpu:1")
            grade += ["--mode=gpu"]
        else:  # CPU mode: the workers this task may run, and no more than its CPUs
            workers = args.jobs or 1
            head.append(f"#SBATCH --cpus-per-task={workers}")
            grade += ["--mode=cpu", f"--jobs={workers}"]
        grade += ["--progress=log"]
        tail = [*map(shlex.quote, grade), *map(shlex.quote, task_options(args)), '--slurm-shard="$SLURM_ARRAY_TASK_ID"']
    else:
        head.append(f"#SBATCH --output={base}/logs/merge-%j.out")
        tail = [*map(shlex.quote, grade), "--slurm-merge", *map(shlex.quote, task_options(args))]
    head += [f"#SBATCH {shlex.quote(o)}" for o in args.slurm_opt]
    return "\n".join(
        [
            "#!/bin/bash",
            f"# Written by python -m helpers.grade --slurm (helpers/grading/slurm.py): the {step} step.",
            *head,
            "set -euo pipefail",
            f"cd {shlex.quote(str(ROOT))}",
            *args.slurm_setup,
            "exec " + " ".join(tail),
            "",
        ]
    )


def merged_manifest(top: dict, shards: list, plan: Plan, records: list) -> dict:
    """OUT/run.json as a single-host run writes it (the settings the tasks graded with, the salt
    and start of the whole run), and how Slurm ran it."""
    first = shards[0] if shards else {}
    manifest = {k: top[k] for k in ("salt", "submissions", "course", "started") if k in top}
    manifest.update({k: first[k] for k in ("mode", "jobs", "cell_timeout", "timeout", "sandbox") if k in first})
    if plan.mode == "gpu":  # each task's GPU is "0" of its own node: name them by UUID, else host/index
        manifest["devices"] = [g.key for g in devices.by_gpu(records)]
    manifest["slurm"] = {"tasks": len(plan.shards), "jobs": [s.get("array") for s in plan.submitted]}
    return manifest


# ----------------------------------------------------------------------------- the three steps


def submit(args) -> int:
    """Plan the shards, write the scripts, submit the array and the merge after it."""
    setup = cli.check(args)
    for name in ("slurm_tasks", "slurm_max_running"):
        if getattr(args, name) is not None and getattr(args, name) < 1:
            raise GraderError(f"--{name.replace('_', '-')} {getattr(args, name)}: must be 1 or more")
    out, base = args.out, args.out / "slurm"
    out.mkdir(parents=True, exist_ok=True)
    top = cli.manifest_for(out, args)  # the salt: --salt, else the one OUT/run.json keeps, else a new one
    scratch = Path(tempfile.mkdtemp(prefix="grade-"))
    try:
        subs, notes = cli.find(args, setup.course, scratch)
        fps = {sub.key: cli.fingerprint(sub, setup.course[sub.notebook], top["salt"]) for sub in subs}
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    old = _old_plan(base) if args.resume else None
    if old and set(old.fingerprints) == set(fps) and not args.slurm_tasks:
        shards = old.shards  # the same class: each task finds the records it wrote before
    else:
        shards = split(fps, args.slurm_tasks or math.ceil(len(fps) / TASK_SIZE))
    if old and shards is not old.shards:  # dealt again: each record still current goes to its new shard
        _carry(old, shards, fps, base)
    if not args.resume:  # a fresh run, as a single-host one: nothing of an earlier run is kept
        for stale in (base, out / "records", out / "feedback"):
            shutil.rmtree(stale, ignore_errors=True)
    mode = "cpu" if args.mode == "cpu" else "gpu"  # auto is GPU: a node without one fails, never grades slowly
    plan = Plan(shards, fps, tuple(notes), mode, old.submitted if old else ())
    todo = sorted(collect(plan, base).missing)
    atomic_write(out / "run.json", json.dumps(top, indent=1))
    (base / "logs").mkdir(parents=True, exist_ok=True)
    for step in ("grade", "merge"):
        atomic_write(base / f"{step}.sbatch", script(args, plan, step))
    plan.save(base)
    if not todo:
        print("every shard's records are in place: merging", file=sys.stderr)
        return merge(args)
    array = [f"--array={','.join(map(str, todo))}" + (f"%{args.slurm_max_running}" if args.slurm_max_running else "")]
    print(f"{len(fps)} submission(s) in {len(shards)} shard(s); submitting shard(s) {_ranges(todo)}", file=sys.stderr)
    if args.slurm_no_submit:
        print(f"sbatch {array[0]} {base / 'grade.sbatch'}")
        print(f"sbatch --dependency=afterany:<the array's job id> {base / 'merge.sbatch'}")
        return 0
    job = _sbatch([*array, str(base / "grade.sbatch")]).id
    wait = ["--wait"] if args.slurm_wait else []
    merge_job = _sbatch([f"--dependency=afterany:{job}", *wait, str(base / "merge.sbatch")], wait=bool(wait))
    plan = Plan(
        shards, fps, tuple(notes), mode, (*plan.submitted, {"array": job, "shards": todo, "merge": merge_job.id})
    )
    plan.save(base)
    print(f"array job {job}, merge job {merge_job.id}; logs in {base / 'logs'}", file=sys.stderr)
    if not wait:
        print(f"submitted: squeue -j {job},{merge_job.id} shows them; OUT is {out} once the merge has run")
        return 0
    log = base / "logs" / f"merge-{merge_job.id}.out"
    print(log.read_text(errors="replace") if log.exists() else f"(no merge log at {log})")
    return merge_job.status


def run_shard(args) -> int:
    """One array task: its shard graded as a single-host run into OUT/slurm/shard-K, resumed (a
    task run again keeps the records it wrote), with all of OUT hidden from the children."""
    base = args.out / "slurm"
    plan, k = Plan.load(base), args.slurm_shard
    if not 0 <= k < len(plan.shards):
        raise GraderError(f"--slurm-shard {k}: the plan in {base} has shards 0 to {len(plan.shards) - 1}")
    salt = (cli.load_record(args.out / "run.json") or {}).get("salt")
    if not salt:
        raise GraderError(f"{args.out / 'run.json'} holds no salt: submit the run again with --slurm --resume")
    task = argparse.Namespace(**{**vars(args), "out": shard_dir(base, k), "resume": True, "salt": salt})
    return cli.run(task, keys=frozenset(plan.shards[k]), hide=(args.out.resolve(),))


def merge(args) -> int:
    """Every shard's records into OUT, then every output written from them: refused (status 1,
    nothing written) while a shard's records are missing."""
    started = time.monotonic()
    setup = cli.check(args)
    out, base = args.out, args.out / "slurm"
    plan = Plan.load(base)
    got = collect(plan, base)
    if got.missing:
        lost = sum(map(len, got.missing.values()))
        print(
            f"grade: {lost} submission(s) have no record: shard(s) {_ranges(got.missing)} failed or did not run "
            f"(their logs are in {base / 'logs'}). Run the same command with --slurm --resume to submit only those.",
            file=sys.stderr,
        )
        return 1
    for k, keys in enumerate(plan.shards):
        for key in keys:
            rec = got.records[key]
            path = cli.record_path(out, Submission(rec["student"], rec["notebook"], None))
            atomic_write(path, json.dumps(rec, indent=1, default=str))
            for row in rec["exercises"]:  # the pictures its feedback shows, beside it as in a single-host run
                if row.get("picture"):
                    dest = out / "feedback" / rec["student"] / row["picture"]
                    dest.parent.mkdir(parents=True, exist_ok=True)
                    shutil.copyfile(shard_dir(base, k) / "feedback" / rec["student"] / row["picture"], dest)
    shards = [cli.load_record(shard_dir(base, k) / "run.json") or {} for k in range(len(plan.shards))]
    records = [got.records[key] for keys in plan.shards for key in keys]
    manifest = merged_manifest(cli.load_record(out / "run.json") or {}, shards, plan, records)
    atomic_write(out / "run.json", json.dumps(manifest, indent=1))
    max_points, warnings = cli.point_table(setup.course, args.points)
    warnings += plan.notes
    seconds = _since(manifest.get("started"), time.monotonic() - started)
    box = manifest.get("sandbox", "")
    problems = outputs.finish(
        out, records, max_points, manifest, warnings, args.lms_columns, setup.roster, seconds, box
    )
    return 1 if problems or any(r.get("outcome") == "grader_error" for r in records) else 0


# ----------------------------------------------------------------------------- helpers


@dataclass(frozen=True)
class Submitted:
    id: str
    status: int  # sbatch's exit status: with --wait, the job's


def _sbatch(argv: list, wait: bool = False) -> Submitted:
    try:
        r = subprocess.run(["sbatch", "--parsable", *argv], stdout=subprocess.PIPE, text=True)
    except FileNotFoundError:
        raise GraderError("sbatch not found: run --slurm on the cluster's login node (or --slurm-no-submit)") from None
    job = r.stdout.strip().splitlines()[0].split(";")[0] if r.stdout.strip() else ""  # "id" or "id;cluster"
    if not job or (r.returncode and not wait):
        raise GraderError(f"sbatch {' '.join(argv)} failed (exit status {r.returncode})")
    return Submitted(job, r.returncode)


def _carry(old: Plan, shards, fps: dict, base: Path) -> None:
    """Copy every record of the old deal that is still current (same fingerprint) into the folder of
    the shard it is dealt to now, pictures included, so --resume regrades only what is missing."""
    where = {key: k for k, keys in enumerate(old.shards) for key in keys}
    for k, keys in enumerate(shards):
        for key in keys:
            was = where.get(key)
            rec = cli.load_record(_record_file(base, was, key)) if was is not None and was != k else None
            if not rec or rec.get("fingerprint") != fps.get(key):
                continue
            shown = [r["picture"] for r in rec.get("exercises", ()) if r.get("picture")]
            pictures = [Path("feedback", rec["student"], name) for name in shown]
            if not all((shard_dir(base, was) / p).is_file() for p in pictures):
                continue  # graded again rather than merged without its pictures
            for p in pictures:
                (shard_dir(base, k) / p).parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(shard_dir(base, was) / p, shard_dir(base, k) / p)
            dest = _record_file(base, k, key)
            dest.parent.mkdir(parents=True, exist_ok=True)
            atomic_write(dest, json.dumps(rec, indent=1, default=str))


def _old_plan(base: Path) -> Plan | None:
    try:
        return Plan.load(base)
    except GraderError:
        return None


def _since(started, otherwise: float) -> float:
    """Seconds since the run's start (run.json's local time): the summary times the whole run."""
    try:
        return max(time.time() - time.mktime(time.strptime(started, "%Y-%m-%d %H:%M:%S")), 0.0)
    except (TypeError, ValueError, OverflowError):
        return otherwise


def _ranges(shards) -> str:
    return ", ".join(map(str, sorted(shards)))
