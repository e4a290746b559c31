"""Every notebook has the course's shape (docs/authoring.md): a learner knows where things are."""

from __future__ import annotations

import re
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parent.parent
SOLUTIONS = sorted((ROOT / "solutions").glob("[0-9][0-9]_*.ipynb"))


@pytest.mark.parametrize("path", SOLUTIONS, ids=lambda p: p.name)
def test_notebook_shape(path):
    nb = nbformat.read(path, as_version=4)
    md = "\n".join(c.source for c in nb.cells if c.cell_type == "markdown")
    code = [c.source for c in nb.cells if c.cell_type == "code"]
    number = path.name[:2]
    assert nb.cells[0].cell_type == "markdown" and nb.cells[0].source.startswith(f"# {number} · "), "title"
    for heading in ("**Objectives**", "**Time:**", "**GPU or CPU:**", "## Key points", "## Next"):
        assert heading in md, f"missing {heading}"
    assert code and code[0].strip().startswith("import helpers"), "first code cell must be `import helpers`"
    assert re.search(r"\]\([^)]+\)", md.split("## Next", 1)[1]), "Next must link somewhere"
    if number != "00":
        checks = sum(len(re.findall(r"\.check\(", c)) for c in code)
        assert "## Exercises" in md and checks >= 3, f"needs an Exercises section with at least 3 checks, has {checks}"


@pytest.mark.parametrize("path", SOLUTIONS, ids=lambda p: p.name)
def test_next_link_points_to_an_existing_notebook(path):
    nb = nbformat.read(path, as_version=4)
    md = "\n".join(c.source for c in nb.cells if c.cell_type == "markdown")
    for target in re.findall(r"\]\((\d\d_\w+\.ipynb)\)", md.split("## Next", 1)[-1]):
        assert (ROOT / "notebooks" / target).exists(), f"Next links to {target}, which does not exist"
