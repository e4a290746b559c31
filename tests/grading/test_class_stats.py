"""The class report's numbers (helpers/grading/class_stats.py), checked against grades.csv and
totals.csv written from the same records by the grader's own writer, on a made-up class."""

import csv
from collections import Counter

import pytest

from helpers.grading import report
from helpers.grading.class_stats import BANDS, CAUSE_STATUSES, TOP_CAUSES, class_stats, flags_of
from submission_sets import synthetic as syn


@pytest.fixture(scope="module")
def written(tmp_path_factory):
    out = tmp_path_factory.mktemp("stats")
    records = syn.make_records(60)
    report.write_tables(out, records, syn.max_points(), syn.MANIFEST)
    grades = list(csv.DictReader((out / "grades.csv").open()))
    totals = {r["student"]: r for r in csv.DictReader((out / "totals.csv").open())}
    return records, grades, totals, class_stats(records, syn.max_points(), syn.MANIFEST)


def test_per_exercise_statuses_equal_grades_csv(written):
    _, grades, _, stats = written
    expected = Counter((r["exercise"], r["status"]) for r in grades)
    assert {e.exercise for e in stats.exercises} == {r["exercise"] for r in grades}
    for e in stats.exercises:
        assert {s: n for s, n in e.counts.items() if n} == {s: n for (x, s), n in expected.items() if x == e.exercise}
        rows = [r for r in grades if r["exercise"] == e.exercise]
        assert e.total == len(rows) and e.passed == sum(r["status"] == "passed" for r in rows)
        assert e.pass_rate == pytest.approx(e.passed / len(rows))
        assert e.max_points == float(rows[0]["max_points"])


def test_exercises_come_in_course_order(written):
    assert [e.exercise for e in written[3].exercises] == [e for nb in syn.NOTEBOOKS.values() for e in nb]


def test_causes_count_every_failing_row_once(written):
    _, grades, _, stats = written
    for e in stats.exercises:
        failing = sum(r["exercise"] == e.exercise and r["status"] in CAUSE_STATUSES for r in grades)
        assert sum(c.count for c in e.causes) + e.other_causes == failing
        assert len(e.causes) <= TOP_CAUSES
        assert [c.count for c in e.causes] == sorted((c.count for c in e.causes), reverse=True)
    saxpy = next(e for e in stats.exercises if e.exercise == "nb02.saxpy")
    race = next(c for c in saxpy.causes if c.key == "tracer:race")
    assert race.example.startswith("the CPU tracer found a race.") and race.statuses == ("failed",)
    assert race.count == sum(r["exercise"] == "nb02.saxpy" and "found a race" in r["message"] for r in grades)


def test_student_totals_equal_totals_csv(written):
    _, _, totals, stats = written
    assert [s.student for s in stats.students] == sorted(totals)
    for s in stats.students:
        assert s.points == float(totals[s.student]["points"])
        assert s.max_points == float(totals[s.student]["max_points"])
        assert s.feedback == f"feedback/{s.student}/feedback.md"
    assert sum(stats.histogram) == len(stats.students) and len(stats.histogram) == BANDS


def test_flags_name_what_a_human_should_look_at(written):
    records, _, _, stats = written
    kinds = Counter(f.kind for f in stats.flags)
    assert kinds["missing"] == sum(r["outcome"] == "missing" for r in records)
    assert kinds["crashed"] == sum(r["outcome"] == "crashed" for r in records) > 0
    assert kinds["review"] == sum(len(r["review"]) for r in records) > 0
    assert kinds["skipped_cell"] == kinds["crashed"]
    crashed = {f.student for f in stats.flags if f.kind == "crashed"}
    assert all("crashed" in s.flags for s in stats.students if s.student in crashed)


def test_flags_of_one_record():
    rec = {
        "student": "s1",
        "notebook": "02_x",
        "outcome": "timeout",
        "problem": "the notebook ran longer than 900 s",
        "skipped_cells": [],
        "tamper": {"cell": 6, "what": ["np.allclose replaced"]},
        "review": ["cell 4 uses ctypes (`ctypes`)"],
        "gpu": "1",
        "device": {"visible": "0,1", "gpu": True, "count": 2},
    }
    got = [(f.kind, f.what) for f in flags_of(rec)]
    assert got == [
        ("timeout", "the notebook ran longer than 900 s"),
        ("tampering", "np.allclose replaced"),
        ("review", "cell 4 uses ctypes (`ctypes`)"),
        ("gpu", "the child's CUDA_VISIBLE_DEVICES was '0,1', not '1'"),
        ("gpu", "the child saw 2 GPUs instead of one"),
    ]
    assert flags_of({**rec, "outcome": "completed", "tamper": None, "review": [], "gpu": None}) == []


def test_run_facts():
    recs = [
        {"student": "a", "notebook": "n", "outcome": "completed", "runs": [{}], "seconds": 1.0, "exercises": []},
        {"student": "b", "notebook": "n", "outcome": "completed", "runs": [{}], "seconds": 5.0, "exercises": []},
        {"student": "c", "notebook": "n", "outcome": "completed", "runs": [{}], "seconds": 3.0, "exercises": []},
        {"student": "d", "notebook": "n", "outcome": "missing", "runs": [], "seconds": 0.0, "exercises": []},
    ]
    recs[0].update(gpu="0", device={"name": "Fake GPU", "visible": "0", "gpu": True, "count": 1})
    recs[1].update(gpu="1")
    facts = class_stats(recs, {}, {"mode": "gpu", "jobs": 2, "started": "2026-11-27 09:00:00"}).facts
    assert (facts.submissions, facts.students, facts.graded) == (4, 4, 3)
    assert (facts.median_seconds, facts.mean_seconds, facts.max_seconds, facts.slowest) == (3.0, 3.0, 5.0, "b/n")
    assert [(g.gpu, g.label, g.submissions) for g in facts.gpus] == [("0", "GPU 0 (Fake GPU)", 1), ("1", "GPU 1", 1)]
    assert facts.mode == "gpu" and facts.jobs == 2
    two_nodes = [dict(r, gpu="0", device={"host": h, "name": "H200"}) for r, h in zip(recs[:2], ("n1", "n2"))]
    assert [g.label for g in class_stats(two_nodes, {}, {"mode": "gpu"}).facts.gpus] == [
        "GPU 0 on n1 (H200)",
        "GPU 0 on n2 (H200)",
    ]
    none_ran = class_stats(recs[3:], {}, {}).facts
    assert none_ran.median_seconds is None and none_ran.slowest == ""
