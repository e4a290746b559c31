"""Copies of the learner's kernel and device functions whose globals see the fake `cuda`.

The learner's own globals are never touched; the same code object runs with new globals,
so it does not matter whether the simulator is on or a real dispatcher was passed.
"""

import types as pytypes

from .. import _numba
from .fakecuda import FakeNumba


def _code_objects(code):
    yield code
    for const in code.co_consts:
        if isinstance(const, pytypes.CodeType):
            yield from _code_objects(const)


class Instrumenter:
    """Makes traced copies of the kernel and, recursively, of the device functions it calls."""

    def __init__(self, fake_cuda):
        self.fake_cuda = fake_cuda
        self.fake_numba = None
        self.functions = {}  # id(original function) -> traced copy
        self.globals = {}  # id(original globals dict) -> (original, copy)
        self.codes = set()  # learner code objects, to find the learner's line in tracebacks
        self.uses_barrier = False

    def function(self, func):
        key = id(func)
        if key in self.functions:
            return self.functions[key]
        orig_globals = func.__globals__
        entry = self.globals.get(id(orig_globals))
        if entry is None:
            entry = self.globals[id(orig_globals)] = (orig_globals, dict(orig_globals))
        new_globals = entry[1]
        closure = func.__closure__
        if closure:
            closure = tuple(pytypes.CellType(self._replacement(_cell_value(c))) for c in closure)
        new = pytypes.FunctionType(func.__code__, new_globals, func.__name__, func.__defaults__, closure)
        new.__kwdefaults__ = func.__kwdefaults__
        self.functions[key] = new  # before recursing: device functions may be recursive
        names = set()
        for code in _code_objects(func.__code__):
            self.codes.add(code)
            names.update(code.co_names)
        if any(n.startswith("syncthreads") for n in names):
            self.uses_barrier = True
        for name in names:
            if name in orig_globals:
                new_globals[name] = self._replacement(orig_globals[name])
        return new

    def _replacement(self, value):
        if _numba.is_cuda_module(value):
            return self.fake_cuda
        if _numba.is_numba_module(value):
            if self.fake_numba is None:
                self.fake_numba = FakeNumba(value, self.fake_cuda)
            return self.fake_numba
        if _numba.is_cuda_function(value):
            return self.function(_numba.python_function(value))
        return value


def _cell_value(cell):
    try:
        return cell.cell_contents
    except ValueError:  # empty cell
        return None
