"""`helpers` has no import cycle and never imports from a lower layer up to a higher one; `bench/`
and `tools/` have no import cycle, import no private name from one another's modules, and `helpers`
never imports either of them.

Every `import` statement counts, at module level or inside a function: a cycle hidden in a
function body is still a cycle (the tracer once imported its verdicts lazily, and they
imported it back). The graph is read from the source with `ast`, so nothing is imported.

`bench/` and `tools/` are also run as scripts (`python bench/run.py`), which puts the script's own
folder first on `sys.path`: there a bare `import report` is bench/report.py, so it counts too.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
HELPERS = ROOT / "helpers"
BENCH = ROOT / "bench"
TOOLS = ROOT / "tools"

# Lowest layer first. A module may import from its own layer or any lower one. The package
# root (helpers/__init__.py, the learner's front door) and the grader sit on top.
LAYERS = (
    # helpers.grading.sandbox and .prelude: standard library only (they wrap the grader's children), kept that way.
    (
        "helpers.errors",
        "helpers.limits",
        "helpers.accesses",
        "helpers._style",
        "helpers._files",
        "helpers.versions",
        "helpers.grading.sandbox",
        "helpers.grading.prelude",
        "helpers._safety",
        "helpers._wire",
    ),
    (
        "helpers._numba",
        "helpers._numba_probe",
        "helpers.env",
        "helpers.cuda_c",
        "helpers.compile_check",
        "helpers.profiling",
    ),
    ("helpers.geometry",),
    ("helpers.tracer",),
    ("helpers.ptx",),
    ("helpers.standins",),
    ("helpers.exercises",),
    ("helpers.problems",),
    ("helpers.mutation",),  # derives wrong answers from the problems' references
    ("helpers", "helpers.grading", "helpers.grade"),
)


def module_name(path: Path, root: Path) -> str:
    rel = path.relative_to(root.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def import_nodes(path: Path, name: str):
    """(target module, imported names) for every import statement of `path` (module `name`), at any
    depth; relative imports resolved. `import a.b` gives ("a.b", ())."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            for a in node.names:
                yield a.name, ()
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module
            yield target, tuple(a.name for a in node.names)


def _in_root(target: str, root: Path, modules, scripts: bool) -> str:
    """`target` as a module of `root`: unchanged, or (scripts) a bare sibling name made `root.name`."""
    if scripts and target not in modules and f"{root.name}.{target}" in modules:
        return f"{root.name}.{target}"
    return target


def imports_of(path: Path, name: str, modules, root: Path = HELPERS, scripts: bool = False) -> set[str]:
    """Every module of `modules` that `path` (module `name`) imports. `from pkg import x` counts as
    importing `pkg.x` when that is a module, otherwise as importing `pkg`. `scripts`: `path` may run
    as a script, so a bare name of a module beside it counts as that module."""
    found = set()
    for target, names in import_nodes(path, name):
        target = _in_root(target, root, modules, scripts)
        if not names:
            found.add(target)
        for n in names:
            found.add(f"{target}.{n}" if f"{target}.{n}" in modules else target)
    return {m for m in found if m in modules and m != name}


def modules_of(root: Path) -> dict[str, Path]:
    return {module_name(p, root): p for p in root.rglob("*.py") if "__pycache__" not in p.parts}


def graph(root: Path = HELPERS, scripts: bool = False) -> dict[str, set[str]]:
    modules = modules_of(root)
    return {name: imports_of(path, name, modules, root, scripts) for name, path in modules.items()}


def top_level_imports(root: Path) -> dict[str, set[str]]:
    """{module: the first part of every module it imports} for every module under `root`."""
    return {
        name: {target.split(".")[0] for target, _ in import_nodes(path, name) if target}
        for name, path in modules_of(root).items()
    }


def private_imports(root: Path, scripts: bool = False) -> list[str]:
    """`from <a module of root> import _name` in another module of root: a private name shared."""
    modules, bad = modules_of(root), []
    for name, path in sorted(modules.items()):
        for target, names in import_nodes(path, name):
            target = _in_root(target, root, modules, scripts)
            if target in modules and target != name:
                for n in names:
                    if n.startswith("_") and not n.startswith("__") and f"{target}.{n}" not in modules:
                        bad.append(f"{name} imports {n} from {target}")
    return bad


def find_cycle(g: dict[str, set[str]]) -> list[str] | None:
    """One import cycle as a list of modules (first repeated at the end), or None."""
    state, stack = {}, []

    def visit(n):
        state[n] = "open"
        stack.append(n)
        for m in sorted(g.get(n, ())):
            if state.get(m) == "open":
                return stack[stack.index(m) :] + [m]
            if m not in state:
                found = visit(m)
                if found:
                    return found
        stack.pop()
        state[n] = "done"
        return None

    for n in sorted(g):
        if n not in state:
            found = visit(n)
            if found:
                return found
    return None


def layer_of(name: str) -> int:
    best = None
    for i, layer in enumerate(LAYERS):
        for prefix in layer:
            if name == prefix or name.startswith(prefix + "."):
                if best is None or len(prefix) > len(best[1]):
                    best = (i, prefix)
    if best is None:
        raise AssertionError(f"{name} is in no layer: add it to LAYERS in tests/project/test_import_graph.py")
    return best[0]


def upward_imports(g: dict[str, set[str]]) -> list[str]:
    bad = []
    for name, targets in sorted(g.items()):
        for t in sorted(targets):
            if layer_of(t) > layer_of(name):
                bad.append(f"{name} imports {t}, a higher layer")
    return bad


def test_helpers_has_no_import_cycle():
    cycle = find_cycle(graph())
    assert cycle is None, "import cycle: " + " -> ".join(cycle)


def test_no_module_imports_from_a_higher_layer():
    assert upward_imports(graph()) == []


def test_every_module_is_in_a_layer():
    for name in graph():
        layer_of(name)


@pytest.mark.parametrize("root", [BENCH, TOOLS], ids=["bench", "tools"])
def test_bench_and_tools_have_no_import_cycle(root):
    cycle = find_cycle(graph(root, scripts=True))
    assert cycle is None, "import cycle: " + " -> ".join(cycle)


@pytest.mark.parametrize("root", [BENCH, TOOLS], ids=["bench", "tools"])
def test_bench_and_tools_share_no_private_name(root):
    """What two scripts share has a public name in a module of its own (bench/timing.py)."""
    assert private_imports(root, scripts=True) == []


def test_helpers_never_imports_bench_or_tools():
    """The course's package stands alone: bench/ and tools/ use it, never the other way round."""
    bad = {name: sorted(top & {"bench", "tools"}) for name, top in top_level_imports(HELPERS).items()}
    assert {name: tops for name, tops in bad.items() if tops} == {}


def _plant(tmp_path, files: dict[str, str]) -> Path:
    root = tmp_path / "helpers"
    for rel, text in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
    return root


def test_a_planted_cycle_inside_a_function_is_found(tmp_path):
    root = _plant(
        tmp_path,
        {
            "__init__.py": "",
            "tracer/__init__.py": "",
            "tracer/result.py": "def verdicts():\n    from .verdicts import find\n    return find\n",
            "tracer/verdicts.py": "from helpers.tracer.result import verdicts\n",
        },
    )
    cycle = find_cycle(graph(root))
    assert cycle is not None and set(cycle) == {"helpers.tracer.result", "helpers.tracer.verdicts"}


def test_a_planted_script_cycle_and_private_import_are_found(tmp_path):
    """bench/run.py -> sgemm_c.py -> sgemm_tune.py -> run.py, once through a bare sibling import."""
    root = tmp_path / "bench"
    root.mkdir()
    (root / "__init__.py").write_text("")
    (root / "run.py").write_text("def k():\n    from bench import sgemm_c\n")
    (root / "sgemm_c.py").write_text("def main():\n    from sgemm_tune import _bench\n")
    (root / "sgemm_tune.py").write_text("def _bench():\n    from bench.run import Bench\n")
    g = graph(root, scripts=True)
    assert set(find_cycle(g)) == {"bench.run", "bench.sgemm_c", "bench.sgemm_tune"}
    assert find_cycle(graph(root)) is None  # without the script rule the bare import is invisible
    assert private_imports(root, scripts=True) == ["bench.sgemm_c imports _bench from bench.sgemm_tune"]


def test_a_planted_import_of_bench_from_helpers_is_found(tmp_path):
    root = _plant(tmp_path, {"__init__.py": "", "env.py": "def f():\n    import bench.run\n"})
    assert top_level_imports(root)["helpers.env"] == {"bench"}


def test_a_planted_upward_import_is_found(tmp_path):
    root = _plant(
        tmp_path,
        {
            "__init__.py": "",
            "exercises/__init__.py": "def progress():\n    from .. import problems\n",
            "problems/__init__.py": "from helpers.exercises import progress\n",
        },
    )
    g = graph(root)
    assert find_cycle(g) is not None
    assert upward_imports(g) == ["helpers.exercises imports helpers.problems, a higher layer"]


@pytest.mark.parametrize("order", ["tracer first", "function first"])
def test_helpers_trace_is_the_function_whatever_was_imported_first(order):
    import subprocess
    import sys

    first = "import helpers.tracer" if order == "tracer first" else "from helpers import trace as t0"
    code = (
        f"{first}\n"
        "import helpers, numpy as np\n"
        "from numba import cuda\n"
        "from helpers import trace\n"
        "@cuda.jit\n"
        "def k(a):\n"
        "    i = cuda.grid(1)\n"
        "    if i < a.size:\n"
        "        a[i] = i\n"
        "a = np.zeros(5, np.float32)\n"
        "t = helpers.trace(k, 1, 8, a)\n"
        "assert trace is helpers.trace and callable(helpers.trace), helpers.trace\n"
        "print(type(t).__name__, t.ok, a.tolist())\n"
    )
    env = {"COURSE_MODE": "cpu", "PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT)}
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=ROOT, timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "Trace True [0.0, 1.0, 2.0, 3.0, 4.0]"
