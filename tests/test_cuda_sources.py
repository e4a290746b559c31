"""Every CUDA C source the course ships compiles with NVRTC, on the CPU, on every change.

Convention (docs/authoring.md, "CUDA C sources"):
- a CUDA C translation unit is a plain string literal assigned to a variable named ``src``,
  ``source`` or ``*_src`` / ``*_source`` (module level or in a cell); ``*_broken_src`` marks a
  deliberate error and must FAIL to compile;
- snippets for ``cp.ElementwiseKernel`` / ``cp.ReductionKernel`` (CuPy, called through ``cp.``
  or ``cupy.``) and PyCUDA's ``ElementwiseKernel`` (called by its bare name) are string literals,
  or names bound to literals, in the call; they are compiled inside the kernel those libraries
  generate (helpers.cuda_c);
- any other string literal containing ``__global__ void`` is an error: rename it so it gets compiled.
  (Exercise graders in helpers/problems/ and their GPU runners in helpers/exercises/cuda_runners.py
  pass the learner's snippet to these calls; the snippets themselves are compiled by the exercise
  tests.)

Scanned: code cells of solutions/ and notebooks/, and helpers/ and bench/ Python files
(helpers/cuda_c.py builds wrappers from f-strings and is tested through them).
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from pathlib import Path

import nbformat
import pytest

from helpers import cuda_c

ROOT = Path(__file__).resolve().parent.parent
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


def _unique(found):
    """One compile per distinct source (solutions/ and notebooks/ share most of them)."""
    seen = {}
    for s in found:
        if s.kind in ("stray", "unresolved"):
            continue
        key = (s.kind, s.text, s.parts)
        seen.setdefault(key, []).append(s)
    return list(seen.values())


FOUND = all_sources()
GROUPS = _unique(FOUND)


def check_group(group) -> None:
    first = group[0]
    places = ", ".join(s.where for s in group)
    if first.kind == "broken":
        with pytest.raises(cuda_c.CompileError):
            cuda_c.compile(first.translation_unit())
        return
    try:
        cuda_c.compile(first.translation_unit())
    except cuda_c.CompileError as e:
        pytest.fail(f"{places}: {e}")


@pytest.mark.parametrize("group", GROUPS, ids=[g[0].where for g in GROUPS])
def test_source_compiles(group):
    check_group(group)


def test_every_cuda_c_string_follows_the_convention():
    bad = [
        f"{s.where} ({'name it *_src' if s.kind == 'stray' else 'arguments must be string literals or names bound to them'})"  # noqa: E501
        for s in FOUND
        if s.kind in ("stray", "unresolved")
    ]
    assert not bad, "CUDA C that CI cannot find or compile:\n" + "\n".join(bad)


def test_the_scan_finds_the_course_sources():
    kinds = {s.kind for s in FOUND}
    assert {"source", "broken", "elementwise", "reduction", "pycuda_elementwise"} <= kinds, kinds
    assert len(GROUPS) >= 10


# -- the detector itself must be able to fail


PLANTED = [
    ("planted cell 0", 'good_src = r"""\nextern "C" __global__ void k(float* x) { x[0] = 1.0f; }\n"""'),
    ("planted cell 1", 'bad_src = r"""\nextern "C" __global__ void k(float* x) { x[0] = 1.0f }\n"""'),
    ("planted cell 2", 'kernel = cp.ElementwiseKernel("float32 x", "float32 y", "y = x +* 2", "k")'),
    ("planted cell 3", 'op = "z[i] = x[i] * 2"\nk = ElementwiseKernel("float* x, float* z", op)'),
    ("planted cell 4", 'k = cp.RawKernel(\'extern "C" __global__ void k() {}\', "k")'),
    ("planted cell 5", 'k = cp.ElementwiseKernel(params, "float32 y", "y = 1")'),
]


def test_planted_errors_are_caught():
    found = find_sources(PLANTED)
    by_where = {s.where.split(":")[0]: s for s in found}
    groups = {g[0].where.split(":")[0]: g for g in _unique(found)}
    check_group(groups["planted cell 0"])  # compiles
    check_group(groups["planted cell 3"])  # PyCUDA elementwise, name resolved
    for label in ("planted cell 1", "planted cell 2"):  # syntax errors must fail the test
        with pytest.raises(pytest.fail.Exception):
            check_group(groups[label])
    assert by_where["planted cell 4"].kind == "stray"
    assert by_where["planted cell 5"].kind == "unresolved"


def test_broken_marker_must_really_be_broken():
    found = find_sources([("planted", "oops_broken_src = 'extern \"C\" __global__ void k() {}'")])
    with pytest.raises(pytest.fail.Exception):
        check_group(_unique(found)[0])
