"""helpers/compile_check/ptx_options.py (and ptx_child.py, the script it runs): the PTX of one kernel under
several @cuda.jit options, made by Numba's real compiler in a child process, as notebook 19 shows it."""

import re

import numpy as np
import pytest
from numba import cuda

from helpers.compile_check import ptx_options
from helpers.errors import CourseError


@cuda.jit
def _scale(x, out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = x[i] * np.float32(2.0)


def _instructions(ptx):
    lines = (ln.strip() for ln in ptx.splitlines())
    # opcodes only: the kernel's mangled name (in every parameter load) carries a hash of its options
    return [ln.split()[0] for ln in lines if ln.endswith(";") and not ln.startswith((".", "//", "{", "}"))]


@pytest.fixture(scope="module")
def texts():
    x = np.zeros(8, np.float32)
    options = {"plain": {}, "lineinfo": {"lineinfo": True}, "debug": {"debug": True, "opt": False}}
    return ptx_options.variants(_scale, (x, x), options)


def test_lineinfo_adds_line_marks_to_the_same_instructions(texts):
    assert ".loc" not in texts["plain"]
    marks = re.findall(r"^\s*\.loc\s+\d+\s+(\d+)", texts["lineinfo"], re.M)
    first = _scale.py_func.__code__.co_firstlineno
    lines = {int(m) for m in marks} - {0}  # line 0: code the compiler made that no source line asked for
    assert lines and lines <= set(range(first, first + 5))  # the kernel's own lines
    assert _instructions(texts["lineinfo"]) == _instructions(texts["plain"])


def test_debug_without_optimisation_is_many_more_instructions(texts):
    assert ".loc" in texts["debug"]
    assert len(_instructions(texts["debug"])) > 3 * len(_instructions(texts["plain"]))


def test_an_option_compile_ptx_does_not_take_is_one_sentence():
    x = np.zeros(8, np.float32)
    with pytest.raises(CourseError, match="compile_ptx takes"):
        ptx_options.variants(_scale, (x, x), {"bad": {"boundscheck": True}})
