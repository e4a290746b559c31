"""Helpers shared by the notebook tests (tests/notebooks/test_kernels_trace_clean.py, test_nbNN.py).

Kernels are taken from the solution notebooks themselves (their `@cuda.jit` definitions, found
with `ast`), so a kernel edited in a notebook is re-checked without running the notebook.
"""

import ast
import json
import math
from pathlib import Path

import nbformat
import numpy as np
from numba import cuda

ROOT = Path(__file__).resolve().parents[2]


def _is_cuda_jit(dec) -> bool:
    node = dec.func if isinstance(dec, ast.Call) else dec
    return isinstance(node, ast.Attribute) and node.attr == "jit"


def notebook_kernels(name):
    """{function name: @cuda.jit object} for every kernel and device function defined in a solution notebook."""
    nb = nbformat.read(ROOT / "solutions" / name, as_version=4)
    ns = {"cuda": cuda, "np": np, "math": math}
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        tree = ast.parse(cell.source)
        defs = [
            n for n in tree.body if isinstance(n, ast.FunctionDef) and any(_is_cuda_jit(d) for d in n.decorator_list)
        ]
        if defs:
            code = compile(ast.Module(body=defs, type_ignores=[]), f"{name}:{cell.get('id', '?')}", "exec")
            exec(code, ns)  # noqa: S102 - the course's own notebooks
    return {k: v for k, v in ns.items() if k not in ("cuda", "np", "math", "__builtins__")}


rng = np.random.default_rng(0)


def f32(*shape, low=-1.0, high=1.0):
    return rng.uniform(low, high, shape).astype(np.float32)


def nan32(*shape):
    return np.full(shape, np.nan, dtype=np.float32)


def artists(fig) -> int:
    """How many things matplotlib draws for `fig`: a picture drawn cell by cell (one patch or text
    per thread) grows with the launch and takes seconds to show, one drawn as collections does not."""
    return sum(len(ax.patches) + len(ax.texts) + len(ax.collections) + len(ax.lines) for ax in fig.axes)


def code_cells(path):
    """(index, source) of each code cell of a notebook file, in order."""
    nb = json.loads(Path(path).read_text())
    for k, cell in enumerate(nb["cells"]):
        if cell["cell_type"] == "code":
            yield k, "".join(cell["source"])
