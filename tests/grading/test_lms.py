"""Gradebook files for Canvas and Moodle (helpers/grading/lms.py), against the formats they import:
the header exactly as each LMS documents it, one row per student, numbers as plain decimals, and
points equal to grades.csv written from the same records."""

import csv
import io
import re
from collections import defaultdict

import pytest

from helpers.grading import lms, report
from helpers.grading.roster import Roster
from submission_sets import synthetic as syn

# Canvas: the first five columns of its gradebook export and import, then one per assignment,
# and the "Points Possible" row its export writes second. Moodle: the user columns of its own
# export (and of its import fixtures), then one per grade item.
CANVAS = ["Student", "ID", "SIS User ID", "SIS Login ID", "Section"]
MOODLE = ["First name", "Last name", "ID number", "Email address"]
PLAIN_NUMBER = re.compile(r"^\d+(\.\d{1,4})?$")


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    out = tmp_path_factory.mktemp("lms")
    records = syn.make_records(40)
    report.write_tables(out, records, syn.max_points(), syn.MANIFEST)
    grades = list(csv.DictReader((out / "grades.csv").open()))
    totals = [r["student"] for r in csv.DictReader((out / "totals.csv").open())]
    return out, records, grades, totals


def _read(path):
    text = path.read_bytes().decode("utf-8")
    assert "\r\n" in text and "\n" not in text.replace("\r\n", "")  # RFC 4180 line ends
    return list(csv.reader(io.StringIO(text)))


def _sums(grades, per):
    sums = defaultdict(float)
    for r in grades:
        sums[(r["student"], r["notebook"] if per == "notebook" else r["exercise"])] += float(r["points"])
    return sums


@pytest.mark.parametrize("per", lms.PER)
def test_canvas_file_has_canvas_columns_a_points_row_and_one_row_per_student(graded, per):
    out, records, grades, totals = graded
    files = lms.write(out, records, syn.max_points(), per)
    rows = _read(files.canvas)
    titles = list(syn.NOTEBOOKS) if per == "notebook" else [e for nb in syn.NOTEBOOKS.values() for e in nb]
    assert rows[0] == CANVAS + titles
    assert rows[1][:5] == ["    Points Possible", "", "", "", ""]
    maxima = defaultdict(float)
    for r in grades:
        if r["student"] == totals[0]:
            maxima[r["notebook"] if per == "notebook" else r["exercise"]] += float(r["max_points"])
    assert [float(x) for x in rows[1][5:]] == [maxima[t] for t in titles]
    body = rows[2:]
    assert len(body) == len(totals) and all(len(r) == len(rows[0]) for r in body)
    names = {r["student"]: r["name"] for r in records}
    assert [r[0] for r in body] == [names[s] for s in totals]  # one row per student, in totals.csv's order
    sums = _sums(grades, per)
    for student, row in zip(totals, body):
        assert all(PLAIN_NUMBER.match(x) for x in row[5:]), row
        assert [float(x) for x in row[5:]] == [sums[(student, t)] for t in titles]


@pytest.mark.parametrize("per", lms.PER)
def test_moodle_file_has_moodle_columns_and_one_row_per_student(graded, per):
    out, records, grades, totals = graded
    rows = _read(lms.write(out, records, syn.max_points(), per).moodle)
    titles = list(syn.NOTEBOOKS) if per == "notebook" else [e for nb in syn.NOTEBOOKS.values() for e in nb]
    assert rows[0] == MOODLE + titles
    body = rows[1:]
    assert len(body) == len(totals)
    names = {r["student"]: r["name"] for r in records}
    sums = _sums(grades, per)
    for student, row in zip(totals, body):
        assert " ".join(row[:2]) == names[student]  # "Alice Smith" -> Alice | Smith
        assert all(PLAIN_NUMBER.match(x) for x in row[4:]), row
        assert [float(x) for x in row[4:]] == [sums[(student, t)] for t in titles]


def test_the_roster_fills_the_lms_identities(graded, tmp_path):
    out, records, _, totals = graded
    rows = [
        {"submission": s, "email": f"{s.lower()}@uni.example", "id_number": f"9{i:05d}", "canvas_id": str(100 + i)}
        for i, s in enumerate(totals)
    ]
    roster = Roster(tmp_path / "roster.csv", tuple(rows))
    files = lms.write(out, records, syn.max_points(), "notebook", roster)
    canvas, moodle = _read(files.canvas)[2:], _read(files.moodle)[1:]
    assert [r[1] for r in canvas] == [str(100 + i) for i in range(len(totals))]
    assert [(r[2], r[3]) for r in moodle] == [(f"9{i:05d}", f"{s.lower()}@uni.example") for i, s in enumerate(totals)]
    assert files.notes == ()  # everyone matched, everyone has ids


def test_students_without_any_lms_identity_are_named_in_the_notes(graded):
    out, records, _, totals = graded
    notes = lms.write(out, records, syn.max_points()).notes
    assert len(notes) == 1 and f"{len(totals)} student(s) have no Canvas ID" in notes[0] and "--roster" in notes[0]


def test_a_canvas_download_name_gives_the_canvas_id_and_an_email_name_the_moodle_identity(tmp_path):
    records = syn.make_records(2)
    who = {records[0]["student"]: "smithalice_LATE_12345_67890", records[-1]["student"]: "bob.berg@uni.example"}
    for r in records:
        r["name"] = who[r["student"]]
    files = lms.write(tmp_path, records, syn.max_points())
    canvas, moodle = _read(files.canvas)[2:], _read(files.moodle)[1:]
    assert canvas[0][:2] == ["smithalice", "12345"]
    assert moodle[1][3] == "bob.berg@uni.example"


def test_numbers_are_plain_decimals():
    assert [lms.number(x) for x in (2.0, 0.5, 1.25, 0.0, 1e-5, 1234567.0, 1 / 3)] == [
        "2",
        "0.5",
        "1.25",
        "0",
        "0",
        "1234567",
        "0.3333",
    ]


def test_a_name_a_spreadsheet_would_run_is_text(tmp_path):
    records = syn.make_records(1)
    for r in records:
        r["name"] = '=HYPERLINK("http://x")'
    files = lms.write(tmp_path, records, syn.max_points())
    assert _read(files.canvas)[2][0] == '\'=HYPERLINK("http://x")'
    assert all(not cell.startswith("=") for cell in _read(files.moodle)[1])


def test_columns_per_notebook_or_exercise_only():
    with pytest.raises(ValueError):
        lms.gradebook(syn.make_records(1), syn.max_points(), "student")
