"""Every notebook has the course's shape (docs/authoring.md): a learner knows where things are."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[2]
SOLUTIONS = sorted((ROOT / "solutions").glob("[0-9][0-9]_*.ipynb"))

# The exercise levels, as docs/authoring.md defines them ("Exercises").
LEVELS = ("warm-up", "core", "stretch")
HEADING = re.compile(
    r"### Exercise (?P<n>[1-9]\d*) · (?P<title>\S.*?) "
    rf"\((?P<level>{'|'.join(map(re.escape, LEVELS))})\)"
)
STUCK = re.compile(
    r"Stuck\? Run `(?P<obj>(?P<mod>\w+)\.(?P<name>\w+))\.hint\(\)` for a nudge \(again for more\); "
    r"`(?P=obj)\.solution\(\)` shows an answer\."
)
ANY_EXERCISE_HEADING = re.compile(r"\s{0,3}#{1,6}\s.*\bExercise\b")  # "## Exercises" is the section, not an exercise
LEAD_IN = re.compile(r"(?<!\w)(\*\*|__|\*|_)\s*Exercise\b")  # **Exercise 1 …**, __Exercise__, *Exercise*
SECTION = re.compile(r"#{1,2}\s")
CHECK = re.compile(r"\b(?P<obj>(?P<mod>[A-Za-z_]\w*)\.(?P<name>\w+))\.check\(")
HINT_CALL = re.compile(r"\.(hint|solution)\(\)")
PROBLEMS_IMPORT = re.compile(r"^\s*from helpers\.problems import ([\w ,]+?)\s*$", re.M)


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


@pytest.mark.parametrize("path", [p for p in SOLUTIONS if p.name[:2] != "00"], ids=lambda p: p.name)
def test_exercises_have_headings_levels_checks_and_stuck_lines(path):
    problems = exercise_problems(nbformat.read(path, as_version=4))
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("path", SOLUTIONS, ids=lambda p: p.name)
def test_next_link_points_to_an_existing_notebook(path):
    nb = nbformat.read(path, as_version=4)
    md = "\n".join(c.source for c in nb.cells if c.cell_type == "markdown")
    for target in re.findall(r"\]\((\d\d_\w+\.ipynb)\)", md.split("## Next", 1)[-1]):
        assert (ROOT / "notebooks" / target).exists(), f"Next links to {target}, which does not exist"


# ------------------------------------------------------------------------------- the exercise checker


def _first_line(cell) -> str:
    return cell.source.split("\n", 1)[0]


def _imported_problem_modules(cells) -> dict[str, str]:
    """{name in the notebook: helpers.problems module} from `from helpers.problems import nb02[ as p]`."""
    out = {}
    for cell in cells:
        if cell.cell_type == "code":
            for names in PROBLEMS_IMPORT.findall(cell.source):
                for item in names.split(","):
                    module, _, alias = item.strip().partition(" as ")
                    out[(alias or module).strip()] = module.strip()
    return out


def _object_problems(where: str, mod: str, name: str, imported: dict[str, str]) -> list[str]:
    if mod not in imported:
        return [f"{where}: `{mod}` is not imported in this notebook (`from helpers.problems import {mod}`)"]
    exercises = importlib.import_module(f"helpers.problems.{imported[mod]}").EXERCISES
    if name not in exercises:
        return [f"{where}: `{mod}.{name}` is not an exercise of helpers/problems/{imported[mod]}.py"]
    return []


def exercise_problems(nb) -> list[str]:
    """What is wrong with a notebook's exercises (docs/authoring.md, "Exercises"); [] when nothing is."""
    cells, problems, heads = nb.cells, [], []
    imported = _imported_problem_modules(cells)
    section = next(
        (
            i
            for i, c in enumerate(cells)
            if c.cell_type == "markdown" and re.search(r"^## Exercises\s*$", c.source, re.M)
        ),
        None,
    )
    for i, cell in enumerate(cells):
        if cell.cell_type == "code":
            if HINT_CALL.search(cell.source):
                problems.append(f"cell {i}: a code cell calls .hint() or .solution(); the Stuck? line replaces it")
            continue
        if cell.cell_type != "markdown":
            continue
        for j, line in enumerate(cell.source.split("\n")):
            if LEAD_IN.search(line):
                problems.append(
                    f"cell {i}: bold exercise lead-in {line[:50]!r}: make it a '### Exercise N · Title (level)' heading"
                )
            if ANY_EXERCISE_HEADING.match(line):
                m = HEADING.fullmatch(line.rstrip())
                if not m:
                    problems.append(
                        f"cell {i}: {line!r} is not '### Exercise N · Title (level)' with a level from {LEVELS}"
                    )
                elif j:
                    problems.append(f"cell {i}: {line!r} must be the first line of its cell")
                else:
                    heads.append((i, int(m["n"])))
            if "Stuck?" in line and not STUCK.fullmatch(cell.source.strip()):
                problems.append(f"cell {i}: a Stuck? line not in the agreed form (its own cell): {line[:60]!r}")
    numbers = [n for _, n in heads]
    if numbers != list(range(1, len(numbers) + 1)):
        problems.append(f"exercises are numbered {numbers}: they must run 1, 2, 3, … without gaps")
    if len(heads) < 3:
        problems.append(f"{len(heads)} exercise heading(s): a notebook has at least three exercises")
    if heads and (section is None or heads[0][0] < section):
        problems.append("exercise headings must come after the '## Exercises' heading")
    for i, n in heads:
        where = f"Exercise {n}"
        end = next(
            (
                k
                for k in range(i + 1, len(cells))
                if cells[k].cell_type == "markdown"
                and (ANY_EXERCISE_HEADING.match(_first_line(cells[k])) or SECTION.match(cells[k].source))
            ),
            len(cells),
        )
        checks = [
            (k, m)
            for k in range(i + 1, end)
            if cells[k].cell_type == "code"
            for m in [CHECK.search(cells[k].source)]
            if m
        ]
        if not checks:
            problems.append(f"{where}: no code cell calls `.check(` before the next exercise or section")
            continue
        k, check = checks[0]
        problems += _object_problems(f"{where}'s check", check["mod"], check["name"], imported)
        stuck = [
            m
            for s in range(k + 1, end)
            if cells[s].cell_type == "markdown"
            for m in [STUCK.fullmatch(cells[s].source.strip())]
            if m
        ]
        if len(stuck) != 1:
            problems.append(f"{where}: needs exactly one Stuck? line after its check cell, has {len(stuck)}")
        elif stuck[0]["obj"] != check["obj"]:
            problems.append(f"{where}: the Stuck? line names `{stuck[0]['obj']}`, the check `{check['obj']}`")
    return problems


# ------------------------------------------------------------------------------- the checker rejects


def _stuck(obj):
    return f"Stuck? Run `{obj}.hint()` for a nudge (again for more); `{obj}.solution()` shows an answer."


def _synthetic(exercises, stuck=True, imports="from helpers.problems import nb02"):
    """A small notebook: (heading, exercise object) per exercise, each with a check cell and a Stuck? line."""
    md, code = nbformat.v4.new_markdown_cell, nbformat.v4.new_code_cell
    cells = [md("# 02 · Mini"), code("import helpers"), md("## Exercises\n\nSome words."), code(imports)]
    for heading, obj in exercises:
        cells += [md(f"{heading}\n\nDo the thing."), code(f"answer = None\n{obj}.check(answer)")]
        if stuck:
            cells.append(md(_stuck(obj)))
    cells.append(md("## Key points\n- done"))
    nb = nbformat.v4.new_notebook()
    nb.cells = cells
    return nb


GOOD = [
    ("### Exercise 1 · Vector add (warm-up)", "nb02.vector_add"),
    ("### Exercise 2 · SAXPY (core)", "nb02.saxpy"),
    ("### Exercise 3 · Grid-stride square (stretch)", "nb02.square_stride"),
]


def _with(k, heading=None, obj=None):
    out = list(GOOD)
    out[k] = (heading or out[k][0], obj or out[k][1])
    return out


def test_checker_accepts_the_documented_shape():
    assert exercise_problems(_synthetic(GOOD)) == []


@pytest.mark.parametrize(
    "nb, complaint",
    [
        (_synthetic(_with(1, heading="**Exercise 2 (warm-up): SAXPY.** Write it.")), "bold exercise lead-in"),
        (_synthetic(_with(1, heading="**Exercise 2.** Write it.")), "bold exercise lead-in"),
        (_synthetic(_with(2, heading="### Exercise 4 · Grid-stride square (stretch)")), "numbered [1, 2, 4]"),
        (_synthetic(_with(0, heading="### Exercise 2 · Vector add (warm-up)")), "numbered [2, 2, 3]"),
        (_synthetic(_with(2, heading="### Exercise 3 · Grid-stride square (stretching)")), "with a level from"),
        (_synthetic(_with(2, heading="### Exercise 3 · Grid-stride square")), "with a level from"),
        (_synthetic(_with(2, heading="### Exercise 3: Grid-stride square (stretch)")), "with a level from"),
        (_synthetic(_with(2, heading="Read first.\n\n### Exercise 3 · Grid-stride square (stretch)")), "first line"),
        (_synthetic(GOOD[:2]), "at least three"),
        (_synthetic(GOOD, stuck=False), "exactly one Stuck? line"),
        (_synthetic(_with(1, obj="nb02.no_such_exercise")), "is not an exercise"),
        (_synthetic(GOOD, imports="from helpers.problems import nb01"), "is not imported"),
    ],
    ids=[
        "bold",
        "bold-no-level",
        "skipped-number",
        "repeated-number",
        "unknown-level",
        "no-level",
        "colon",
        "not-first-line",
        "two-exercises",
        "no-stuck",
        "unknown-object",
        "not-imported",
    ],
)
def test_checker_rejects(nb, complaint):
    problems = exercise_problems(nb)
    assert any(complaint in p for p in problems), problems


def test_checker_rejects_a_stuck_line_for_another_exercise_and_a_hint_cell():
    nb = _synthetic(GOOD)
    nb.cells[9].source = _stuck("nb02.histogram")  # after Exercise 2's check, which is nb02.saxpy
    nb.cells.insert(6, nbformat.v4.new_code_cell("# nb02.vector_add.hint()"))
    problems = exercise_problems(nb)
    assert any("names `nb02.histogram`, the check `nb02.saxpy`" in p for p in problems), problems
    assert any("calls .hint() or .solution()" in p for p in problems), problems
