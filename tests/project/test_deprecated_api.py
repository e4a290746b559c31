"""No removed or deprecated CUDA Python API anywhere in the repository's text files.

Code (Python files, notebook code cells, scripts, configs) must never use them. Prose
(Markdown files and notebook Markdown cells) may name them only to warn about them: the
paragraph that mentions one must also say it is removed/deprecated/old (see ALLOWED_NEARBY).
This file's own patterns are the only other exception.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[2]
THIS = Path(__file__).resolve()

DEPRECATED = {
    "cuda.core.experimental (removed in cuda.core 1.0: import from cuda.core)": re.compile(r"cuda\.core\.experimental"),
    "from cuda import cuda/cudart/nvrtc (use cuda.bindings.driver/runtime/nvrtc)": re.compile(
        r"from\s+cuda\s+import\s+(?:\([^)]*?|[^\n(]*?)\b(cuda|cudart|nvrtc)\b"
    ),
    "cuda.cuda / cuda.cudart / cuda.nvrtc module paths (use cuda.bindings.*)": re.compile(
        r"(?<![\w.])cuda\.(cuda|cudart|nvrtc)\b"
    ),
}
ALLOWED_NEARBY = re.compile(r"\b(removed|deprecated|gone|old|outdated|no longer|never|not|instead)\b", re.I)
TEXT_SUFFIXES = {".py", ".ipynb", ".md", ".txt", ".toml", ".yml", ".yaml", ".cfg", ".ini", ".in", ".sh", ".rst"}
TEXT_NAMES = {"Makefile", "Dockerfile"}


def repo_files() -> list[Path]:
    """Tracked files plus new files git does not ignore (the tree as it will be committed)."""
    out = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.splitlines()
    files = [ROOT / p for p in out]
    return [
        f for f in files if f.is_file() and (f.suffix in TEXT_SUFFIXES or f.name in TEXT_NAMES) and f.resolve() != THIS
    ]


def problems_in_code(text: str, where: str) -> list[str]:
    return [f"{where}: {label}: {m.group(0)!r}" for label, rx in DEPRECATED.items() for m in rx.finditer(text)]


def problems_in_prose(text: str, where: str) -> list[str]:
    found = []
    for para in re.split(r"\n\s*\n", text):
        hits = problems_in_code(para, where)
        if hits and not ALLOWED_NEARBY.search(para):
            found += [h + " (prose may name it only next to 'removed'/'deprecated')" for h in hits]
    return found


def problems_in_file(path: Path) -> list[str]:
    rel = str(path.relative_to(ROOT)) if path.is_relative_to(ROOT) else str(path)
    text = path.read_text(errors="replace")
    if path.suffix == ".ipynb":
        nb = nbformat.reads(text, as_version=4)
        found = []
        for i, cell in enumerate(nb.cells):
            check = problems_in_prose if cell.cell_type == "markdown" else problems_in_code
            found += check(cell.source, f"{rel} cell {i}")
        return found
    if path.suffix in (".md", ".rst", ".txt"):
        return problems_in_prose(text, rel)
    return problems_in_code(text, rel)


def test_no_deprecated_cuda_python_api():
    files = repo_files()
    assert len(files) > 10, "git ls-files found almost nothing: is this a git checkout?"
    found = [p for f in files for p in problems_in_file(f)]
    assert not found, "deprecated CUDA Python API:\n" + "\n".join(found)


BAD_CODE = [
    "from cuda.core.experimental import Device",
    "import cuda.core.experimental as cc",
    "from cuda import cuda, nvrtc",
    "from cuda import cudart",
    "from cuda import (\n    nvrtc,\n)",
    "import cuda.cudart",
    "err, = cuda.cuda.cuInit(0)",
]
GOOD_CODE = [
    "from cuda.bindings import driver, nvrtc, runtime",
    "from cuda.core import Device, Program",
    "import cuda.bindings.nvrtc as nvrtc",
    "from numba import cuda\ncuda.jit",
    "from cuda import pathfinder",
]


@pytest.mark.parametrize("snippet", BAD_CODE)
def test_detector_flags_deprecated_code(snippet, tmp_path):
    path = tmp_path / "bad.py"
    path.write_text(snippet + "\n")
    assert problems_in_file(path), snippet


@pytest.mark.parametrize("snippet", GOOD_CODE)
def test_detector_accepts_current_code(snippet, tmp_path):
    path = tmp_path / "good.py"
    path.write_text(snippet + "\n")
    assert not problems_in_file(path), snippet


def test_prose_needs_a_warning_word(tmp_path):
    warn = tmp_path / "warn.md"
    warn.write_text("`cuda.core.experimental` was removed in cuda.core 1.0.\n")
    assert not problems_in_file(warn)
    teach = tmp_path / "teach.md"
    teach.write_text("Import `Device` from `cuda.core.experimental`.\n\nLater: the old paths were removed.\n")
    assert problems_in_file(teach)


def test_notebook_code_cell_is_strict_markdown_is_lenient(tmp_path):
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_markdown_cell("`from cuda import cudart` is deprecated."),
        nbformat.v4.new_code_cell("from cuda import cudart  # deprecated"),
    ]
    path = tmp_path / "x.ipynb"
    nbformat.write(nb, path)
    found = problems_in_file(path)
    assert len(found) == 1 and "cell 1" in found[0]
