"""Unpack, discover and read submissions: one ``Submission`` per student x course notebook.

Layouts accepted (SUBMISSIONS is a folder or a .zip of one):
  alice/02_first_kernels.ipynb         one folder per student (nested folders and zips inside are fine)
  alice.ipynb, bob_02_first_kernels.ipynb   one file per student (LMS exports)
  alice.zip                            one zip per student
A zip whose only entry is one folder is entered. Hidden files, ``__MACOSX`` and
``.ipynb_checkpoints`` are ignored. Zip members with absolute paths, ``..`` or links are skipped
and sizes are capped, so a hostile archive cannot write outside the scratch folder.
"""

from __future__ import annotations

import json
import re
import shutil
import stat
import tempfile
import zipfile
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from .course import CourseNotebook, match_notebook

MAX_MEMBER_BYTES = 200 << 20
MAX_ZIP_BYTES = 2 << 30
MAX_FILE_BYTES = 256 << 20  # a notebook file is read at all up to this size, outputs included
MAX_CODE_BYTES = 50 << 20  # the notebook's code, once its outputs are stripped
MAX_NOTES_PER_ZIP = 20  # skipped members named one by one; the rest are counted
_SKIP = ("__MACOSX", ".ipynb_checkpoints", "__pycache__")
_KEEP = (".ipynb", ".zip")  # the only members extracted from a zip


@dataclass
class Submission:
    student: str
    notebook: str  # course notebook stem, e.g. "02_first_kernels"
    path: Path | None  # None: the student handed in no such notebook (or it could not be read)
    notes: list = field(default_factory=list)  # plain sentences for the feedback (duplicates, guesses)
    problem: str | None = None  # why this submission cannot be graded at all (a damaged zip ...)

    @property
    def key(self) -> str:
        return f"{self.student}/{self.notebook}"


def safe_extract(zip_path: Path, dest: Path, damaged: dict | None = None) -> list[str]:
    """Extract the notebooks (and zips) in ``zip_path`` into ``dest``; returns notes about skipped
    members. A member that cannot be read (bad CRC, truncated) is written empty and its reason put
    in ``damaged`` {path: sentence}. Raises ``zipfile.BadZipFile`` when the archive itself is unreadable."""
    notes, total, hidden = [], 0, 0
    dest.mkdir(parents=True, exist_ok=True)
    root = dest.resolve()

    def skip(name, why):
        notes.append(f"skipped {name!r} in {zip_path.name}: {why}")

    with zipfile.ZipFile(zip_path) as zf:
        for info in zf.infolist():
            name = info.filename
            mode = info.external_attr >> 16
            target = (dest / name).resolve()
            parts = Path(name).parts
            if name.startswith(("/", "\\")) or ".." in parts or not str(target).startswith(str(root)):
                skip(name, "it points outside the archive")
                continue
            if stat.S_ISLNK(mode):
                skip(name, "links are not extracted")
                continue
            if info.is_dir():
                continue
            if any(part.startswith(".") or part in _SKIP for part in parts):
                hidden += 1
                continue
            if not name.lower().endswith(_KEEP):
                skip(name, "not a notebook")
                continue
            total += info.file_size
            if info.file_size > MAX_MEMBER_BYTES or total > MAX_ZIP_BYTES:
                skip(name, "too large")
                continue
            target.parent.mkdir(parents=True, exist_ok=True)
            try:
                with zf.open(info) as src, open(target, "wb") as out:
                    shutil.copyfileobj(src, out, 1 << 20)
            except Exception as e:  # any failure (bad CRC, truncated data, odd compression) costs this member only
                target.write_bytes(b"")
                why = f"{name} in {zip_path.name} is damaged and cannot be extracted ({type(e).__name__}: {e})"
                if damaged is not None:
                    damaged[target] = why
                skip(name, f"damaged ({type(e).__name__})")
    if len(notes) > MAX_NOTES_PER_ZIP:
        notes[MAX_NOTES_PER_ZIP:] = [f"... and {len(notes) - MAX_NOTES_PER_ZIP} more skipped in {zip_path.name}"]
    return notes


def unpack(path: Path, scratch: Path, damaged: dict | None = None) -> tuple[Path, list[str]]:
    """The folder to discover in (``path`` itself, or a zip extracted into ``scratch``) and notes
    about skipped zip members."""
    path = Path(path)
    if path.is_dir():
        return path, []
    if zipfile.is_zipfile(path):
        dest = scratch / "unzipped"
        notes = safe_extract(path, dest, damaged)
        entries = [p for p in dest.iterdir() if not _hidden(p)]
        if len(entries) == 1 and entries[0].is_dir():
            return entries[0], notes
        return dest, notes
    raise FileNotFoundError(f"{path} is neither a folder nor a readable zip file")


def _hidden(p: Path) -> bool:
    return p.name.startswith(".") or p.name in _SKIP


def _notebooks_under(folder: Path, scratch: Path, notes: list, damaged: dict) -> list[Path]:
    out = []
    for p in sorted(folder.rglob("*")):
        rel = p.relative_to(folder)
        if any(part.startswith(".") or part in _SKIP for part in rel.parts) or p.is_symlink() or not p.is_file():
            continue
        if p.suffix.lower() == ".ipynb":
            out.append(p)
        elif p.suffix.lower() == ".zip":
            (scratch / "nested").mkdir(parents=True, exist_ok=True)
            inner = Path(tempfile.mkdtemp(prefix=re.sub(r"[^\w.-]", "_", p.stem)[:40] + "-", dir=scratch / "nested"))
            try:
                notes.extend(safe_extract(p, inner, damaged))
            except Exception as e:  # truncated or damaged: noted, the rest is graded
                notes.append(f"skipped {rel}: not a readable zip file ({type(e).__name__}: {e})")
                continue
            out.extend(_notebooks_under(inner, scratch, notes, damaged))
    return out


def student_id(raw: str) -> str:
    """A file-system-safe id (kept readable): 'Alice Smith (123)' -> 'Alice_Smith_123'."""
    s = re.sub(r"[^\w.@-]+", "_", raw).strip("._") or "student"
    return s[:80]


class StudentIds:
    """Distinct ids for distinct names: 'Kim Lee' and 'Kim_Lee' become Kim_Lee and Kim_Lee_2."""

    def __init__(self):
        self.by_raw, self.taken, self.collisions = {}, {}, []

    def __call__(self, raw: str) -> str:
        if raw in self.by_raw:
            return self.by_raw[raw]
        base = sid = student_id(raw)
        n = 1
        while sid.lower() in self.taken:
            n += 1
            sid = f"{base[:76]}_{n}"
        if sid != base:
            self.collisions.append(
                f"the names {self.taken[base.lower()]!r} and {raw!r} both become the id {base}; "
                f"graded as two students, {base} and {sid}"
            )
        self.taken[sid.lower()] = raw
        self.by_raw[raw] = sid
        return sid


def _student_raw(stem: str, nb: CourseNotebook | None) -> str:
    s = stem
    if nb is not None:
        s = re.sub(re.escape(nb.stem), "", s, flags=re.I)
    return s.strip(" _-.") or stem


def read_cells(path: Path):
    """(cells, problem): the code/markdown cells of a notebook, outputs and attachments left out,
    or a plain reason it cannot be read. The size limit that matters is the code's
    (``MAX_CODE_BYTES``): outputs never count against it, however large the plots (the file is
    read up to ``MAX_FILE_BYTES``, outputs included)."""
    try:
        size = path.stat().st_size
        if size > MAX_FILE_BYTES:
            return (
                None,
                f"the notebook file is {size >> 20} MB, more than the {MAX_FILE_BYTES >> 20} MB the grader reads "
                "(outputs included; clearing the outputs makes it smaller)",
            )
        data = json.loads(path.read_text(encoding="utf-8", errors="replace"))
    except RecursionError:
        return None, "the notebook file is nested too deeply to be a notebook"
    except ValueError as e:
        return None, f"the notebook file is not valid JSON ({e}); it was probably damaged while editing or uploading"
    except OSError as e:
        return None, f"the notebook file cannot be read ({e.strerror or e})"
    cells = data.get("cells") if isinstance(data, dict) else None
    if not isinstance(cells, list):
        return None, "the file is JSON but not a notebook (it has no list of cells)"
    cells = [c for c in cells if isinstance(c, dict)]
    code = 0
    for i, c in enumerate(cells):
        c.pop("outputs", None)  # never read by the grader: a notebook is graded as it runs here
        c.pop("attachments", None)
        src = c.get("source", "")
        if not (isinstance(src, str) or (isinstance(src, list) and all(isinstance(x, str) for x in src))):
            return None, f"cell {i + 1} of the notebook has a source that is not text; the file is damaged"
        if not isinstance(c.get("cell_type", ""), str):
            return None, f"cell {i + 1} of the notebook has no valid cell type; the file is damaged"
        if c.get("cell_type") == "code":
            code += sum(len(x.encode("utf-8", "replace")) for x in ([src] if isinstance(src, str) else src))
    if code > MAX_CODE_BYTES:
        return None, f"the notebook's code is {code >> 20} MB, more than the {MAX_CODE_BYTES >> 20} MB the grader runs"
    return cells, None


def discover(
    root: Path,
    course: dict,
    scratch: Path,
    forced: str | None = None,
    damaged: dict | None = None,
    zip_notes: tuple = (),
) -> tuple[list[Submission], list[str]]:
    """Submissions found under ``root`` (plus a Submission with path None for every expected but
    missing notebook of a student), and notes for the summary (files that match no course
    notebook, skipped zip members, colliding names, unreadable submissions)."""
    found: dict = {}  # (student, stem) -> [paths]
    unmatched: list = []  # (student or None, path)
    notes: list = []
    damaged = {} if damaged is None else damaged
    ids = StudentIds()
    folders = set()  # students who handed in a folder, even an empty one
    broken: dict = {}  # student -> why nothing of theirs can be read
    per_student: dict = {}  # student -> notes for their feedback
    for entry in sorted(root.iterdir()):
        if _hidden(entry):
            continue
        student = None
        try:
            if entry.is_dir() or entry.suffix.lower() == ".zip":
                student = ids(entry.stem if entry.is_file() else entry.name)
                folders.add(student)
                folder, mine = entry, per_student.setdefault(student, [])
                if entry.is_file():
                    folder = scratch / "students" / student
                    try:
                        mine.extend(safe_extract(entry, folder, damaged))
                    except Exception as e:  # a truncated or damaged zip: this student only
                        broken[student] = f"{entry.name} is not a readable zip file ({type(e).__name__}: {e})"
                        continue
                for p in _notebooks_under(folder, scratch, mine, damaged):
                    cells, _ = read_cells(p)
                    nb = match_notebook(p.name, cells, course, forced)
                    if nb is None:
                        unmatched.append((student, p))
                    else:
                        found.setdefault((student, nb.stem), []).append(p)
            elif entry.suffix.lower() == ".ipynb":
                cells, _ = read_cells(entry)
                nb = match_notebook(entry.name, cells, course, forced)
                if nb is None:
                    unmatched.append((None, entry))
                else:
                    found.setdefault((ids(_student_raw(entry.stem, nb)), nb.stem), []).append(entry)
        except Exception as e:  # one submission must never stop the batch
            student = student or ids(entry.stem)
            folders.add(student)
            broken[student] = f"{entry.name} could not be read ({type(e).__name__}: {e})"
    notes += ids.collisions
    for note in zip_notes:  # members of the class zip skipped: in the summary, and in their student's feedback
        who = [s for s, raw in ids.taken.items() if f"'{raw}/" in note or f"/{raw}/" in note]
        if len(who) == 1:
            per_student.setdefault(ids.by_raw[ids.taken[who[0]]], []).append(note)
        else:
            notes.append(note)
    for student, mine in per_student.items():
        notes += [f"{student}: {n}" for n in mine]
    # A file we cannot place (empty, damaged) is taken as the notebook most others handed in.
    common = Counter(stem for _, stem in found).most_common(1)
    for student, p in unmatched:
        if common and len(course) and (student is None or not any(s == student for s, _ in found)):
            stem = common[0][0]
            who = student or ids(_student_raw(p.stem, course[stem]))
            found.setdefault((who, stem), []).append(p)
            notes.append(f"{p.name}: could not tell which course notebook it is; graded as {stem}")
        else:
            notes.append(f"{p.name}: not a course notebook with exercises; ignored")
    subs = []
    students = sorted({s for s, _ in found} | folders)
    expected = sorted({stem for _, stem in found} or ([forced_stem(course, forced)] if forced else []))
    if not expected and broken and len(course) == 1:
        expected = list(course)
    for student in students:
        mine = per_student.get(student, [])
        for stem in expected:
            paths = found.get((student, stem))
            if not paths:
                why = broken.get(student) or f"no {stem} notebook was handed in"
                subs.append(Submission(student, stem, None, [why, *mine], problem=broken.get(student)))
                continue
            chosen = _choose(paths, course[stem])
            sub = Submission(student, stem, chosen, list(mine), problem=damaged.get(chosen))
            if len(paths) > 1:
                others = ", ".join(p.name for p in paths if p != chosen)
                sub.notes.append(f"several copies handed in; graded {chosen.name} (also found: {others})")
            subs.append(sub)
    return subs, notes


def forced_stem(course: dict, forced: str) -> str:
    return next(nb.stem for nb in course.values() if forced in (nb.stem, nb.number))


def _choose(paths: list, nb: CourseNotebook) -> Path:
    """Exact course file name first, then the most recently modified copy."""
    exact = [p for p in paths if p.stem == nb.stem]
    pool = exact or paths
    return max(pool, key=lambda p: (p.stat().st_mtime, str(p)))
