"""OUT/report.html (helpers/grading/class_report.py): what the page shows equals grades.csv and
totals.csv written from the same records, it names no student in its examples, it is one file
with nothing fetched from elsewhere, and it stays small at 300 students. The same page in a real
browser: tests/browser/test_class_report.py."""

import csv
import re
from collections import Counter
from html.parser import HTMLParser

import pytest

from helpers.grading import class_report, report
from helpers.grading.class_stats import STATUSES, TOP_CAUSES
from submission_sets import synthetic as syn

MAX_PAGE_300 = 400_000  # bytes at 300 students x 10 exercises (measured: about 150 KB)


class Page(HTMLParser):
    """The page's exercise rows, student rows, cause examples and any reference to another file."""

    def __init__(self, text: str):
        super().__init__()
        self.exercises, self.students, self.examples, self.fetches, self.stack = {}, {}, [], [], []
        self.row = self.cell = None
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        for ref in ("src", "href"):
            if ref in a and tag in ("script", "link", "img", "iframe", "object", "embed", "image", "use"):
                self.fetches.append(a[ref])
        if tag == "tr" and ("data-exercise" in a or "data-student" in a):
            self.row = {"id": a.get("data-exercise") or a.get("data-student"), "cells": [], "links": []}
            (self.exercises if "data-exercise" in a else self.students)[self.row["id"]] = self.row
        elif tag == "td" and self.row is not None:
            self.cell = {"attrs": a, "text": ""}
            self.row["cells"].append(self.cell)
        elif tag == "a" and self.row is not None:
            self.row["links"].append(a.get("href"))
        elif tag == "q":
            self.examples.append("")
        self.stack.append(tag)

    def handle_endtag(self, tag):
        if tag == "tr":
            self.row = None
        if tag == "td":
            self.cell = None
        if self.stack and self.stack[-1] == tag:
            self.stack.pop()

    def handle_data(self, data):
        if self.cell is not None and "svg" not in self.stack:
            self.cell["text"] += data
        if self.stack and self.stack[-1] == "q":
            self.examples[-1] += data


def _write(out, students):
    records = syn.make_records(students)
    report.write_tables(out, records, syn.max_points(), syn.MANIFEST)
    path = class_report.write(out, records, syn.max_points(), syn.MANIFEST, ["one note"])
    grades = list(csv.DictReader((out / "grades.csv").open()))
    totals = {r["student"]: r for r in csv.DictReader((out / "totals.csv").open())}
    return records, grades, totals, path.read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def class30(tmp_path_factory):
    return _write(tmp_path_factory.mktemp("report30"), 30)


def _cell(row, cls=None, status=None):
    for c in row["cells"]:
        if status is not None and c["attrs"].get("data-status") == status:
            return c["text"].strip()
        if cls is not None and cls in (c["attrs"].get("class") or "").split():
            return c["text"].strip()
    return None


def test_pass_rates_and_statuses_equal_grades_csv(class30):
    _, grades, _, text = class30
    page = Page(text)
    assert set(page.exercises) == {r["exercise"] for r in grades}
    by = Counter((r["exercise"], r["status"]) for r in grades)
    for ex, row in page.exercises.items():
        rows = sum(n for (x, _), n in by.items() if x == ex)
        passed = by[(ex, "passed")]
        assert _cell(row, "ratio") == f"{passed} / {rows}"
        assert _cell(row, "rate") == f"{100 * passed / rows:.1f} %"
        for status in STATUSES:
            shown = _cell(row, status=status)
            assert int(shown or 0) == by[(ex, status)], (ex, status)


def test_every_student_has_a_row_with_their_total_and_a_link_to_their_feedback(class30, tmp_path):
    _, _, totals, text = class30
    page = Page(text)
    assert set(page.students) == set(totals)
    for student, row in page.students.items():
        t = totals[student]
        assert row["cells"][2]["text"] == f"{float(t['points']):g} / {float(t['max_points']):g}"
        assert row["links"] == [f"feedback/{student}/feedback.md"]


def test_examples_name_no_student(class30):
    records, grades, _, text = class30
    page = Page(text)
    assert page.examples, "the page shows examples"
    assert any("<student>" in e for e in page.examples)  # the made-up class puts names into some messages
    words = {w.lower() for r in records for w in re.split(r"[\W_]+", f"{r['student']} {r['name']}") if len(w) > 1}
    for example in page.examples:
        found = {w for w in re.split(r"[\W_]+", example.lower()) if w in words}
        assert not found, (found, example)
    causes = text[text.index('<section id="causes">') : text.index('<section id="scores">')]
    for r in records:
        assert r["student"] not in causes and r["name"] not in causes


def test_the_page_is_one_file_that_fetches_nothing(class30):
    text = class30[3]
    page = Page(text)
    assert page.fetches == []  # no script, style sheet or picture from a file or a server
    assert "http://" not in text and "https://" not in text and "@import" not in text and "url(" not in text
    assert text.count("<svg") == len(page.exercises) + 1  # a bar per exercise, and the histogram
    assert "never-shown" not in text  # the salt stays in run.json


def test_a_hostile_name_is_text_not_markup(tmp_path):
    records = syn.make_records(3)
    for r in records:
        if r["student"] == records[0]["student"]:
            r["name"] = "<script>alert(1)</script>"
    records[0]["review"] = ["cell 2 <img src=x onerror=alert(1)>"]
    path = class_report.write(tmp_path, records, syn.max_points(), syn.MANIFEST)
    text = path.read_text()
    assert "<script>alert" not in text and "<img src=x" not in text
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in text


def test_300_students_stay_one_small_page(tmp_path):
    _, _, totals, text = _write(tmp_path, 300)
    size = len(text.encode())
    assert size < MAX_PAGE_300, size
    page = Page(text)
    assert len(page.students) == 300 == len(totals)
    assert len(page.examples) <= TOP_CAUSES * len(page.exercises)
    # summaries first: the class's numbers and the exercises come before the 300 student rows
    assert text.index('id="summary"') < text.index('id="per-exercise"') < text.index('id="per-student"')
    first = _cell(next(iter(page.exercises.values())), "ratio")
    assert first.endswith(" / 300")


def test_the_legend_and_bar_name_each_status_with_its_count():
    bar = class_report.status_bar({"passed": 3, "failed": 1, "error": 0})
    assert bar.count("<rect") == 2 and "<title>passed: 3</title>" in bar and "<title>failed: 1</title>" in bar
    widths = [float(w) for w in re.findall(r'<rect x="[\d.]+" y="0" width="([\d.]+)"', bar)]
    assert widths == [165.0, 55.0]
    assert class_report.histogram((0, 2, 1)).count("<rect") == 3


def test_a_long_list_of_flags_starts_folded(class30, tmp_path):
    assert re.search(r"<details open><summary>\d+ flag\(s\) on \d+ submission", class30[3])
    _, _, _, text = _write(tmp_path, 300)
    many = re.search(r"<details><summary>(\d+) flag\(s\) on (\d+) submission", text)
    assert many and int(many.group(1)) > class_report.OPEN_FLAGS
