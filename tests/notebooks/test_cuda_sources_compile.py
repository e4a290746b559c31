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
from support.cuda_sources import FOUND, GROUPS, find_sources, unique_groups


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
    groups = {g[0].where.split(":")[0]: g for g in unique_groups(found)}
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
        check_group(unique_groups(found)[0])
