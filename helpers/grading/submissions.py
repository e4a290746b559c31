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
import zipfile
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from .course import CourseNotebook, match_notebook

MAX_MEMBER_BYTES = 200 << 20
MAX_ZIP_BYTES = 2 << 30
MAX_NOTEBOOK_BYTES = 50 << 20
_SKIP = ("__MACOSX", ".ipynb_checkpoints", "__pycache__")


@dataclass
class Submission:
    student: str
    notebook: str  # course notebook stem, e.g. "02_first_kernels"
    path: Path | None  # None: the student handed in no such notebook
    notes: list = field(default_factory=list)  # plain sentences for the feedback (duplicates, guesses)

    @property
    def key(self) -> str:
        return f"{self.student}/{self.notebook}"


def safe_extract(zip_path: Path, dest: Path) -> list[str]:
    """Extract ``zip_path`` into ``dest``; returns notes about skipped members."""
    notes, total = [], 0
    dest.mkdir(parents=True, exist_ok=True)
    root = dest.resolve()
    with zipfile.ZipFile(zip_path) as zf:
        for info in zf.infolist():
            name = info.filename
            mode = info.external_attr >> 16
            target = (dest / name).resolve()
            if name.startswith(("/", "\\")) or ".." in Path(name).parts or not str(target).startswith(str(root)):
                notes.append(f"skipped {name!r} in {zip_path.name}: it points outside the archive")
                continue
            if stat.S_ISLNK(mode):
                notes.append(f"skipped {name!r} in {zip_path.name}: links are not extracted")
                continue
            if info.is_dir():
                target.mkdir(parents=True, exist_ok=True)
                continue
            total += info.file_size
            if info.file_size > MAX_MEMBER_BYTES or total > MAX_ZIP_BYTES:
                notes.append(f"skipped {name!r} in {zip_path.name}: too large")
                continue
            target.parent.mkdir(parents=True, exist_ok=True)
            with zf.open(info) as src, open(target, "wb") as out:
                shutil.copyfileobj(src, out, 1 << 20)
    return notes


def unpack(path: Path, scratch: Path) -> Path:
    """The folder to discover in: ``path`` itself, or a zip extracted into ``scratch``."""
    path = Path(path)
    if path.is_dir():
        return path
    if zipfile.is_zipfile(path):
        dest = scratch / "unzipped"
        safe_extract(path, dest)
        entries = [p for p in dest.iterdir() if not _hidden(p)]
        if len(entries) == 1 and entries[0].is_dir():
            return entries[0]
        return dest
    raise FileNotFoundError(f"{path} is neither a folder nor a zip file")


def _hidden(p: Path) -> bool:
    return p.name.startswith(".") or p.name in _SKIP


def _notebooks_under(folder: Path, scratch: Path) -> list[Path]:
    out = []
    for p in sorted(folder.rglob("*")):
        rel = p.relative_to(folder)
        if any(part.startswith(".") or part in _SKIP for part in rel.parts) or p.is_symlink():
            continue
        if p.suffix.lower() == ".ipynb" and p.is_file():
            out.append(p)
        elif p.suffix.lower() == ".zip" and p.is_file() and zipfile.is_zipfile(p):
            inner = scratch / "nested" / re.sub(r"[^\w.-]", "_", str(rel))
            try:
                safe_extract(p, inner)
            except (zipfile.BadZipFile, OSError):
                continue
            out.extend(_notebooks_under(inner, scratch))
    return out


def student_id(raw: str) -> str:
    """A file-system-safe id (kept readable): 'Alice Smith (123)' -> 'Alice_Smith_123'."""
    s = re.sub(r"[^\w.@-]+", "_", raw).strip("._") or "student"
    return s[:80]


def _student_from_file(stem: str, nb: CourseNotebook | None) -> str:
    s = stem
    if nb is not None:
        s = re.sub(re.escape(nb.stem), "", s, flags=re.I)
    s = s.strip(" _-.")
    return student_id(s or stem)


def read_cells(path: Path):
    """(cells, problem): the code/markdown cells of a notebook, or a plain reason it cannot be read."""
    try:
        size = path.stat().st_size
        if size > MAX_NOTEBOOK_BYTES:
            return (
                None,
                f"the notebook file is {size >> 20} MB, more than the {MAX_NOTEBOOK_BYTES >> 20} MB the grader reads",
            )
        data = json.loads(path.read_text(encoding="utf-8", errors="replace"))
    except ValueError as e:
        return None, f"the notebook file is not valid JSON ({e}); it was probably damaged while editing or uploading"
    except OSError as e:
        return None, f"the notebook file cannot be read ({e.strerror or e})"
    cells = data.get("cells") if isinstance(data, dict) else None
    if not isinstance(cells, list):
        return None, "the file is JSON but not a notebook (it has no list of cells)"
    return [c for c in cells if isinstance(c, dict)], None


def discover(root: Path, course: dict, scratch: Path, forced: str | None = None) -> tuple[list[Submission], list[str]]:
    """Submissions found under ``root`` (plus a Submission with path None for every expected but
    missing notebook of a student), and notes about files that match no course notebook."""
    found: dict = {}  # (student, stem) -> [paths]
    unmatched: list = []  # (student or None, path)
    notes: list = []
    folders = set()  # students who handed in a folder, even an empty one
    for entry in sorted(root.iterdir()):
        if _hidden(entry):
            continue
        if entry.is_dir() or (entry.suffix.lower() == ".zip" and zipfile.is_zipfile(entry)):
            student = student_id(entry.stem if entry.is_file() else entry.name)
            folders.add(student)
            folder = entry
            if entry.is_file():
                folder = scratch / "students" / student
                safe_extract(entry, folder)
            for p in _notebooks_under(folder, scratch):
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
                found.setdefault((_student_from_file(entry.stem, nb), nb.stem), []).append(entry)
    # A file we cannot place (empty, damaged) is taken as the notebook most others handed in.
    common = Counter(stem for _, stem in found).most_common(1)
    for student, p in unmatched:
        if common and len(course) and (student is None or not any(s == student for s, _ in found)):
            stem = common[0][0]
            who = student or _student_from_file(p.stem, course[stem])
            found.setdefault((who, stem), []).append(p)
            notes.append(f"{p.name}: could not tell which course notebook it is; graded as {stem}")
        else:
            notes.append(f"{p.name}: not a course notebook with exercises; ignored")
    subs = []
    students = sorted({s for s, _ in found} | folders)
    expected = sorted({stem for _, stem in found} or ([forced_stem(course, forced)] if forced else []))
    for student in students:
        for stem in expected:
            paths = found.get((student, stem))
            if not paths:
                subs.append(Submission(student, stem, None, [f"no {stem} notebook was handed in"]))
                continue
            chosen = _choose(paths, course[stem])
            sub = Submission(student, stem, chosen)
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
