"""The learner's progress store (a small JSON file that survives kernel restarts) and its table.

Learners call ``helpers.progress()``, which passes the shipped exercises to ``show_progress``.

The file lives at ``$COURSE_PROGRESS_FILE`` when set (tests use a tmp path), otherwise at
``.course-progress.json`` in the course root: the nearest folder, from the current working
directory up, that holds the ``helpers`` package (notebooks run from ``notebooks/``).
It is written atomically (temp file + rename) so a crash never leaves half a file, under a
lock so two kernels checking at once lose nothing; a damaged file is moved aside, never lost.
"""

from __future__ import annotations

import contextlib
import html
import json
import os
import time
from pathlib import Path

from .._files import atomic_write

FILENAME = ".course-progress.json"
VERSION = 1


def progress_path() -> Path:
    env = os.environ.get("COURSE_PROGRESS_FILE")
    if env:
        return Path(env)
    try:
        here = Path.cwd().resolve()
    except OSError:  # the working folder was deleted under the kernel
        return Path.home() / FILENAME
    for folder in (here, *here.parents):
        if (folder / "helpers" / "__init__.py").is_file():
            return folder / FILENAME
    return here / FILENAME


_said = set()  # each problem with the file is reported once per session, in one line


def _say_once(key: str, text: str) -> None:
    if key not in _said:
        _said.add(key)
        print(text)


# The fields an entry may hold, with their types: anything else in the file is dropped, so a
# hand-edited or damaged entry can never break a check or the table.
_FIELDS = {
    "status": str,
    "attempts": int,
    "passed": bool,
    "last_result": str,
    "seed": (int, type(None)),
    "points": (int, float),
    "max_points": (int, float),
    "hints_seen": int,
    "solution_seen": bool,
    "updated": str,
}
_STATUSES = {"passed", "failed", "error", "not_attempted", "unchecked"}


def _valid_entry(e) -> dict | None:
    if not isinstance(e, dict):
        return None
    out = {
        k: v
        for k, v in e.items()
        if k in _FIELDS and isinstance(v, _FIELDS[k]) and not (_FIELDS[k] is int and isinstance(v, bool))
    }
    if out.get("status") not in _STATUSES:
        out["status"] = "not_attempted"
    out["attempts"] = max(0, out.get("attempts", 0))
    return out


_kept = set()  # damaged files that could not be moved aside: never written over


def _move_aside(path: Path, why: str) -> None:
    aside = path.with_name(f"{path.name}.damaged-{time.strftime('%Y%m%d-%H%M%S')}")
    try:
        os.replace(path, aside)
        where = f"it was moved to {aside.name} and a new one started"
    except OSError:
        _kept.add(str(path))
        where = "it is left as it is, and this session's results are not saved over it"
    _say_once(f"damaged:{path}", f"Your progress file {path} could not be read ({why}): {where}.")


def load() -> dict:
    """All recorded exercises as {id: entry}. A missing file counts as empty; a damaged one is moved
    aside (and said once), so an earlier pass is never silently overwritten by a fresh file."""
    path = progress_path()
    try:
        text = Path(os.path.realpath(path)).read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    except IsADirectoryError:
        _say_once(f"dir:{path}", f"Progress is not kept: {path} is a folder; remove it or set COURSE_PROGRESS_FILE.")
        return {}
    except UnicodeDecodeError:  # bytes that are not text: damaged like bad JSON, and as precious
        _move_aside(path, "not UTF-8 text: some of its bytes are damaged")
        return {}
    except OSError as e:  # unreadable (permissions, a disk error): saving would replace what it holds
        _move_aside(path, e.strerror or type(e).__name__)
        return {}
    try:
        data = json.loads(text)
    except (ValueError, RecursionError):
        _move_aside(path, "not valid JSON")
        return {}
    if not isinstance(data, dict) or not isinstance(data.get("exercises", {}), dict):
        _move_aside(path, "not a course progress file")
        return {}
    entries = {}
    for ex_id, e in data.get("exercises", {}).items():
        e = _valid_entry(e)
        if isinstance(ex_id, str) and e is not None:
            entries[ex_id] = e
    return entries


def _save(entries: dict) -> None:
    path = progress_path()
    if str(path) in _kept:
        return
    try:
        atomic_write(path, json.dumps({"version": VERSION, "exercises": entries}, indent=1, sort_keys=True))
    except OSError as e:  # a read-only folder must not break a check, but the learner should know
        _say_once(
            f"save:{path}",
            f"Progress could not be saved to {path} ({e.strerror or type(e).__name__}); "
            "your checks still work, but this session's results will not be remembered.",
        )


@contextlib.contextmanager
def _locked(path: Path):
    """An exclusive lock around read-modify-write, so two kernels checking at once lose nothing."""
    try:
        import fcntl
    except ImportError:  # Windows: no advisory locks; last writer wins
        yield
        return
    lock = Path(os.path.realpath(path)).with_name(f".{path.name}.lock")
    try:
        fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o644)
    except OSError:
        yield  # cannot even create the lock: saving will fail too and say so
        return
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def _update(ex_id: str, change) -> dict:
    with _locked(progress_path()):
        entries = load()
        entry = entries.setdefault(ex_id, {"status": "not_attempted", "attempts": 0, "passed": False})
        change(entry)
        entry["updated"] = time.strftime("%Y-%m-%d %H:%M:%S")
        _save(entries)
    return entry


def record_result(ex_id: str, result) -> dict:
    """Count an attempt (placeholders do not count) and remember the latest outcome."""

    def change(e):
        if result.status != "not_attempted":
            e["attempts"] = e.get("attempts", 0) + 1
        e["status"] = result.status
        e["passed"] = bool(e.get("passed")) or result.status == "passed"
        e["last_result"] = result.message
        e["seed"] = result.seed
        e["points"] = max(float(e.get("points", 0.0)), float(result.points))
        e["max_points"] = float(result.max_points)

    return _update(ex_id, change)


def record_hint(ex_id: str, level: int) -> None:
    _update(ex_id, lambda e: e.__setitem__("hints_seen", max(level, e.get("hints_seen", 0))))


def record_solution(ex_id: str) -> None:
    _update(ex_id, lambda e: e.__setitem__("solution_seen", True))


def rows(exercises=()) -> list[dict]:
    """One row per known exercise (shipped ones first, in course order), then any others in the file."""
    entries = load()
    out, seen = [], set()
    for ex in exercises:
        e = entries.get(ex.id, {})
        out.append(_row(ex.id, e, getattr(ex, "points", 1.0)))
        seen.add(ex.id)
    for ex_id in sorted(set(entries) - seen):
        out.append(_row(ex_id, entries[ex_id], entries[ex_id].get("max_points", 1.0)))
    return out


def _row(ex_id, e, max_points) -> dict:
    status = "passed" if e.get("passed") else e.get("status", "not_attempted")
    return {
        "exercise": ex_id,
        "status": status.replace("_", " "),
        "attempts": e.get("attempts", 0),
        "points": f"{e.get('points', 0.0):g}/{float(max_points):g}",
        "hints": e.get("hints_seen", 0),
        "last result": e.get("last_result", ""),
    }


_COLORS = {
    "passed": "#1a7f37",
    "failed": "#cf222e",
    "error": "#cf222e",
    "not attempted": "#6e7781",
    "unchecked": "#9a6700",
}


def table_text(rs: list[dict]) -> str:
    if not rs:
        return "No exercises yet."
    cols = list(rs[0])
    cells = [[str(r[c]) if c != "last result" else _short(r[c], 60) for c in cols] for r in rs]
    widths = [max(len(c), *(len(row[i]) for row in cells)) for i, c in enumerate(cols)]
    line = lambda vals: "  ".join(v.ljust(w) for v, w in zip(vals, widths)).rstrip()  # noqa: E731
    return "\n".join([line(cols), line(["-" * w for w in widths]), *(line(c) for c in cells)])


def table_html(rs: list[dict]) -> str:
    if not rs:
        return "<p>No exercises yet.</p>"
    cols = list(rs[0])
    head = "".join(f"<th style='text-align:left'>{html.escape(c)}</th>" for c in cols)
    body = []
    for r in rs:
        color = _COLORS.get(r["status"], "inherit")
        tds = "".join(
            f"<td style='text-align:left{';color:' + color if c == 'status' else ''}'>"
            f"{html.escape(_short(str(r[c]), 100))}</td>"
            for c in cols
        )
        body.append(f"<tr>{tds}</tr>")
    return f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"


def _short(s: str, n: int) -> str:
    return s if len(s) <= n else s[: n - 1] + "…"


def show_progress(exercises, show: bool = True):
    """Show a table of this learner's exercises (status, attempts, points, last result), or return its rows."""
    from .results import in_jupyter

    rs = rows(exercises)
    if not show:
        return rs
    if in_jupyter():
        from IPython.display import HTML, display

        display(HTML(table_html(rs)))
    else:
        print(table_text(rs))
    return None
