"""Every CUDA C source the course ships, found by scanning solutions/ and helpers/ with `ast`
(the convention is in docs/authoring.md, "CUDA C sources"); tests/notebooks/test_cuda_sources_compile.py
compiles each one and tests/ptx_corpus/course.py replays them on the PTX interpreter."""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from pathlib import Path

import nbformat

from helpers import cuda_c

ROOT = Path(__file__).resolve().parents[2]
SOURCE_NAME = re.compile(r"^(src|source|\w+_src|\w+_source)$", re.IGNORECASE)  # SAXPY_SRC too
SKIP_FILES = {"helpers/cuda_c.py"}
KERNEL = re.compile(r"__global__\s+void\b")  # code, not prose that mentions __global__


@dataclass(frozen=True)
class Found:
    where: str  # "solutions/08_cupy.ipynb: saxpy_src"
    kind: str  # source | broken | elementwise | reduction | pycuda_elementwise | stray | unresolved
    text: str = ""
    parts: tuple = ()

    def translation_unit(self) -> str:
        if self.kind in ("source", "broken"):
            return self.text
        if self.kind == "elementwise":
            return cuda_c.elementwise_source(*self.parts[:3])
        if self.kind == "reduction":
            return cuda_c.reduction_source(*self.parts[:6])
        if self.kind == "pycuda_elementwise":
            return cuda_c.pycuda_elementwise_source(*self.parts[:2])
        raise ValueError(self.kind)


def _strip_magics(src: str) -> str:
    return "\n".join("" if ln.lstrip().startswith(("%", "!")) else ln for ln in src.splitlines())


GRADERS = ("helpers/problems/", "helpers/exercises/cuda_runners.py")


def _str(node):
    if isinstance(node, ast.Constant) and isinstance(node.value, (str, bytes)):
        if isinstance(node.value, bytes):  # b"\x89PNG" is a file signature, not a CUDA source
            return node.value.decode("utf-8", "replace") if node.value.isascii() else None
        return node.value
    return None


def _constants(trees) -> dict:
    """Names bound to string literals (``a = "..."`` and ``a, b = "...", "..."``)."""
    out = {}
    for tree in trees:
        for node in ast.walk(tree):
            if not isinstance(node, ast.Assign):
                continue
            for target in node.targets:
                if isinstance(target, ast.Name) and _str(node.value) is not None:
                    out[target.id] = _str(node.value)
                elif isinstance(target, ast.Tuple) and isinstance(node.value, ast.Tuple):
                    for t, v in zip(target.elts, node.value.elts):
                        if isinstance(t, ast.Name) and _str(v) is not None:
                            out[t.id] = _str(v)
    return out


def _call_kind(func):
    name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else None
    if name not in ("ElementwiseKernel", "ReductionKernel"):
        return None
    on_cupy = isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id in ("cp", "cupy")
    if name == "ReductionKernel":
        return "reduction"
    return "elementwise" if on_cupy else "pycuda_elementwise"


_PARAM_NAMES = {
    "elementwise": ("in_params", "out_params", "operation"),
    "reduction": ("in_params", "out_params", "map_expr", "reduce_expr", "post_map_expr", "identity"),
    "pycuda_elementwise": ("arguments", "operation"),
}


def find_sources(units: list[tuple[str, str]]) -> list[Found]:
    """``units``: (label, python source) pairs of one file (a notebook's code cells, or a .py file)."""
    trees = []
    for label, src in units:
        try:
            trees.append((label, ast.parse(_strip_magics(src))))
        except SyntaxError:
            continue  # a cell that is not Python (the notebook tests catch real syntax errors)
    consts = _constants(t for _, t in trees)
    found: list[Found] = []
    for label, tree in trees:
        allowed = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.Assign) and _str(node.value) is not None:
                names = [t.id for t in node.targets if isinstance(t, ast.Name)]
                if any(SOURCE_NAME.match(n) for n in names):
                    allowed.add(id(node.value))
                    name = next(n for n in names if SOURCE_NAME.match(n))
                    kind = "broken" if name.lower().endswith("_broken_src") else "source"
                    found.append(Found(f"{label}: {name}", kind, _str(node.value)))
            if isinstance(node, ast.Call) and _call_kind(node.func):
                kind = _call_kind(node.func)
                wanted = _PARAM_NAMES[kind]
                given = list(node.args[: len(wanted)])
                given += [kw.value for kw in node.keywords if kw.arg in wanted[len(given) :]]
                parts = []
                for arg in given[: len(wanted)]:
                    value = (
                        _str(arg)
                        if _str(arg) is not None
                        else consts.get(arg.id)
                        if isinstance(arg, ast.Name)
                        else None
                    )
                    parts.append(value)
                    allowed.add(id(arg))
                where = f"{label}: {kind} call at line {node.lineno}"
                if len(parts) < len(wanted) or any(p is None for p in parts):
                    # graders (and their GPU runners) call these with the learner's answer
                    if not label.startswith(GRADERS):
                        found.append(Found(where, "unresolved"))
                else:
                    found.append(Found(where, kind, parts=tuple(parts)))
        for node in ast.walk(tree):
            text = _str(node)
            if text and KERNEL.search(text) and id(node) not in allowed:
                found.append(Found(f"{label}: line {node.lineno}", "stray", text))
    return found


def _units(path: Path) -> list[tuple[str, str]]:
    rel = str(path.relative_to(ROOT))
    if path.suffix == ".ipynb":
        nb = nbformat.read(path, as_version=4)
        return [(f"{rel} cell {i}", c.source) for i, c in enumerate(nb.cells) if c.cell_type == "code"]
    return [(rel, path.read_text())]


def course_files() -> list[Path]:
    files = sorted((ROOT / "solutions").glob("*.ipynb")) + sorted((ROOT / "notebooks").glob("*.ipynb"))
    files += sorted((ROOT / "helpers").rglob("*.py")) + sorted((ROOT / "bench").rglob("*.py"))
    return [f for f in files if str(f.relative_to(ROOT)) not in SKIP_FILES]


def all_sources() -> list[Found]:
    return [s for f in course_files() for s in find_sources(_units(f))]


def unique_groups(found):
    """One compile per distinct source (solutions/ and notebooks/ share most of them)."""
    seen = {}
    for s in found:
        if s.kind in ("stray", "unresolved"):
            continue
        key = (s.kind, s.text, s.parts)
        seen.setdefault(key, []).append(s)
    return list(seen.values())


FOUND = all_sources()
GROUPS = unique_groups(FOUND)
