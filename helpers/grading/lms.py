"""Gradebook files an LMS imports, written beside grades.csv: OUT/canvas.csv and OUT/moodle.csv.

One row per graded student, and one grade column per course notebook (``--lms-columns
notebook``, the default: the points of its exercises added up) or per exercise
(``--lms-columns exercise``). Points are the grader's (full points for ``passed``, none
otherwise, after ``--points``), written as plain decimals ("2", "0.5"): no thousands separator,
no exponent, a point for the decimal mark.

- **Canvas** (Grades › Import): the columns of Canvas's own gradebook export, ``Student, ID,
  SIS User ID, SIS Login ID, Section``, then one column per assignment, and a second row
  ``    Points Possible`` with each column's maximum, as Canvas writes it. Canvas finds the
  student by ``ID`` (its user ID), else the SIS ids; a column whose title names no assignment
  becomes a new one. Rows with none of those ids are listed on the import page to match by hand.
- **Moodle** (Grades › Import › CSV file): ``First name, Last name, ID number, Email address``,
  then one column per grade item. On the import page choose "Map from" ``Email address`` (or
  ``ID number``) and the same under "Map to", and a grade item for each column.

The identities come from ``roster`` (the handed-in names, or ``--roster``). Text that a
spreadsheet would run as a formula (a name starting with ``=``, ``+``, ``-`` or ``@``) is written
with a leading ``'``.
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass
from pathlib import Path

from .._files import atomic_write
from .report import scored
from .roster import Identity, Roster, match

CANVAS_FILE, MOODLE_FILE = "canvas.csv", "moodle.csv"
CANVAS_HEADER = ("Student", "ID", "SIS User ID", "SIS Login ID", "Section")
CANVAS_POINTS_ROW = "    Points Possible"
MOODLE_HEADER = ("First name", "Last name", "ID number", "Email address")
PER = ("notebook", "exercise")


@dataclass(frozen=True)
class Column:
    title: str
    max_points: float
    exercises: tuple[str, ...]


@dataclass(frozen=True)
class Gradebook:
    columns: tuple[Column, ...]
    points: dict  # grader id -> (points per column, in column order)


@dataclass(frozen=True)
class LmsFiles:
    canvas: Path
    moodle: Path
    notes: tuple[str, ...]  # what the roster matching found, for the summary and the report


def number(x: float) -> str:
    """Points as both LMSs read them: '2', '0.5', '1.25' (at most 4 decimals, never '1e-05')."""
    s = f"{float(x):.4f}".rstrip("0").rstrip(".")
    return "0" if s in ("", "-0") else s


def _text(s) -> str:
    s = str(s or "")
    return "'" + s if s[:1] in ("=", "+", "-", "@", "\t", "\r") else s


def gradebook(records: list, max_points: dict, per: str = "notebook") -> Gradebook:
    """The columns (course order) and each student's points, from the rows grades.csv holds."""
    if per not in PER:
        raise ValueError(f"per must be one of {PER}, not {per!r}")
    rows = scored(records, max_points)
    members: dict = {}  # column title -> exercises, in course order
    for rec in sorted(records, key=lambda r: r["notebook"]):
        for e in rec["exercises"]:
            title = rec["notebook"] if per == "notebook" else e["exercise"]
            if e["exercise"] not in members.setdefault(title, []):
                members[title].append(e["exercise"])
    columns = tuple(
        Column(title, sum(float(max_points.get(x, 1.0)) for x in exs), tuple(exs)) for title, exs in members.items()
    )
    where = {x: i for i, c in enumerate(columns) for x in c.exercises}
    points: dict = {}
    for r in rows:
        mine = points.setdefault(r["student"], [0.0] * len(columns))
        mine[where[r["exercise"]]] += r["points"]
    return Gradebook(columns, {s: tuple(p) for s, p in sorted(points.items())})


def _csv(rows) -> str:
    buf = io.StringIO()
    csv.writer(buf, lineterminator="\r\n").writerows(rows)
    return buf.getvalue()


def _split(name: str) -> tuple[str, str]:
    """(first, last) of a name: 'Smith, Alice' and 'Alice Smith' both give ('Alice', 'Smith')."""
    name = " ".join(name.split())
    if "," in name:
        last, _, first = name.partition(",")
        return first.strip(), last.strip()
    first, _, last = name.rpartition(" ")
    return (first, last) if first else (last, "")


def canvas_csv(book: Gradebook, people: dict) -> str:
    head = [*CANVAS_HEADER, *(c.title for c in book.columns)]
    rows = [head, [CANVAS_POINTS_ROW, "", "", "", "", *(number(c.max_points) for c in book.columns)]]
    for student, pts in book.points.items():
        p: Identity = people[student]
        shown = p.name or (f"{p.last}, {p.first}" if p.last else p.first) or student
        ids = (p.canvas_id, p.sis_user_id, p.sis_login_id, p.section)
        rows.append([_text(shown), *map(_text, ids), *map(number, pts)])
    return _csv(rows)


def moodle_csv(book: Gradebook, people: dict) -> str:
    rows = [[*MOODLE_HEADER, *(c.title for c in book.columns)]]
    for student, pts in book.points.items():
        p: Identity = people[student]
        first, last = (p.first, p.last) if (p.first or p.last) else _split(p.name or student)
        rows.append([*map(_text, (first, last, p.id_number, p.email)), *map(number, pts)])
    return _csv(rows)


def write(out: Path, records: list, max_points: dict, per: str = "notebook", roster: Roster | None = None) -> LmsFiles:
    """Write OUT/canvas.csv and OUT/moodle.csv; the notes say whom the roster did not place."""
    book = gradebook(records, max_points, per)
    names = {r["student"]: r.get("name") or r["student"] for r in records}
    found = match(names, roster)
    canvas, moodle = out / CANVAS_FILE, out / MOODLE_FILE
    atomic_write(canvas, canvas_csv(book, found.identities))
    atomic_write(moodle, moodle_csv(book, found.identities))
    people = found.identities.values()
    notes = list(found.notes)
    no_canvas = sum(not (p.canvas_id or p.sis_user_id or p.sis_login_id) for p in people)
    no_moodle = sum(not (p.email or p.id_number) for p in people)
    if no_canvas or no_moodle:
        notes.append(
            f"LMS files: {no_canvas} student(s) have no Canvas ID or SIS id in {CANVAS_FILE} (Canvas asks you to match "
            f"them by hand), {no_moodle} no e-mail address or ID number in {MOODLE_FILE} (Moodle cannot place them); "
            "--roster FILE gives them (docs/grading.md)"
        )
    return LmsFiles(canvas, moodle, tuple(notes))
