"""What the course expects: the exercises of each notebook and the expression holding each answer.

Read from the PRISTINE notebooks (``notebooks/NN_*.ipynb``), never from a student's copy, which
may have lost, gained or reordered cells. Every ``nbNN.<exercise>.check(<answer>, launch=...)``
call in a code cell becomes one ``ExerciseSpec``; ``seed=`` is dropped (the grader picks seeds).
"""

from __future__ import annotations

import ast
import json
import re
from dataclasses import dataclass, field
from pathlib import Path

_PROBLEMS = "helpers.problems"
_NUMBER = re.compile(r"^(\d{2})_")


@dataclass(frozen=True)
class ExerciseSpec:
    id: str  # "nb02.saxpy"
    module: str  # "nb02"
    name: str  # "saxpy"
    answer: str | None  # source of the answer expression, e.g. "saxpy"; None: check() without one
    options: dict = field(default_factory=dict)  # keyword -> source, e.g. {"launch": "saxpy_launch"}
    cell: int = 0  # index of the pristine cell holding the check


@dataclass
class CourseNotebook:
    stem: str  # "02_first_kernels"
    path: Path
    exercises: list  # [ExerciseSpec], in notebook order

    @property
    def number(self) -> str:
        m = _NUMBER.match(self.stem)
        return m.group(1) if m else ""

    @property
    def modules(self) -> list:
        return sorted({e.module for e in self.exercises})


def cell_source(cell) -> str:
    src = cell.get("source", "") if isinstance(cell, dict) else ""
    return "".join(src) if isinstance(src, list) else str(src)


def python_only(source: str) -> str:
    """The cell with IPython syntax (``%magic``, ``!shell``, ``%%cell`` magics) blanked out, for ``ast``."""
    lines = source.splitlines()
    if lines and lines[0].lstrip().startswith("%%"):
        return ""
    return "\n".join("" if ln.lstrip().startswith(("%", "!")) else ln for ln in lines)


def _problem_aliases(tree) -> dict:
    """{local name: "nb02"} for ``from helpers.problems import nb02 [as x]`` / ``import helpers.problems.nb02 as x``."""
    out = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module == _PROBLEMS:
            for a in node.names:
                out[a.asname or a.name] = a.name
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith(_PROBLEMS + "."):
            pass  # from helpers.problems.nb02 import saxpy: handled below via the exercise name
        elif isinstance(node, ast.Import):
            for a in node.names:
                if a.name.startswith(_PROBLEMS + ".") and a.asname:
                    out[a.asname] = a.name.rsplit(".", 1)[1]
    return out


def parse_checks(cells) -> list[ExerciseSpec]:
    """Every ``<nbNN>.<exercise>.check(...)`` call, in cell order; first occurrence of each id wins."""
    aliases: dict = {}
    specs: dict = {}
    for index, cell in enumerate(cells):
        if not isinstance(cell, dict) or cell.get("cell_type") != "code":
            continue
        try:
            tree = ast.parse(python_only(cell_source(cell)))
        except SyntaxError:
            continue
        aliases.update(_problem_aliases(tree))
        for node in ast.walk(tree):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "check"):
                continue
            target = node.func.value
            if not (isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name)):
                continue
            module = aliases.get(target.value.id)
            if module is None:
                continue
            ex_id = f"{module}.{target.attr}"
            if ex_id in specs:
                continue
            answer = ast.unparse(node.args[0]) if node.args else None
            options = {k.arg: ast.unparse(k.value) for k in node.keywords if k.arg and k.arg != "seed"}
            specs[ex_id] = ExerciseSpec(ex_id, module, target.attr, answer, options, index)
    return list(specs.values())


def load_course(course_dir: Path) -> dict[str, CourseNotebook]:
    """{stem: CourseNotebook} for every pristine notebook that has at least one exercise."""
    out = {}
    for path in sorted(Path(course_dir).glob("[0-9][0-9]_*.ipynb")):
        try:
            cells = json.loads(path.read_text(encoding="utf-8")).get("cells", [])
        except (OSError, ValueError):
            continue
        specs = parse_checks(cells)
        if specs:
            out[path.stem] = CourseNotebook(path.stem, path, specs)
    return out


def match_notebook(filename: str, cells, course: dict, forced: str | None = None) -> CourseNotebook | None:
    """Which course notebook a submitted file is: by --notebook, its file name, or its contents."""
    if forced:
        for nb in course.values():
            if forced in (nb.stem, nb.number):
                return nb
        return None
    name = filename.lower()
    by_stem = [nb for nb in course.values() if nb.stem.lower() in name]
    if len(by_stem) == 1:
        return by_stem[0]
    by_number = [nb for nb in course.values() if re.search(rf"(^|[^0-9]){nb.number}_", name)]
    if len(by_number) == 1:
        return by_number[0]
    # Contents: which exercise modules does the notebook import?
    text = "\n".join(cell_source(c) for c in cells or () if isinstance(c, dict))
    used = set(re.findall(r"\bnb(\d{2})\b", text))
    by_use = [nb for nb in course.values() if {m[2:] for m in nb.modules} & used]
    if len(by_use) == 1:
        return by_use[0]
    heading = re.search(r"^#\s*(\d{2})\s*·", text, re.M)
    if heading:
        found = [nb for nb in course.values() if nb.number == heading.group(1)]
        if len(found) == 1:
            return found[0]
    return None
