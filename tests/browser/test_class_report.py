"""The class report (OUT/report.html, helpers/grading/class_report.py) as an instructor opens it:
straight from disk in Chromium, no server. It renders without a script error, the pass rates and
statuses it shows equal grades.csv beside it, its student table filters and sorts, and at 300
students it is still one page that does all that. The large classes are made up
(tests/submission_sets/synthetic.py) and written by the grader's own writers; one small class is
graded for real by `make grade`."""

from __future__ import annotations

import csv
import os
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
from playwright.sync_api import expect

from helpers.grading import class_report, report
from submission_sets import fixtures as fx
from submission_sets import synthetic as syn

REPO = Path(__file__).resolve().parents[2]

ROWS_JS = """() => Array.from(document.querySelectorAll('#exercises tbody tr')).map(tr => ({
  exercise: tr.dataset.exercise,
  ratio: tr.querySelector('.ratio').textContent.trim(),
  rate: tr.querySelector('.rate').textContent.trim(),
  counts: Object.fromEntries(Array.from(tr.querySelectorAll('td[data-status]')).map(
    td => [td.dataset.status, +td.textContent])),
}))"""
STUDENT_ROWS = "Array.from(document.querySelectorAll('#students tbody tr'))"
VISIBLE_STUDENTS_JS = f"() => {STUDENT_ROWS}.filter(r => !r.hidden).map(r => r.dataset.student)"
PERCENTS_JS = f"() => {STUDENT_ROWS}.map(r => +r.cells[3].dataset.sort)"


def _class(folder: Path, students: int) -> dict:
    records = syn.make_records(students)
    report.write_tables(folder, records, syn.max_points(), syn.MANIFEST)
    report.write_feedback(folder, records, syn.max_points())
    path = class_report.write(folder, records, syn.max_points(), syn.MANIFEST, ["a note from the grader"])
    grades = list(csv.DictReader((folder / "grades.csv").open()))
    return {"path": path, "grades": grades, "records": records}


@pytest.fixture(scope="module")
def class30(tmp_path_factory):
    return _class(tmp_path_factory.mktemp("report30"), 30)


def _open(page, graded):
    page.goto(graded["path"].as_uri())
    expect(page.locator("h1")).to_have_text("Class report")
    return page


def _assert_rates_equal_csv(page, grades):
    counts = Counter((r["exercise"], r["status"]) for r in grades)
    rows = {r["exercise"]: sum(n for (x, _), n in counts.items() if x == r["exercise"]) for r in grades}
    shown = page.evaluate(ROWS_JS)
    assert [r["exercise"] for r in shown] == list(dict.fromkeys(r["exercise"] for r in grades))
    for r in shown:
        passed, total = counts[(r["exercise"], "passed")], rows[r["exercise"]]
        assert r["ratio"] == f"{passed} / {total}", r
        assert r["rate"] == f"{100 * passed / total:.1f} %", r
        assert r["counts"] == {s: counts[(r["exercise"], s)] for s in r["counts"]}
        assert sum(r["counts"].values()) == total  # every status the exercise has is shown


def test_the_report_renders_from_disk_and_its_pass_rates_equal_grades_csv(page, class30, artifacts):
    _open(page, class30)
    _assert_rates_equal_csv(page, class30["grades"])
    bar = page.locator("#exercises svg.bar").first.bounding_box()
    assert bar and bar["width"] == 220 and bar["height"] == 14  # the inline SVG bars are drawn
    assert page.locator("#histogram rect").count() == 10
    expect(page.locator("#causes details").first).to_be_visible()
    page.screenshot(path=str(artifacts / "class-report.png"), full_page=True)
    assert page.console_errors == []


def test_each_student_links_to_their_feedback_and_the_table_filters_and_sorts(page, class30):
    _open(page, class30)
    students = sorted({r["student"] for r in class30["grades"]})
    links = page.locator("#students tbody tr td:first-child a")
    assert links.count() == len(students)
    href = links.first.get_attribute("href")
    assert (class30["path"].parent / href).is_file()  # the feedback file the link points at is there
    page.fill("#filter", students[3])
    assert page.evaluate(VISIBLE_STUDENTS_JS) == [students[3]]
    expect(page.locator("#shown")).to_have_text("1")
    page.fill("#filter", "")
    expect(page.locator("#shown")).to_have_text(str(len(students)))
    header = page.locator("#students thead th", has_text="%")
    header.click()
    first = page.evaluate(PERCENTS_JS)
    assert first == sorted(first)
    header.click()
    again = page.evaluate(PERCENTS_JS)
    assert again == sorted(first, reverse=True)
    assert page.console_errors == []


def test_300_students_one_page_that_still_filters(page, tmp_path, artifacts):
    graded = _class(tmp_path, 300)
    _open(page, graded)
    _assert_rates_equal_csv(page, graded["grades"])
    assert page.locator("#students tbody tr").count() == 300
    crashed = {r["student"] for r in graded["records"] if r["outcome"] == "crashed"}
    page.fill("#filter", "crashed")  # the flags column: the students a human should look at
    visible = page.evaluate(VISIBLE_STUDENTS_JS)
    assert set(visible) == crashed and crashed
    page.screenshot(path=str(artifacts / "class-report-300.png"))
    assert page.console_errors == []


def test_make_grade_writes_a_report_that_equals_its_grades_csv(page, tmp_path, artifacts):
    """A real run: `make grade` on a few fixture submissions (a correct one, two wrong ones, a
    damaged file, an empty folder), CPU mode; its report beside its CSV and LMS files."""
    make = shutil.which("make")
    if make is None:
        pytest.fail("`make` is not installed")
    course = fx.make_course(tmp_path / "course")
    fx.write_submissions(tmp_path / "subs", ["perfect", "wrong_index", "racy", "invalid_json"])
    (tmp_path / "subs" / "nobody").mkdir()
    out = tmp_path / "out"
    env = {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MFLAGS")}
    env["COURSE_MODE"] = "cpu"
    args = f"--course {course} -j 2 --salt browser --cell-timeout 60 --timeout 300"
    run = subprocess.run(
        [make, "--no-print-directory", "grade", "COURSE_ENV=current", f"PYTHON={sys.executable}"]
        + [f"SUBMISSIONS={tmp_path / 'subs'}", f"OUT={out}", f"GRADE_ARGS={args}"],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
    )
    assert run.returncode == 0, (run.stdout[-2000:], run.stderr[-2000:])
    assert (out / "canvas.csv").is_file() and (out / "moodle.csv").is_file()
    grades = list(csv.DictReader((out / "grades.csv").open()))
    assert len({r["student"] for r in grades}) == 5
    _open(page, {"path": out / "report.html"})
    _assert_rates_equal_csv(page, grades)
    assert page.locator("#students tbody tr").count() == 5
    expect(page.locator("#flags")).to_contain_text("invalid_json")
    page.screenshot(path=str(artifacts / "class-report-make-grade.png"), full_page=True)
    assert page.console_errors == []
