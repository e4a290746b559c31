"""Unpack, discover and read submissions: one ``Submission`` per student x course notebook.

Layouts accepted (SUBMISSIONS is a folder or a .zip of one):
  alice/02_first_kernels.ipynb         one folder per student (nested folders and zips inside are fine)
  alice.ipynb, bob_02_first_kernels.ipynb   one file per student (LMS exports)
  alice.zip                            one zip per student
A zip whose only entry is one folder is entered. Hidden files, ``__MACOSX`` and
``.ipynb_checkpoints`` are ignored. Zip members with absolute paths, ``..`` or links are skipped
and sizes are capped, so a hostile archive cannot write outside the scratch folder. Everything
unpacked for one student (their zip and every zip nested in their submission, at every level)
comes out of one budget (``MAX_UPLOAD_BYTES``): past it nothing of theirs is graded, and zips
nested deeper than ``MAX_ZIP_DEPTH`` are not unpacked.

A student's id comes from their own name alone (``student_ids``): names that become the same id
are told apart by a short hash of each exact name, never by the order they were found in.
"""

from __future__ import annotations

import hashlib
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

MAX_MEMBER_BYTES = 200 << 20  # one member of any zip
MAX_ZIP_BYTES = 2 << 30  # the class zip (SUBMISSIONS itself)
MAX_UPLOAD_BYTES = 1 << 30  # everything unpacked for one student, nested zips included (--max-upload-mb)
MAX_ZIP_DEPTH = 3  # zips inside one student's submission: alice.zip > inner.zip > innermost.zip
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
    name: str = ""  # the student's name as handed in (folder, zip or file name) that ``student`` comes from

    @property
    def key(self) -> str:
        return f"{self.student}/{self.notebook}"


class UploadTooLarge(Exception):
    """Everything unpacked for one student went past their budget: nothing of theirs is graded."""


class Budget:
    """The bytes one student's submission may unpack, all zips and levels together."""

    def __init__(self, limit: int | None = None):
        self.limit = MAX_UPLOAD_BYTES if limit is None else limit
        self.used = 0

    def take(self, size: int) -> None:
        self.used += size
        if self.used > self.limit:
            raise UploadTooLarge(
                f"the submission unpacks to more than the {_mb(self.limit)} the grader unpacks per student "
                "(every zip inside it, at every level, counts), so none of it was graded"
            )


def _mb(n: int) -> str:
    return f"{n / (1 << 20):g} MB"


def safe_extract(zip_path: Path, dest: Path, damaged: dict | None = None, budget: Budget | None = None) -> list[str]:
    """Extract the notebooks (and zips) in ``zip_path`` into ``dest``; returns notes about skipped
    members. A member that cannot be read (bad CRC, truncated) is written empty and its reason put
    in ``damaged`` {path: sentence}. Raises ``zipfile.BadZipFile`` when the archive itself is
    unreadable, and ``UploadTooLarge`` (before writing it) when a member would take ``budget``
    past its limit; without a budget (the class zip) members past ``MAX_ZIP_BYTES`` are skipped."""
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
            if info.file_size > MAX_MEMBER_BYTES:
                skip(name, "too large")
                continue
            if budget is not None:
                budget.take(info.file_size)  # the declared size: zipfile never reads a member past it
            else:
                total += info.file_size
                if total > MAX_ZIP_BYTES:
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


def _notebooks_under(folder: Path, area: Path, notes: list, damaged: dict, budget: Budget, depth: int = 0) -> list:
    """The notebooks under ``folder``; zips inside are extracted into ``area`` (up to
    ``MAX_ZIP_DEPTH`` levels below the submission, every byte out of ``budget``)."""
    out = []
    for p in sorted(folder.rglob("*")):
        rel = p.relative_to(folder)
        if any(part.startswith(".") or part in _SKIP for part in rel.parts) or p.is_symlink() or not p.is_file():
            continue
        if p.suffix.lower() == ".ipynb":
            out.append(p)
        elif p.suffix.lower() == ".zip":
            if depth >= MAX_ZIP_DEPTH:
                notes.append(f"skipped {rel}: zips nested more than {MAX_ZIP_DEPTH} deep are not unpacked")
                continue
            inner = _fresh(area, p.stem)
            try:
                notes.extend(safe_extract(p, inner, damaged, budget))
            except UploadTooLarge:
                raise
            except Exception as e:  # truncated or damaged: noted, the rest is graded
                notes.append(f"skipped {rel}: not a readable zip file ({type(e).__name__}: {e})")
                continue
            out.extend(_notebooks_under(inner, area, notes, damaged, budget, depth + 1))
    return out


def _fresh(area: Path, label: str) -> Path:
    """A new folder in ``area`` to unpack one zip into."""
    area.mkdir(parents=True, exist_ok=True)
    return Path(tempfile.mkdtemp(prefix=re.sub(r"[^\w.-]", "_", label)[:40] + "-", dir=area))


def _digest(name: str) -> str:
    return hashlib.sha256(name.encode("utf-8", "surrogateescape")).hexdigest()


def student_id(raw: str) -> str:
    """A file-system-safe id (kept readable): 'Alice Smith (123)' -> 'Alice_Smith_123'."""
    s = re.sub(r"[^\w.@-]+", "_", raw).strip("._") or "student"
    return s[:80]


def student_ids(names) -> tuple[dict, list]:
    """({name: id}, warnings): each id from that name alone, whatever else was handed in.

    A name's id is ``student_id(name)``. Where several names become the same id (compared without
    case: 'Lee Kim', 'Lee_Kim' and 'lee_kim'), the one name that already *is* that id keeps it and
    every other gets the id plus ``_`` and 8 hex digits of the SHA-256 of its exact name; if none
    or several of them are the id itself, all get the hash. So a name's id never depends on the
    order names are found in, and never becomes the id another name would have had alone."""
    groups: dict = {}
    for name in sorted(set(names)):
        groups.setdefault(student_id(name).lower(), []).append(name)
    ids, hashed, collided = {}, [], []
    for members in groups.values():
        base = student_id(members[0])
        exact = [m for m in members if m == student_id(m)]
        keeper = members[0] if len(members) == 1 else exact[0] if len(exact) == 1 else None
        for m in members:
            if m == keeper:
                ids[m] = student_id(m)
            else:
                hashed.append(m)
        if len(members) > 1:
            collided.append((base, members))
    taken = {i.lower() for i in ids.values()}
    for name in sorted(hashed):  # a hashed id never takes one that a name has as it is
        digest = _digest(name)
        options = [f"{student_id(name)[: 79 - n]}_{digest[:n]}" for n in (8, 16, 32, 64)]
        sid, k = next((o for o in options if o.lower() not in taken), None), 1
        while sid is None or sid.lower() in taken:  # only names made to look like another's hashed id
            k += 1
            sid = f"{options[-1][:76]}_{k}"
        taken.add(sid.lower())
        ids[name] = sid
    text = []
    for base, members in collided:
        listed = ", ".join(repr(m) for m in members[:-1]) + f" and {members[-1]!r}"
        both = "both become" if len(members) == 2 else "all become"
        each = ", ".join(f"{m!r} as {ids[m]}" for m in members)
        text.append(f"the names {listed} {both} the id {base}; graded as {len(members)} students: {each}")
    return ids, text


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
    upload_bytes: int | None = None,
) -> tuple[list[Submission], list[str]]:
    """Submissions found under ``root`` (plus a Submission with path None for every expected but
    missing notebook of a student), and notes for the summary (files that match no course
    notebook, skipped zip members, colliding names, unreadable submissions). ``upload_bytes``:
    what one student's submission may unpack in all (default ``MAX_UPLOAD_BYTES``).

    Everything is keyed by the student's name as handed in; ids are given once every name is
    known (``student_ids``)."""
    found: dict = {}  # (name, stem) -> [paths]
    unmatched: list = []  # (name or None, path)
    notes: list = []
    damaged = {} if damaged is None else damaged
    folders = set()  # students who handed in a folder or a zip, even an empty one
    broken: dict = {}  # name -> why nothing of theirs can be read
    too_large: set = set()  # names whose submission went past their budget: nothing of theirs is graded
    budgets: dict = {}
    per_student: dict = {}  # name -> notes for their feedback
    for entry in sorted(root.iterdir()):
        if _hidden(entry):
            continue
        name = area = None
        try:
            if entry.is_dir() or entry.suffix.lower() == ".zip":
                name = entry.stem if entry.is_file() else entry.name
                folders.add(name)
                mine = per_student.setdefault(name, [])
                if name in too_large:
                    continue
                budget = budgets.setdefault(name, Budget(upload_bytes))
                area = scratch / "students" / f"{student_id(name)[:40]}-{_digest(name)[:16]}"
                folder = entry
                if entry.is_file():
                    folder = _fresh(area, "upload")
                    try:
                        mine.extend(safe_extract(entry, folder, damaged, budget))
                    except UploadTooLarge:
                        raise
                    except Exception as e:  # a truncated or damaged zip: this student only
                        broken[name] = f"{entry.name} is not a readable zip file ({type(e).__name__}: {e})"
                        continue
                # The zip handed in is level 1 of the nesting; a zip inside a folder is.
                for p in _notebooks_under(folder, area, mine, damaged, budget, depth=int(entry.is_file())):
                    cells, _ = read_cells(p)
                    nb = match_notebook(p.name, cells, course, forced)
                    if nb is None:
                        unmatched.append((name, p))
                    else:
                        found.setdefault((name, nb.stem), []).append(p)
            elif entry.suffix.lower() == ".ipynb":
                cells, _ = read_cells(entry)
                nb = match_notebook(entry.name, cells, course, forced)
                if nb is None:
                    unmatched.append((None, entry))
                else:
                    found.setdefault((_student_raw(entry.stem, nb), nb.stem), []).append(entry)
        except UploadTooLarge as e:  # nothing of this student is graded; their unpacked files go at once
            too_large.add(name)
            broken[name] = str(e)
            shutil.rmtree(area, ignore_errors=True)
        except Exception as e:  # one submission must never stop the batch
            name = name or entry.stem
            folders.add(name)
            broken[name] = f"{entry.name} could not be read ({type(e).__name__}: {e})"
    found = {k: v for k, v in found.items() if k[0] not in too_large}
    unmatched = [(s, p) for s, p in unmatched if s not in too_large]
    # A file we cannot place (empty, damaged) is taken as the notebook most others handed in.
    placed = []
    common = Counter(stem for _, stem in found).most_common(1)
    for name, p in unmatched:
        if common and len(course) and (name is None or not any(s == name for s, _ in found)):
            stem = common[0][0]
            who = name or _student_raw(p.stem, course[stem])
            found.setdefault((who, stem), []).append(p)
            placed.append(f"{p.name}: could not tell which course notebook it is; graded as {stem}")
        else:
            placed.append(f"{p.name}: not a course notebook with exercises; ignored")
    names = {s for s, _ in found} | folders
    ids, collisions = student_ids(names)
    notes += collisions
    for note in zip_notes:  # members of the class zip skipped: in the summary, and in their student's feedback
        who = [n for n in names if f"'{n}/" in note or f"/{n}/" in note]
        if len(who) == 1:
            per_student.setdefault(who[0], []).append(note)
        else:
            notes.append(note)
    for name, mine in sorted(per_student.items(), key=lambda kv: ids.get(kv[0], "")):
        notes += [f"{ids.get(name, name)}: {n}" for n in mine]
    notes += placed
    subs = []
    expected = sorted({stem for _, stem in found} or ([forced_stem(course, forced)] if forced else []))
    if not expected and broken and len(course) == 1:
        expected = list(course)
    for name in sorted(names, key=lambda n: ids[n]):
        student, mine = ids[name], per_student.get(name, [])
        for stem in expected:
            paths = found.get((name, stem))
            if not paths:
                why = broken.get(name) or f"no {stem} notebook was handed in"
                subs.append(Submission(student, stem, None, [why, *mine], problem=broken.get(name), name=name))
                continue
            chosen = _choose(paths, course[stem])
            sub = Submission(student, stem, chosen, list(mine), problem=damaged.get(chosen), name=name)
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
