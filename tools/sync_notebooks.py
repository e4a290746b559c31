#!/usr/bin/env python3
"""Generate notebooks/ (what learners get) from solutions/ (the source of truth).

In a solution notebook, a code region between ``# BEGIN SOLUTION`` and ``# END SOLUTION``
is replaced in the learner's notebook by one placeholder line at the same indentation:

    # BEGIN SOLUTION                     ->   pass  # YOUR CODE HERE
    # BEGIN SOLUTION: n_blocks = None    ->   n_blocks = None  # YOUR CODE HERE

so the learner's notebook still runs top to bottom (the exercise checks report "not
attempted" instead of failing). Cells tagged ``solution-only`` are dropped. Both sets are
stored without outputs. ``--check`` changes nothing and exits 1 when anything is out of
sync, which is what the test suite runs.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parent.parent
BEGIN = re.compile(r"^(?P<indent>[ \t]*)# BEGIN SOLUTION(?::\s*(?P<placeholder>.+?))?\s*$")
END = re.compile(r"^[ \t]*# END SOLUTION\s*$")
MARK = "  # YOUR CODE HERE"
KEEP_METADATA = ("kernelspec", "language_info")


class MarkerError(ValueError):
    pass


def strip_solution(source: str, where: str = "") -> str:
    """Replace every marked region by its placeholder line."""
    out: list[str] = []
    inside = False
    for n, line in enumerate(source.splitlines(), 1):
        m = BEGIN.match(line)
        if m:
            if inside:
                raise MarkerError(f"{where}: line {n}: BEGIN SOLUTION inside another region")
            inside = True
            out.append(m["indent"] + (m["placeholder"] or "pass") + MARK)
        elif END.match(line):
            if not inside:
                raise MarkerError(f"{where}: line {n}: END SOLUTION without BEGIN")
            inside = False
        elif not inside:
            out.append(line)
    if inside:
        raise MarkerError(f"{where}: BEGIN SOLUTION is never closed")
    return "\n".join(out)


def clean(nb: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """No outputs, no execution counts, no editor metadata: stable diffs."""
    nb.metadata = nbformat.from_dict({k: nb.metadata[k] for k in KEEP_METADATA if k in nb.metadata})
    for cell in nb.cells:
        tags = cell.get("metadata", {}).get("tags", [])
        cell.metadata = nbformat.from_dict({"tags": tags} if tags else {})
        if cell.cell_type == "code":
            cell.outputs = []
            cell.execution_count = None
    return nb


def learner_version(solution: nbformat.NotebookNode, where: str) -> nbformat.NotebookNode:
    nb = clean(nbformat.from_dict(solution))
    cells = []
    for i, cell in enumerate(nb.cells):
        if "solution-only" in cell.metadata.get("tags", []):
            continue
        if cell.cell_type == "code":
            cell.source = strip_solution(cell.source, f"{where} cell {i}")
        cells.append(cell)
    nb.cells = cells
    return nb


def dumps(nb: nbformat.NotebookNode) -> str:
    return nbformat.writes(nb) + "\n"


def plan(root: Path = ROOT) -> dict[Path, str]:
    """Every file this tool owns and the exact text it should hold."""
    want: dict[Path, str] = {}
    for sol in sorted((root / "solutions").glob("[0-9][0-9]_*.ipynb")):
        nb = nbformat.read(sol, as_version=4)
        where = str(sol.relative_to(root))
        want[sol] = dumps(clean(nbformat.from_dict(nb)))
        want[root / "notebooks" / sol.name] = dumps(learner_version(nb, where))
    return want


def stale(root: Path = ROOT) -> list[str]:
    """Paths whose contents differ from what they should be, plus learner notebooks with no solution."""
    want = plan(root)
    problems = [str(p.relative_to(root)) for p, text in want.items() if not p.exists() or p.read_text() != text]
    for nb in sorted((root / "notebooks").glob("[0-9][0-9]_*.ipynb")):
        if nb not in want:
            problems.append(f"{nb.relative_to(root)} (no solutions/{nb.name})")
    return problems


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="exit 1 if anything is out of sync; change nothing")
    args = ap.parse_args(argv)
    try:
        problems = stale()
        if args.check:
            for p in problems:
                print(f"out of sync: {p}")
            if problems:
                print("Run `make notebooks` and commit the result.")
            return 1 if problems else 0
        for path, text in plan().items():
            if not path.exists() or path.read_text() != text:
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(text)
                print(f"wrote {path.relative_to(ROOT)}")
    except MarkerError as e:
        print(f"solution markers: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
