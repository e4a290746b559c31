#!/usr/bin/env python3
"""Prove the grader's per-GPU workers on a machine with two or more GPUs (issue 18).

Builds a class of submissions from the course's own material — notebook 02 as handed out and as
solved, and the grader test fixtures' small notebook (tests/submission_sets/fixtures.py) answered correctly,
wrongly, with a cell that crashes the process and with a kernel that never ends — then runs

    python -m helpers.grade SUBS --out OUT --course COURSE -j N --mode gpu

with N = the GPUs visible, prints which GPU graded which submission (the GPU the grader gave it and
the device the child itself saw: name, UUID) and checks:

- the grader exited 0 and every submission has the grades it should have;
- every GPU was used, each child saw exactly one GPU, the one it was given, and different
  workers' GPUs are different physical devices (different UUIDs);
- while the hanging kernel held its GPU, another GPU finished other submissions;
- the summary names the GPU of every submission.

Exit status 0 when every check holds, 1 when one fails (each failure is one line), 2 for fewer GPUs
than --min-gpus. With --record, the result goes into docs/multi-gpu-record.md (its "grading" section).

    COURSE_MODE=gpu python tools/verify_multigpu_grading.py [--record] [--min-gpus 2]
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

RECORD = ROOT / "docs" / "multi-gpu-record.md"
REAL = "02_first_kernels"


def build(tmp: Path) -> tuple[Path, Path, dict]:
    """(course folder, submissions folder, {student: expected {exercise: status} or None for 'all passed'})."""
    from submission_sets import fixtures as fx

    course = fx.make_course(tmp / "course")
    shutil.copy(ROOT / "notebooks" / f"{REAL}.ipynb", course / f"{REAL}.ipynb")
    subs, expected = tmp / "subs", {}
    table = fx.submissions()

    def add(student, stem, text, want):
        (subs / student).mkdir(parents=True, exist_ok=True)
        (subs / student / f"{stem}.ipynb").write_text(text)
        expected[student] = want

    add("s1_hangs", fx.STEM, table["kernel_hangs"][0], {**fx.ALL_PASSED, "nb02.vector_add": "error"})
    add("s2_crashes", fx.STEM, table["os_exit"][0], fx.ALL_PASSED)
    add("s3_wrong", fx.STEM, table["wrong_index"][0], table["wrong_index"][1])
    add("s4_perfect", fx.STEM, table["perfect"][0], fx.ALL_PASSED)
    add("s5_untouched", fx.STEM, table["untouched"][0], table["untouched"][1])
    add("s6_solved", REAL, (ROOT / "solutions" / f"{REAL}.ipynb").read_text(), "passed")
    add("s7_handed_out", REAL, (ROOT / "notebooks" / f"{REAL}.ipynb").read_text(), "not_attempted")
    return course, subs, expected


def read_records(folder: Path) -> dict:
    """student -> the record of the notebook they handed in. The grader also writes a "missing" record
    for every other course notebook (no child ran for it, so it names no GPU): those are left out."""
    records = {}
    for p in sorted(folder.glob("*.json")):
        rec = json.loads(p.read_text())
        if rec.get("outcome") != "missing":
            records[rec["student"]] = rec
    return records


def check(records: dict, expected: dict, stdout: str, gpus: list) -> list[str]:
    """Every failed check, one sentence each; [] when the run proves the placement."""
    fails = []
    if set(records) != set(expected):
        fails.append(f"graded {sorted(records)}, expected {sorted(expected)}")
    for student, want in expected.items():
        rec = records.get(student)
        if rec is None:
            continue
        got = {e["exercise"]: e["status"] for e in rec["exercises"]}
        if isinstance(want, str):
            want = dict.fromkeys(got or ["any exercise"], want)
        if got != want:
            fails.append(f"{student}: grades {got}, expected {want}")
        dev = rec.get("device") or {}
        if rec.get("gpu") is None:
            fails.append(f"{student}: the record names no GPU")
        elif dev.get("visible") != rec["gpu"]:
            fails.append(f"{student}: the child saw CUDA_VISIBLE_DEVICES={dev.get('visible')!r}, not {rec['gpu']!r}")
        if dev.get("count") != 1:
            fails.append(f"{student}: the child saw {dev.get('count')} GPUs, not one")
        if f"{student}/" not in stdout.split("Graded on", 1)[-1]:
            fails.append(f"{student}: the summary's GPU section does not name it")
    used = {rec.get("gpu") for rec in records.values()}
    if used != set(gpus):
        fails.append(f"GPUs used: {sorted(map(str, used))}; visible: {gpus}")
    uuids = {}
    for rec in records.values():
        uuids.setdefault(rec.get("gpu"), set()).add((rec.get("device") or {}).get("uuid"))
    if any(len(u) != 1 for u in uuids.values()):
        fails.append(f"one worker's children saw different devices: {uuids}")
    elif len({next(iter(u)) for u in uuids.values()}) != len(uuids):
        fails.append(f"different workers saw the same physical GPU: {uuids}")
    hang = records.get("s1_hangs")
    if hang and len(gpus) > 1:
        others = [
            r
            for r in records.values()
            if r.get("gpu") != hang.get("gpu") and hang["started_at"] < r.get("finished_at", 0) < hang["finished_at"]
        ]
        if not others:
            fails.append("no other GPU finished a submission while the hanging kernel held its GPU")
    return fails


def table(records: dict) -> list[str]:
    rows = ["| submission | notebook | GPU given | device the child saw | outcome | grades | seconds |"]
    rows.append("|---|---|---|---|---|---|---:|")
    for student, rec in sorted(records.items(), key=lambda kv: kv[1].get("started_at", 0)):
        dev = rec.get("device") or {}
        seen = f"{dev.get('name')} {dev.get('uuid') or ''}".strip() + f" (CUDA_VISIBLE_DEVICES={dev.get('visible')})"
        counts = {}
        for e in rec["exercises"]:
            counts[e["status"]] = counts.get(e["status"], 0) + 1
        grades = ", ".join(f"{n} {s}" for s, n in sorted(counts.items()))
        rows.append(
            f"| {student} | {rec['notebook']} | {rec.get('gpu')} | {seen} | {rec['outcome']} | {grades} | "
            f"{rec.get('seconds', 0):.1f} |"
        )
    return rows


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--record", action="store_true", help=f"write the result into {RECORD.relative_to(ROOT)}")
    ap.add_argument("--min-gpus", type=int, default=2, help="refuse to run with fewer GPUs (default 2)")
    ap.add_argument("--keep", action="store_true", help="keep the submissions and grades folder")
    args = ap.parse_args(argv)

    import helpers
    from helpers.grading.devices import visible_devices

    if not helpers.on_gpu():
        print(f"verify_multigpu_grading needs GPUs ({helpers.MODE.reason}).", file=sys.stderr)
        return 2
    gpus = visible_devices(os.environ.get("CUDA_VISIBLE_DEVICES"), helpers.MODE.info.count)
    if len(gpus) < args.min_gpus:
        print(f"verify_multigpu_grading: {len(gpus)} GPU(s) visible, --min-gpus is {args.min_gpus}.", file=sys.stderr)
        return 2
    tmp = Path(tempfile.mkdtemp(prefix="verify-multigpu-"))
    course, subs, expected = build(tmp)
    out = tmp / "grades"
    cmd = [sys.executable, "-m", "helpers.grade", str(subs), "--out", str(out), "--course", str(course)]
    cmd += ["-j", str(len(gpus)), "--mode", "gpu", "--salt", "verify-multigpu"]
    cmd += ["--cell-timeout", "30", "--grade-timeout", "20", "--timeout", "600"]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH")) if p)}
    print("$", " ".join(cmd[1:]), flush=True)
    run = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=1800)
    print(run.stdout)
    records = read_records(out / "records")
    fails = ([] if run.returncode == 0 else [f"the grader exited {run.returncode}: {run.stderr[-500:]}"]) + check(
        records, expected, run.stdout, gpus
    )
    rows = table(records)
    print("\n".join(rows))
    print("\n".join(f"FAILED: {f}" for f in fails) or f"OK: {len(records)} submissions on {len(gpus)} GPUs.")
    if args.record:
        from helpers._files import replace_section

        info = helpers.MODE.info
        text = [
            "## The grader on several GPUs (`tools/verify_multigpu_grading.py`)",
            "",
            f"{datetime.date.today().isoformat()}: {len(gpus)} GPUs visible ({info.name}), driver "
            f"{info.driver_version or '?'}, CUDA {info.driver_cuda}; `python -m helpers.grade … -j {len(gpus)} "
            "--mode gpu` on the submissions below, in the order they started.",
            "",
            *rows,
            "",
            "Result: "
            + (
                "every check held — each GPU was used, each child saw exactly its one GPU (a different UUID per "
                "worker), the grades are as expected, and another GPU finished submissions while the hanging "
                "kernel held its GPU."
                if not fails
                else "FAILED: " + "; ".join(fails)
            ),
        ]
        replace_section(RECORD, "grading", "\n".join(text), title="# Several GPUs: measured and verified")
        print(f"written to {RECORD}")
    if args.keep:
        print(f"kept {tmp}")
    else:
        shutil.rmtree(tmp, ignore_errors=True)
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
