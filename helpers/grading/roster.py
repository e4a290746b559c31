"""Who each graded student is in the LMS: the identity the gradebook exports (``lms``) write.

The grader knows a student by the name their folder, zip or file was handed in under. That is
enough for an LMS only when it carries the LMS's own identity:

- Canvas's "Download Submissions" names each file ``smithalice_12345_67890_<file>`` (``_LATE_``
  after the name when late): 12345 is the student's Canvas user ID, Canvas's ``ID`` column;
- a folder or file named after an e-mail address is Moodle's ``Email address``.

Anything else needs a roster (``--roster FILE``): a CSV with a header row, one row per student,
matched to a graded student by the grader's id or the name as handed in (column ``submission``),
else by any identifier the handed-in name equals (e-mail, ID number, username, Canvas ID, SIS
ids), else by the student's name. Its column names are the LMS's own, so a gradebook exported
from Canvas (Student, ID, SIS User ID, SIS Login ID, Section) or Moodle (First name, Last name,
ID number, Email address) is a roster as it is. A graded student two roster rows fit, or a row
two graded students fit, is left unmatched and named in the notes: a grade never lands on the
wrong student.
"""

from __future__ import annotations

import csv
import io
import re
from dataclasses import dataclass, replace
from pathlib import Path

from .submissions import student_id

# Roster columns, each under the names the LMSs and instructors give it (compared without case).
COLUMNS = {
    "submission": ("submission", "submission id", "grader id", "folder"),
    "name": ("name", "student", "student name", "full name"),
    "first": ("first name", "firstname", "given name"),
    "last": ("last name", "lastname", "surname", "family name"),
    "email": ("email", "email address", "e-mail", "e-mail address"),
    "id_number": ("id number", "idnumber", "student number"),
    "username": ("username", "user name"),
    "canvas_id": ("id", "canvas id", "canvas user id"),
    "sis_user_id": ("sis user id",),
    "sis_login_id": ("sis login id", "login id"),
    "section": ("section",),
}
IDENTIFIERS = ("email", "id_number", "username", "canvas_id", "sis_user_id", "sis_login_id")
MAX_ROSTER_BYTES = 20 << 20

_CANVAS_DOWNLOAD = re.compile(r"^(?P<who>[a-z0-9]+?)(?:_late)?_(?P<uid>\d+)_(?P<sub>\d+)(?:_|$)", re.IGNORECASE)
_MOODLE_DOWNLOAD = re.compile(r"^(?P<who>.+?)_(?P<pid>\d+)_assignsubmission_", re.IGNORECASE)
_EMAIL = re.compile(r"^[^@\s]+@[^@\s]+\.[^@\s]+$")


class RosterError(ValueError):
    """The roster cannot be used; the message says why (a usage error: exit status 2)."""


@dataclass(frozen=True)
class Identity:
    """One student as the LMS knows them; '' where unknown."""

    student: str  # the grader's id
    name: str = ""  # as the LMS shows it ("Smith, Alice" in a Canvas export)
    first: str = ""
    last: str = ""
    email: str = ""
    id_number: str = ""
    username: str = ""
    canvas_id: str = ""
    sis_user_id: str = ""
    sis_login_id: str = ""
    section: str = ""
    source: str = "name"  # where it came from: roster, canvas download, name


@dataclass(frozen=True)
class Roster:
    path: Path
    rows: tuple[dict, ...]  # field -> value, only the COLUMNS fields


@dataclass(frozen=True)
class Matched:
    identities: dict  # grader id -> Identity, for every graded student
    unmatched: tuple[str, ...]  # graded students no roster row (or more than one) fits
    absent: tuple[str, ...]  # roster students who were not graded at all
    notes: tuple[str, ...]  # sentences for the summary and the report


def _norm(s) -> str:
    return " ".join(str(s or "").split()).casefold()


def _header(name: str) -> str | None:
    key = _norm(name).replace("_", " ")
    return next((field for field, names in COLUMNS.items() if key in names), None)


def read_roster(path: Path) -> Roster:
    """The roster's rows; Canvas's "Points Possible" row and its test student are left out."""
    try:
        if path.stat().st_size > MAX_ROSTER_BYTES:
            raise RosterError(f"--roster {path}: larger than {MAX_ROSTER_BYTES >> 20} MB")
        text = path.read_text(encoding="utf-8-sig")
    except OSError as e:
        raise RosterError(f"--roster {path}: {e.strerror or e}") from None
    except UnicodeDecodeError:
        raise RosterError(f"--roster {path}: not UTF-8 text (save it as CSV UTF-8)") from None
    reader = csv.reader(io.StringIO(text))
    header = next(reader, None)
    if not header:
        raise RosterError(f"--roster {path}: empty")
    fields = [_header(h) for h in header]
    if not ({"submission", "name", "first", "last"} | set(IDENTIFIERS)) & set(fields):
        known = ", ".join(names[0] for names in COLUMNS.values())
        raise RosterError(f"--roster {path}: the header names none of the columns the grader reads ({known})")
    rows = []
    for cells in reader:
        row = {}
        for field, value in zip(fields, cells):
            if field and value.strip() and field not in row:
                row[field] = value.strip()
        first_cell = cells[0].strip() if cells else ""
        if not row or "points possible" in first_cell.casefold() or _norm(row.get("name")) == "student, test":
            continue
        rows.append(row)
    return Roster(path, tuple(rows))


def guess(student: str, name: str) -> Identity:
    """What the handed-in name itself says about the student, without a roster."""
    shown = name or student
    m = _CANVAS_DOWNLOAD.match(shown)
    if m:
        return Identity(student, name=m.group("who"), canvas_id=m.group("uid"), source="canvas download")
    m = _MOODLE_DOWNLOAD.match(shown)
    if m:
        shown = m.group("who").strip()
    return Identity(student, name=shown, email=shown if _EMAIL.match(shown) else "")


def _names(row: dict) -> set[str]:
    out = set()
    first, last, name = row.get("first", ""), row.get("last", ""), row.get("name", "")
    if first or last:
        out |= {f"{first} {last}", f"{last}, {first}", f"{last} {first}"}
    if name:
        out.add(name)
        if "," in name:  # Canvas shows "Smith, Alice"; a folder says "Alice Smith"
            last_, _, first_ = name.partition(",")
            out.add(f"{first_.strip()} {last_.strip()}")
    return {_norm(n) for n in out if n.strip(" ,")} | {_norm(student_id(n)) for n in out if n.strip(" ,")}


def _keys(student: str, name: str) -> tuple[set, set, set]:
    """What a graded student may be found by: (their own id or name, identifiers, names)."""
    own = {_norm(student), _norm(name)} - {""}
    ids, names = set(own), set(own)
    g = guess(student, name)
    if g.canvas_id:
        ids = {f"canvas_id:{g.canvas_id}"}
    names |= {_norm(g.name), _norm(student_id(g.name))} - {""}
    return own, ids, names


def match(students: dict, roster: Roster | None) -> Matched:
    """Each graded student (``{grader id: name as handed in}``) with their identity."""
    if roster is None:
        return Matched({s: guess(s, n) for s, n in students.items()}, (), (), ())
    by_own, by_id, by_name = {}, {}, {}
    for i, row in enumerate(roster.rows):
        if row.get("submission"):
            by_own.setdefault(_norm(row["submission"]), set()).add(i)
        for f in IDENTIFIERS:
            if row.get(f):
                by_id.setdefault(_norm(row[f]), set()).add(i)
        if row.get("canvas_id"):
            by_id.setdefault(f"canvas_id:{_norm(row['canvas_id'])}", set()).add(i)
        for n in _names(row):
            by_name.setdefault(n, set()).add(i)
    chosen, notes = {}, []
    for student, name in sorted(students.items()):
        own, ids, names = _keys(student, name)
        for keys, index in ((own, by_own), (ids, by_id), (names, by_name)):
            hits = set().union(*(index.get(k, set()) for k in keys))
            if len(hits) == 1:
                chosen[student] = hits.pop()
                break
            if len(hits) > 1:
                notes.append(f"roster: {student} fits {len(hits)} rows of {roster.path.name}; not matched")
                break
    taken: dict = {}
    for student, i in chosen.items():
        taken.setdefault(i, []).append(student)
    for i, who in sorted(taken.items()):
        if len(who) > 1:
            notes.append(f"roster: {' and '.join(who)} fit the same row of {roster.path.name}; neither is matched")
            for s in who:
                chosen.pop(s)
    identities = {}
    for student, name in students.items():
        if student in chosen:
            row = roster.rows[chosen[student]]
            fields = {k: v for k, v in row.items() if k in Identity.__dataclass_fields__}
            identities[student] = replace(Identity(student), **fields, source="roster")
        else:
            identities[student] = guess(student, name)
    unmatched = tuple(sorted(s for s in students if s not in chosen))
    used = set(chosen.values())
    absent = tuple(
        row.get("name") or f"{row.get('first', '')} {row.get('last', '')}".strip() or _first_identifier(row)
        for i, row in enumerate(roster.rows)
        if i not in used
    )
    if unmatched:
        notes.append(
            f"roster: {len(unmatched)} graded student(s) not on {roster.path.name} (the LMS files name them as "
            f"handed in; match them by hand): {', '.join(unmatched[:20])}" + (" …" if len(unmatched) > 20 else "")
        )
    if absent:
        notes.append(
            f"roster: {len(absent)} student(s) on {roster.path.name} handed in nothing (left out of the LMS files): "
            + ", ".join(absent[:20])
            + (" …" if len(absent) > 20 else "")
        )
    return Matched(identities, unmatched, absent, tuple(notes))


def _first_identifier(row: dict) -> str:
    return next((row[f] for f in ("submission", *IDENTIFIERS) if row.get(f)), "?")
