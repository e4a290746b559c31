#!/usr/bin/env python3
"""Notebook 02's kernels under numba-cuda-mlir, beside numba-cuda (issue 16 item 4).

    python bench/mlir_kernels.py                     # on a GPU host with numba-cuda-mlir installed
    python bench/mlir_kernels.py --record            # also write docs/data/mlir_nb02.json
    python bench/mlir_kernels.py --modules numba     # numba-cuda only (the CPU simulator works too)

Every function decorated with ``@cuda.jit`` in solutions/02_first_kernels.ipynb is taken from the
notebook's source as written, executed with ``cuda`` bound to ``numba.cuda`` or to
``numba_cuda_mlir.cuda`` (the migration its documentation describes: change the import line),
then launched on NumPy host arrays, on arrays from ``cuda.to_device`` and on CuPy arrays. Each
launch's output is compared with NumPy. Prints a Markdown table; ``--record`` keeps the JSON the
notebook's landscape section and tests/bench/test_benchmarks.py read.
"""

from __future__ import annotations

import argparse
import ast
import importlib
import importlib.metadata
import json
import platform
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOK = ROOT / "solutions" / "02_first_kernels.ipynb"
RECORD = ROOT / "docs" / "data" / "mlir_nb02.json"
N = 1_000_003  # not a multiple of any block size: the guard matters


def kernel_sources(path: Path = NOTEBOOK) -> dict[str, str]:
    """name -> source of every function decorated with @cuda.jit (device functions too)."""
    out = {}
    for cell in json.loads(path.read_text())["cells"]:
        if cell["cell_type"] != "code":
            continue
        src = "".join(cell["source"])
        try:
            tree = ast.parse("\n".join(ln for ln in src.splitlines() if not ln.lstrip().startswith(("%", "!"))))
        except SyntaxError:
            continue
        for node in tree.body:
            if isinstance(node, ast.FunctionDef) and any("cuda.jit" in ast.unparse(d) for d in node.decorator_list):
                out[node.name] = ast.unparse(node)
    return out


def build(cuda, sources: dict[str, str]) -> dict:
    """The kernels, compiled lazily by ``cuda`` (device functions first: kernels call them)."""
    ns = {"cuda": cuda, "np": np}
    for name, src in sorted(sources.items(), key=lambda kv: "device=True" not in kv[1]):
        exec(compile(src, f"<notebook 02: {name}>", "exec"), ns)  # noqa: S102 - the course's own source
    return {name: ns[name] for name in sources}


def cases(n: int, rng) -> list[dict]:
    """(kernel, inputs, the written argument, launch, expected) for the kernels that compute something."""
    x = rng.random(n, dtype=np.float32)
    y = rng.random(n, dtype=np.float32)
    data = rng.integers(0, 16, n).astype(np.int32)
    t = 128
    b = (n + t - 1) // t
    zeros = np.zeros(n, np.float32)
    return [
        {"kernel": "add_kernel", "args": [x, y, zeros], "out": 2, "launch": (b, t), "want": x + y},
        {"kernel": "vector_add", "args": [x, y, zeros], "out": 2, "launch": (b, t), "want": x + y},
        {"kernel": "add_stride", "args": [x, y, zeros], "out": 2, "launch": (64, t), "want": x + y},
        {"kernel": "square_stride", "args": [x, zeros], "out": 1, "launch": (64, t), "want": x * x},
        {
            "kernel": "saxpy",
            "args": [np.float32(2.5), x, y, zeros],
            "out": 3,
            "launch": (b, t),
            "want": np.float32(2.5) * x + y,
        },
        {"kernel": "scale", "args": [np.float32(2.0), x, zeros], "out": 2, "launch": (b, t), "want": 2 * x},
        {
            "kernel": "blend",
            "args": [x, y, np.float32(0.25), zeros],
            "out": 3,
            "launch": (b, t),
            "want": x + np.float32(0.25) * (y - x),
        },
        {
            "kernel": "histogram",
            "args": [data, np.zeros(16, np.int32)],
            "out": 1,
            "launch": (b, t),
            "want": np.bincount(data, minlength=16).astype(np.int32),
        },
        {
            "kernel": "whoami",
            "args": [np.full(20, -1, np.int32), np.full(20, -1, np.int32)],
            "out": 0,
            "launch": (3, 8),
            "want": (np.arange(20) // 8).astype(np.int32),
        },
    ]


def _to(kind, cuda, a):
    if not isinstance(a, np.ndarray):
        return a
    a = a.copy()
    if kind == "numpy":
        return a
    if kind == "device":
        return cuda.to_device(a)
    import cupy

    return cupy.asarray(a)


def _back(kind, a):
    if kind == "numpy":
        return a
    if kind == "device":
        return a.copy_to_host()
    import cupy

    return cupy.asnumpy(a)


def run_case(cuda, kernels, case, kind) -> dict:
    row = {"kernel": case["kernel"], "arrays": kind}
    try:
        args = [_to(kind, cuda, a) for a in case["args"]]
        t0 = time.perf_counter()
        kernels[case["kernel"]][case["launch"]](*args)
        cuda.synchronize()
        row["first_launch_s"] = round(time.perf_counter() - t0, 3)
        got = _back(kind, args[case["out"]])
        ok = np.allclose(got, case["want"], rtol=1e-6, atol=1e-6)
        row["result"] = "correct" if ok else "WRONG"
    except Exception as e:  # the point is to record what failed and how
        row["result"] = "error"
        row["error"] = f"{type(e).__name__}: {str(e).splitlines()[0][:300] if str(e) else ''}"
    return row


def module_for(name: str):
    if name == "numba":
        return importlib.import_module("numba.cuda"), importlib.metadata.version("numba-cuda")
    cuda = importlib.import_module("numba_cuda_mlir.cuda")  # `from numba_cuda_mlir import cuda`
    return cuda, importlib.import_module("numba_cuda_mlir").__version__


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--modules", default="numba,mlir")
    p.add_argument("--arrays", default="numpy,device,cupy")
    p.add_argument("--n", type=int, default=N)
    p.add_argument("--record", action="store_true")
    a = p.parse_args(argv)
    sources = kernel_sources()
    rows, versions = [], {}
    for name in a.modules.split(","):
        try:
            cuda, version = module_for(name)
        except Exception as e:  # not installed, or does not import: said, not hidden
            rows.append({"module": name, "kernel": "*", "arrays": "*", "result": "error", "error": f"import: {e}"})
            continue
        versions[name] = version
        kernels = build(cuda, sources)
        for kind in a.arrays.split(","):
            for case in cases(a.n, np.random.default_rng(0)):
                rows.append({"module": name, **run_case(cuda, kernels, case, kind)})
    print("| module | kernel | arrays | result | first launch (s) |\n|---|---|---|---|---|")
    for r in rows:
        print(
            f"| {r['module']} | {r['kernel']} | {r['arrays']} | {r['result']}"
            f"{' (' + r['error'] + ')' if 'error' in r else ''} | {r.get('first_launch_s', '')} |"
        )
    if a.record:
        gpu = None
        try:
            gpu = module_for("numba")[0].get_current_device().name
            gpu = gpu.decode() if isinstance(gpu, bytes) else str(gpu)
        except Exception:  # the simulator has no device name worth keeping
            pass
        doc = {
            "date": time.strftime("%Y-%m-%d"),
            "gpu": gpu,
            "python": platform.python_version(),
            "versions": versions,
            "n": a.n,
            "kernels": sorted(sources),
            "rows": rows,
        }
        RECORD.write_text(json.dumps(doc, indent=1) + "\n")
        print(f"wrote {RECORD.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
