"""notebooks/ is generated from solutions/: the stripping rules, and that the repo is in sync."""

from __future__ import annotations

import sys
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))
import sync_notebooks as sync  # noqa: E402


def test_region_becomes_an_indented_pass():
    src = (
        "@cuda.jit\ndef k(a):\n    # BEGIN SOLUTION\n    i = cuda.grid(1)\n    a[i] = 1\n    # END SOLUTION\nk[1, 1](x)"
    )
    assert sync.strip_solution(src) == "@cuda.jit\ndef k(a):\n    pass  # YOUR CODE HERE\nk[1, 1](x)"


def test_region_with_its_own_placeholder():
    src = "# BEGIN SOLUTION: n_blocks = None\nn_blocks = (n + 31) // 32\n# END SOLUTION\nprint(n_blocks)"
    assert sync.strip_solution(src) == "n_blocks = None  # YOUR CODE HERE\nprint(n_blocks)"


@pytest.mark.parametrize(
    "src, problem",
    [
        ("# BEGIN SOLUTION\nx = 1", "never closed"),
        ("x = 1\n# END SOLUTION", "END SOLUTION without BEGIN"),
        ("# BEGIN SOLUTION\n# BEGIN SOLUTION\n# END SOLUTION", "inside another region"),
    ],
)
def test_broken_markers_are_reported(src, problem):
    with pytest.raises(sync.MarkerError, match=problem):
        sync.strip_solution(src, "x.ipynb cell 3")


def test_learner_version_drops_solution_only_cells_and_outputs():
    nb = nbformat.v4.new_notebook()
    code = nbformat.v4.new_code_cell("# BEGIN SOLUTION\nanswer = 42\n# END SOLUTION")
    code.outputs = [nbformat.v4.new_output("stream", text="42\n")]
    code.execution_count = 3
    hidden = nbformat.v4.new_markdown_cell("The answer is 42.")
    hidden.metadata["tags"] = ["solution-only"]
    nb.cells = [code, hidden]
    out = sync.learner_version(nb, "t.ipynb")
    assert [c.source for c in out.cells] == ["pass  # YOUR CODE HERE"]
    assert out.cells[0].outputs == [] and out.cells[0].execution_count is None


def test_repository_is_in_sync():
    assert sync.stale() == [], "run `make notebooks` and commit the result"


def test_stale_detects_an_edited_learner_notebook(tmp_path):
    (tmp_path / "solutions").mkdir()
    (tmp_path / "notebooks").mkdir()
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("# BEGIN SOLUTION\nx = 1\n# END SOLUTION")]
    nbformat.write(nb, tmp_path / "solutions" / "05_x.ipynb")
    for path, text in sync.plan(tmp_path).items():
        path.write_text(text)
    assert sync.stale(tmp_path) == []
    learner = tmp_path / "notebooks" / "05_x.ipynb"
    learner.write_text(learner.read_text().replace("pass", "x = 2"))
    (tmp_path / "notebooks" / "06_orphan.ipynb").write_text("{}")
    assert sync.stale(tmp_path) == ["notebooks/05_x.ipynb", "notebooks/06_orphan.ipynb (no solutions/06_orphan.ipynb)"]


def test_every_solution_region_is_marked_in_the_learner_notebook():
    """A learner notebook never contains solution code: each region became a placeholder."""
    for sol in sorted((ROOT / "solutions").glob("[0-9][0-9]_*.ipynb")):
        src = sol.read_text()
        learner = (ROOT / "notebooks" / sol.name).read_text()
        assert src.count("# BEGIN SOLUTION") == learner.count("# YOUR CODE HERE"), sol.name
        assert "# BEGIN SOLUTION" not in learner and "# END SOLUTION" not in learner
