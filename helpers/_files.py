"""Writing files so that a crash or a full disk never leaves half a file behind."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path


def atomic_write(path: Path, text: str) -> None:
    """Write ``text`` to a temporary file beside ``path``, then rename it over ``path``.

    Readers see the old file or the new one, never a mix; the temporary file is removed if
    anything fails (the error is raised again for the caller to report). A symbolic link stays
    a link (its target is replaced), and an existing file keeps its permission bits.
    """
    path = Path(os.path.realpath(path))
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        mode = os.stat(path).st_mode & 0o7777
    except FileNotFoundError:
        mode = 0o666 & ~_umask()
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as f:
            f.write(text)
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def replace_section(path: Path, name: str, text: str, title: str = "") -> None:
    """Put ``text`` between ``<!-- name:start -->`` and ``<!-- name:end -->`` in the Markdown file
    ``path`` (appended when the markers are not there yet; the file is made with ``title`` when
    missing), leaving the rest of the file as it was."""
    start, end = f"<!-- {name}:start -->", f"<!-- {name}:end -->"
    path = Path(path)
    old = path.read_text(encoding="utf-8") if path.exists() else (f"{title}\n" if title else "")
    block = f"{start}\n{text.strip()}\n{end}"
    if start in old and end in old.split(start, 1)[1]:
        before, rest = old.split(start, 1)
        new = before + block + rest.split(end, 1)[1]
    else:
        new = old.rstrip("\n") + ("\n\n" if old.strip() else "") + block + "\n"
    atomic_write(path, new)
