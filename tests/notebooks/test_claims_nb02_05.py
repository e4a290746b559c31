"""What notebooks 02-05 say matches what their cells print and what the checks do: reads per thread, one
definition of per-thread work, coalescing introduced where first used, no 'one thread after another'
simulator claim, float32 kept after notebook 02, and notebook 02's list of Python a kernel may contain."""

import ast
import contextlib
import io
import json
import re
import subprocess
import sys
import time
from pathlib import Path

import numba
import numpy as np
import pytest
from numba import cuda

from helpers import cuda_c, geometry, trace
from helpers.errors import CourseError, LearnerError
from helpers.problems import nb02, nb04, nb05, nb06, nb09, nb10, nb11
from helpers.problems.nb05 import BLOCK, HALO_BLOCK
from helpers.problems.nb06 import BINS, SCAN
from support import code_cells

ROOT = Path(__file__).resolve().parents[2]


def _run_cells(path, upto):
    """Run a notebook's code cells up to the one containing `upto`; return that cell's printed text."""
    scope = {"__name__": "__main__"}
    for _, src in code_cells(path):
        src = "\n".join(ln for ln in src.splitlines() if not ln.lstrip().startswith(("%", "!")))
        if "gpu_only(" in src:
            continue
        buf = io.StringIO()
        with contextlib.redirect_stdout(buf):
            exec(compile(src, str(path), "exec"), scope)  # noqa: S102 - the notebook's own code
        if upto in src:
            return buf.getvalue()
    raise AssertionError(f"no cell with {upto!r}")


pytestmark = pytest.mark.usefixtures("progress_file")  # tests/conftest.py


def test_notebook_05_prints_the_reads_per_thread_its_text_states():
    path = ROOT / "solutions" / "05_shared_memory.ipynb"
    printed = _run_cells(path, "for kernel in (matmul_naive, matmul_tiled)")
    got = dict(re.findall(r"(matmul_\w+)\s.*global reads per thread: ([\d.]+)", printed))
    text = next(
        "".join(c["source"])
        for c in json.loads(path.read_text())["cells"]
        if c["cell_type"] == "markdown" and "global reads per thread down to" in "".join(c["source"])
    )
    naive, tiled = re.search(
        r"`2n = (\d+)` global reads per thread down to `2 x ceil\(n / TILE\) = (\d+)`", text
    ).groups()
    assert float(got["matmul_naive"]) == pytest.approx(float(naive)), (printed, text)
    assert float(got["matmul_tiled"]) == pytest.approx(float(tiled)), (printed, text)


@cuda.jit
def stencil_global(x, out):
    i = cuda.grid(1)
    n = x.size
    if i < n:
        left = x[i - 1] if i > 0 else numba.float32(0.0)
        right = x[i + 1] if i + 1 < n else numba.float32(0.0)
        out[i] = left + x[i] + right


def test_demos_and_checks_share_one_definition_of_per_thread():
    from helpers.exercises.executor import metrics_dict

    x = np.random.default_rng(0).random(100, dtype=np.float32)
    t = trace(stencil_global, 4, 32, x, np.zeros_like(x), outputs=("out",))  # 28 idle threads of 128
    assert t.metrics.idle_threads == 28
    assert t.metrics.global_reads[0] == pytest.approx(298 / 100)  # over the threads that work
    assert metrics_dict(t.metrics, t)["global_reads_per_thread"] == pytest.approx(t.metrics.global_reads[0])
    r = _grade(nb05.stencil, stencil_global)
    shown = float(re.search(r"global reads per thread is ([\d.]+)", r.message).group(1))
    assert 2.9 < shown <= 3.0, r.message  # the check says what the demo prints: about 3, not 2.3


def test_coalescing_is_introduced_where_it_is_first_used():
    r = _grade(nb02.vector_add, nb02.vector_add.reference)
    assert "coalesced" in r.message  # every passing kernel check from notebook 02 on reports it
    order = sorted((ROOT / "solutions").glob("*.ipynb"))
    first = next(p for p in order if re.search(r"coalesc", p.read_text(), re.I) or p.name.startswith("02_"))
    assert first.name.startswith("02_"), first
    cells = json.loads(first.read_text())["cells"]
    check = next(k for k, c in enumerate(cells) if ".check(" in "".join(c["source"]))
    before = " ".join("".join(c["source"]) for c in cells[:check] if c["cell_type"] == "markdown")
    assert "**coalesced**" in before and "**sectors**" in before and "warp" in before


# ============================================================================ accuracy

_SIMULATOR_CLAIM = re.compile(
    r"simulator\s+(?:runs|executes|steps through)\s+[^.]{0,40}?"
    r"(?:one thread after another|one thread at a time|one after another|in turn|thread by thread)",
    re.I,
)


def test_no_text_says_the_simulator_runs_one_thread_after_another():
    claims = []
    texts = [*(ROOT / "solutions").glob("*.ipynb"), *(ROOT / "notebooks").glob("*.ipynb")]
    texts += [ROOT / "README.md", *(ROOT / "docs").glob("*.md"), *(ROOT / "helpers").rglob("*.py")]
    for path in texts:
        raw = path.read_text()
        if path.suffix == ".ipynb":
            raw = "\n".join("".join(c["source"]) for c in json.loads(raw)["cells"])
        claims += [f"{path.relative_to(ROOT)}: {m.group(0)}" for m in _SIMULATOR_CLAIM.finditer(raw)]
    assert not claims, claims
    assert _SIMULATOR_CLAIM.search("The simulator runs one thread after another, so the count")  # the old text


# kernels that compute in float64 on purpose, with the reason
FLOAT64_ON_PURPOSE = {
    "escape_steps": "notebook 04's Mandelbrot: the corners arrive as Python floats, so it is float64 throughout",
    "sum_kernel": "notebook 13 adds in float64 on purpose (its comment says so) into a float64 total",
}


def _float64_literals(fn):
    """Float literals in a kernel that make float64 arithmetic: not inside float32(...), and not the
    whole value stored into an array element (a store converts once, at compile time)."""
    parents = {c: p for p in ast.walk(fn) for c in ast.iter_child_nodes(p)}
    found = []
    for node in ast.walk(fn):
        if not (isinstance(node, ast.Constant) and isinstance(node.value, float)):
            continue
        cur, parent, ok = node, parents.get(node), False
        while parent is not None:
            if isinstance(parent, ast.Call) and ast.unparse(parent.func).split(".")[-1] in ("float32", "int32"):
                ok = True
                break
            if isinstance(parent, ast.IfExp) and cur is not parent.test:
                cur, parent = parent, parents.get(parent)
                continue
            ok = isinstance(parent, ast.Assign) and all(isinstance(t, ast.Subscript) for t in parent.targets)
            break
        if not ok:
            found.append(f"line {node.lineno}: {ast.unparse(parents[node])}")
    return found


def test_the_courses_kernels_keep_float32_after_notebook_02():
    sources = []
    for path in sorted((ROOT / "solutions").glob("*.ipynb")):
        if path.name[:2] >= "03":
            sources += [(f"{path.name} cell {k}", src) for k, src in code_cells(path)]
    sources += [(str(p.relative_to(ROOT)), p.read_text()) for p in sorted((ROOT / "helpers" / "problems").glob("*.py"))]
    sources.append(("bench/kernels.py", (ROOT / "bench" / "kernels.py").read_text()))
    bad, kernels = [], 0
    for where, src in sources:
        src = "\n".join(ln for ln in src.splitlines() if not ln.lstrip().startswith(("%", "!")))
        try:
            tree = ast.parse(src)
        except SyntaxError:
            continue
        for fn in ast.walk(tree):
            if isinstance(fn, ast.FunctionDef) and any("cuda.jit" in ast.unparse(d) for d in fn.decorator_list):
                kernels += 1
                if fn.name not in FLOAT64_ON_PURPOSE:
                    bad += [f"{where} {fn.name} {f}" for f in _float64_literals(fn)]
    assert kernels > 30
    assert not bad, bad
    probe = ast.parse("def k(x, out):\n    t = 0.0\n    out[0] = x[0] if x[0] > 0 else 0.0\n    out[1] = t / 9.0\n")
    assert len(_float64_literals(probe.body[0])) == 2  # the check finds `t = 0.0` and `/ 9.0`, not the store


def _grade(ex, answer, **options):
    return ex.grade(answer, seed=3, **options)


@cuda.jit
def add_with_a_list(a, b, out):
    i = cuda.grid(1)
    if i < out.size:
        pair = [a[i], b[i]]
        out[i] = pair[0] + pair[1]


def test_notebook_02_says_what_python_a_kernel_may_contain():
    cells = json.loads((ROOT / "solutions" / "02_first_kernels.ipynb").read_text())["cells"]
    text = " ".join("".join(c["source"]) for c in cells if c["cell_type"] == "markdown")
    said = re.search(r"\*\*What a kernel may contain\.\*\*(.*?)(?:\n\n|$)", text, re.S)
    assert said, "notebook 02 should say what Python a kernel may contain"
    for word in ("lists", "dicts", "strings", "np.zeros", "math", "range", "device functions"):
        assert word in said.group(1), word
    r = _grade(nb02.vector_add, add_with_a_list)  # and the check says so when a kernel builds a list
    assert r.status == "failed" and "cannot build lists" in r.message, r.message


# ============================================================================ tracebacks
