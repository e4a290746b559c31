"""helpers.grading.execute: every exercise is graded by the judge; one the grader cannot load (a broken or
changed course module) is a row that says it is the course's problem, never graded by the student's process."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from helpers.grading import execute
from helpers.grading.course import load_course
from helpers.grading.submissions import Submission

ROOT = Path(__file__).resolve().parents[2]


def _specs():
    nb = load_course(ROOT / "notebooks")["02_first_kernels"]
    return nb, [{"id": e.id, "module": e.module, "name": e.name} for e in nb.exercises]


def test_every_exercise_of_a_course_notebook_is_judged():
    _, specs = _specs()
    plan, problems = execute._judge_for(specs)
    assert problems == {} and [s["id"] for s in plan.specs] == [s["id"] for s in specs]
    assert set(plan.exercises) == {s["id"] for s in specs}


def test_an_exercise_the_grader_cannot_load_is_the_courses_problem_not_the_students(monkeypatch):
    _, specs = _specs()
    gone = {**specs[0], "name": "no_such_exercise"}
    broken = {**specs[1], "id": "nb99.x", "module": "nb99_missing"}
    plan, problems = execute._judge_for([gone, broken, *specs[2:]])
    assert [s["id"] for s in plan.specs] == [s["id"] for s in specs[2:]]
    assert problems[gone["id"]]["status"] == "not_graded" and problems[gone["id"]]["grader_problem"] is True
    assert "has no exercise no_such_exercise" in problems[gone["id"]]["message"]
    assert "helpers.problems.nb99_missing cannot be imported (ModuleNotFoundError" in problems["nb99.x"]["message"]
    assert all("a problem with the course, not with this notebook" in p["message"] for p in problems.values())


def test_a_submission_whose_exercise_cannot_be_loaded_names_the_grader_problem(tmp_path, monkeypatch):
    import dataclasses

    nb, _ = _specs()
    first = dataclasses.replace(nb.exercises[0], name="renamed_in_the_course")
    nb = dataclasses.replace(nb, exercises=[first, *nb.exercises[1:]])
    path = tmp_path / "alice.ipynb"
    path.write_text((ROOT / "solutions" / "02_first_kernels.ipynb").read_text())
    sub = Submission(student="alice", name="alice", path=path, notebook=nb.stem)
    seeds = {e.id: 1 for e in nb.exercises}
    record = execute.grade_submission(sub, nb, seeds, execute.Settings(timeout=600), tmp_path / "scratch")
    rows = {r["exercise"]: r for r in record["exercises"]}
    assert rows[first.id]["status"] == "not_graded" and "no exercise renamed_in_the_course" in rows[first.id]["message"]
    assert "a problem with the course" in record["grader_problem"]
    others = [r["status"] for e, r in rows.items() if e != first.id]
    assert others and set(others) == {"passed"}, json.dumps(record, default=str)[:2000]
    assert sys.modules.get("helpers.grading.snapshot_grader") is None


def test_the_grader_asks_its_children_for_the_small_sizes():
    cpu = execute.child_env(execute.Settings(mode="cpu"), Path("/tmp/w"))
    assert cpu["COURSE_SIZES"] == "small" and cpu["COURSE_MODE"] == "cpu"
    assert "COURSE_SIZES" not in execute.child_env(
        execute.Settings(mode="gpu"), Path("/tmp/w"), gpu="0"
    )  # a GPU runs the text's
