"""make test-slurm's check, run against a Slurm cluster (tools/slurm_cluster.sh starts one here):
a small class graded in CPU mode on this host and as a Slurm job array must give the same results,
and so must an array one of whose tasks was killed, once ``--slurm --resume`` has run it again.

    python tools/slurm_check.py WORKDIR
    python tools/slurm_check.py --compare OUT_A OUT_B     only the comparison of two OUT folders

The class: copies of course notebooks 01 and 02, solved (solutions/), as handed out (notebooks/),
one with a wrong kernel (a failed check and a picture), one file that is not a notebook, and
students who handed in only one of the two (a missing submission each): 14 submissions of 7
students. The course is copied too, so an edit of notebooks/ meanwhile changes nothing.

Equal means grades.csv, totals.csv, canvas.csv, moodle.csv and every feedback page the same
byte for byte, and grades.json and every record the same once the fields that time a run are
left out (below), and the run's ``jobs`` and ``slurm`` (how it ran, not what it found).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SALT = "slurm-check"
TASKS = 3
TIMEOUT = 600  # seconds for one grading command; the make target has its own limit around everything
TIMING = {"seconds", "started", "started_at", "finished_at"}  # they vary from run to run
HOW = {"jobs", "slurm"}
NB01, NB02 = "01_threads_blocks_grids.ipynb", "02_first_kernels.ipynb"
CLASS = {  # student -> [(source folder or None for a damaged file, notebook)]
    "alice": [("solutions", NB01)],
    "bob": [("notebooks", NB01)],
    "carol": [("solutions", NB02)],
    "dave": [("notebooks", NB02)],
    "erin": [("solutions", NB01), ("solutions", NB02)],
    "frank": [("notebooks", NB01), ("wrong", NB02)],
    "gina": [(None, NB01)],
}


def build_class(work: Path) -> tuple[Path, Path]:
    course, subs = work / "course", work / "subs"
    shutil.rmtree(work, ignore_errors=True)
    course.mkdir(parents=True)
    for nb in (ROOT / "notebooks").glob("*.ipynb"):
        shutil.copy(nb, course)
    for student, files in CLASS.items():
        (subs / student).mkdir(parents=True)
        for source, name in files:
            dest = subs / student / name
            if source is None:
                dest.write_text("this is not a notebook")
            elif source == "wrong":  # one block's worth of threads only: a failed check, with a picture
                nb = json.loads((ROOT / "solutions" / name).read_text())
                text = json.dumps(nb)
                for cell in nb["cells"]:
                    src = "".join(cell["source"])
                    if "def vector_add" in src:
                        cell["source"] = src.replace("i = cuda.grid(1)", "i = cuda.threadIdx.x")
                assert json.dumps(nb) != text, "the vector_add solution changed: update tools/slurm_check.py"
                dest.write_text(json.dumps(nb))
            else:
                shutil.copy(ROOT / source / name, dest)
    return course, subs


def _strip(x):
    if isinstance(x, dict):
        return {k: _strip(v) for k, v in x.items() if k not in TIMING}
    if isinstance(x, list):
        return [_strip(v) for v in x]
    return x


def _json(path: Path):
    doc = _strip(json.loads(path.read_text()))
    if isinstance(doc.get("run"), dict):
        doc["run"] = {k: v for k, v in doc["run"].items() if k not in HOW}
    return doc


def _lines(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8").splitlines()


def compare(a: Path, b: Path) -> list[str]:
    """Every difference between two OUT folders, one line each (empty: the same results)."""
    diffs = []
    for name in ("grades.csv", "totals.csv", "canvas.csv", "moodle.csv"):
        la, lb = _lines(a / name), _lines(b / name)
        if len(la) != len(lb):
            diffs.append(f"{name}: {len(la)} rows against {len(lb)}")
        diffs += [f"{name} row {i}: {x!r} against {y!r}" for i, (x, y) in enumerate(zip(la, lb)) if x != y]
    ga, gb = _json(a / "grades.json"), _json(b / "grades.json")
    for part in ("run", "grades", "submissions"):
        if isinstance(ga.get(part), list) and isinstance(gb.get(part), list) and len(ga[part]) == len(gb[part]):
            diffs += [
                f"grades.json {part}[{i}]: {x} against {y}"
                for i, (x, y) in enumerate(zip(ga[part], gb[part]))
                if x != y
            ]
        elif ga.get(part) != gb.get(part):
            diffs.append(f"grades.json {part}: {ga.get(part)} against {gb.get(part)}")
    for sub in ("records", "feedback"):
        fa = sorted(p.relative_to(a) for p in (a / sub).rglob("*") if p.is_file())
        fb = sorted(p.relative_to(b) for p in (b / sub).rglob("*") if p.is_file())
        if fa != fb:
            diffs.append(f"{sub}/: {[str(p) for p in fa]} against {[str(p) for p in fb]}")
            continue
        for rel in fa:
            same = (
                _json(a / rel) == _json(b / rel)
                if rel.suffix == ".json"
                else (a / rel).read_bytes() == (b / rel).read_bytes()
            )
            if not same:
                diffs.append(f"{rel} differs")
    return diffs


def grade(subs: Path, course: Path, out: Path, *more: str) -> subprocess.CompletedProcess:
    argv = [sys.executable, "-m", "helpers.grade", str(subs), "--out", str(out), "--course", str(course)]
    argv += ["--mode", "cpu", "--salt", SALT, "--progress", "log", *more]
    print("$", " ".join(argv), flush=True)
    r = subprocess.run(
        argv, cwd=ROOT, env={**os.environ, "COURSE_MODE": "cpu"}, capture_output=True, text=True, timeout=TIMEOUT
    )
    print(r.stdout[-1500:], r.stderr[-1500:], sep="\n", flush=True)
    return r


def expect(ok: bool, what: str) -> None:
    if not ok:
        raise SystemExit(f"slurm check FAILED: {what}")
    print(f"ok: {what}", flush=True)


def check_same(a: Path, b: Path, what: str) -> None:
    diffs = compare(a, b)
    for d in diffs[:40]:
        print("  " + d)
    expect(not diffs, f"{what}: the same grades, totals, LMS files, feedback, records and grades.json")


def main(work: Path) -> None:
    course, subs = build_class(work)
    single = work / "single"
    r = grade(subs, course, single, "-j2")
    expect(r.returncode == 0, "the single-host run exits 0")

    r = grade(subs, course, work / "slurm", "--slurm", f"--slurm-tasks={TASKS}", "--slurm-wait")
    expect(r.returncode == 0, "the Slurm run (array and merge) exits 0")
    check_same(single, work / "slurm", "Slurm against single host")

    failed = work / "failed"
    records = failed / "slurm" / "shard-001" / "records"
    # Task 1 is killed (SIGKILL, as by an out-of-memory killer) once it has written its first record.
    kill = (
        'if [ "${SLURM_ARRAY_TASK_ID:-}" = 1 ]; then '
        f"(until ls {records}/*.json >/dev/null 2>&1; do sleep 0.1; done; kill -9 $$) & fi"
    )
    r = grade(subs, course, failed, "--slurm", f"--slurm-tasks={TASKS}", "--slurm-wait", "--slurm-setup", kill)
    expect(
        r.returncode == 1 and "shard(s) 1 failed" in r.stdout + r.stderr,
        "a killed task: the merge refuses, naming shard 1",
    )
    plan = json.loads((failed / "slurm" / "plan.json").read_text())
    kept, size = len(list(records.glob("*.json"))), len(plan["shards"][1])
    expect(0 < kept < size, f"the killed task left {kept} of its {size} records")

    r = grade(subs, course, failed, "--slurm", "--resume", "--slurm-wait")
    expect(r.returncode == 0, "--slurm --resume exits 0")
    plan = json.loads((failed / "slurm" / "plan.json").read_text())
    expect(plan["submitted"][-1]["shards"] == [1], "--resume submitted shard 1 alone")
    log = failed / "slurm" / "logs" / f"grade-{plan['submitted'][-1]['array']}_1.out"
    expect(f"/{size - kept}]" in log.read_text(), f"the resumed task graded only its {size - kept} missing submissions")
    check_same(single, failed, "killed and resumed Slurm run against single host")


if __name__ == "__main__":
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("work", type=Path, nargs="?", default=ROOT / "build" / "slurm-check")
    p.add_argument("--compare", nargs=2, type=Path, metavar=("OUT_A", "OUT_B"))
    a = p.parse_args()
    if a.compare:
        diffs = compare(*a.compare)
        print("\n".join(diffs) or "the same")
        raise SystemExit(1 if diffs else 0)
    main(a.work.resolve())
