"""Copies of the learner's kernel and device functions whose globals see the fake `cuda`.

The learner's own globals are never touched; the same code object runs with new globals,
so it does not matter whether the simulator is on or a real dispatcher was passed. Two things
change on the way: `math` becomes `FakeMath`, and a function that divides is recompiled from its
source with `/ // %` turned into `gpu_div` calls, so that division by zero gives inf/nan/0 as on a
GPU instead of a Python exception. Module-level NumPy arrays the kernel reads become read-only
traced arrays, so `PRICES[i - 1]` is bounds-checked like a parameter.
"""

import ast
import inspect
import math
import textwrap
import types as pytypes

import numpy as np

from .. import _numba
from ..accesses import ArrayInfo
from .arrays import TracedArray
from .fakecuda import FakeNumba
from .gpumath import FAKE_MATH, gpu_div
from .lanes import lanes_max, lanes_min

WARP_CALLS = frozenset(  # the calls where a warp's lanes meet (helpers.tracer.vector runs none of them as lanes)
    {
        "syncwarp",
        "shfl_sync",
        "shfl_up_sync",
        "shfl_down_sync",
        "shfl_xor_sync",
        "all_sync",
        "any_sync",
        "eq_sync",
        "ballot_sync",
        "match_any_sync",
        "match_all_sync",
        "activemask",
        "cas",  # the lanes of a warp meet at a compare-and-swap (helpers.tracer.fakecuda._FakeAtomic)
        "compare_and_swap",
    }
)
_DIV = "_tracer_gpu_div_"
_OPS = {ast.Div: "/", ast.FloorDiv: "//", ast.Mod: "%"}


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
        self.captured = {}  # id(global NumPy array) -> read-only TracedArray
        self.codes = set()  # learner code objects, to find the learner's line in tracebacks
        self.uses_barrier = False  # syncthreads, a warp call or a grid sync: threads run as greenlets
        self.uses_grid_sync = False  # cuda.cg.this_grid(): every block runs side by side

    def function(self, func):
        key = id(func)
        if key in self.functions:
            return self.functions[key]
        orig_globals = func.__globals__
        entry = self.globals.get(id(orig_globals))
        if entry is None:
            entry = self.globals[id(orig_globals)] = (orig_globals, dict(orig_globals))
        new_globals = entry[1]
        code = _divisions_rewritten(func) or func.__code__
        if code is not func.__code__:
            new_globals[_DIV] = gpu_div
        closure = func.__closure__
        if closure:
            cells = dict(zip(func.__code__.co_freevars, closure))
            closure = tuple(pytypes.CellType(self._replacement(_cell_value(cells[n]))) for n in code.co_freevars)
        new = pytypes.FunctionType(code, new_globals, func.__name__, func.__defaults__, closure)
        new.__kwdefaults__ = func.__kwdefaults__
        self.functions[key] = new  # before recursing: device functions may be recursive
        names = set()
        for c in (*_code_objects(func.__code__), *_code_objects(code)):
            self.codes.add(c)
            names.update(c.co_names)
        if any(n.startswith("syncthreads") for n in names) or names & WARP_CALLS or "this_grid" in names:
            self.uses_barrier = True
        if "this_grid" in names:
            self.uses_grid_sync = True
        for name in names:
            if name in orig_globals:
                new_globals[name] = self._replacement(orig_globals[name], name)
        for name, picks in (("min", lanes_min), ("max", lanes_max)):  # the builtins, lane by lane for NumPy lanes
            if name in names and name not in orig_globals:
                new_globals[name] = picks
        return new

    def _replacement(self, value, name=None):
        if _numba.is_cuda_module(value):
            return self.fake_cuda
        if _numba.is_numba_module(value):
            if self.fake_numba is None:
                self.fake_numba = FakeNumba(value, self.fake_cuda)
            return self.fake_numba
        if value is math:
            return FAKE_MATH
        if _numba.is_cuda_function(value):
            return self.function(_numba.python_function(value))
        py = _numba.cpu_jit_function(value)
        if py is not None:
            return self.function(py)
        if isinstance(value, np.ndarray) and value.ndim > 0 and name is not None:
            return self._captured(value, name)
        return value

    def _captured(self, value, name):
        """A global array the kernel reads: a GPU bakes it in as a constant, so read-only and traced."""
        proxy = self.captured.get(id(value))
        if proxy is None:
            rec = self.fake_cuda._rec
            aid = rec.add_array(ArrayInfo(name, "global", value.shape, value.dtype, value.strides, None))
            proxy = self.captured[id(value)] = TracedArray(value, aid, rec, readonly=True)
            self.fake_cuda.const.bake(name, proxy, value.nbytes)
        return proxy


def _cell_value(cell):
    try:
        return cell.cell_contents
    except ValueError:  # empty cell
        return None


class _Divisions(ast.NodeTransformer):
    def __init__(self):
        self.changed = False

    def visit_BinOp(self, node):
        self.generic_visit(node)
        op = _OPS.get(type(node.op))
        if op is None:
            return node
        self.changed = True
        call = ast.Call(ast.Name(_DIV, ast.Load()), [node.left, node.right, ast.Constant(op)], [])
        return ast.copy_location(call, node)

    def visit_AugAssign(self, node):
        self.generic_visit(node)
        op = _OPS.get(type(node.op))
        if op is None:
            return node
        self.changed = True
        load = _as_load(node.target)
        call = ast.Call(ast.Name(_DIV, ast.Load()), [load, node.value, ast.Constant(op)], [])
        return ast.copy_location(ast.Assign([node.target], ast.copy_location(call, node)), node)


def _as_load(target):
    target = ast.parse(ast.unparse(target), mode="eval").body
    return target


def _divisions_rewritten(func):
    """The function's code with `/ // %` as gpu_div calls, compiled at the same file and lines;
    None when it does not divide or its source cannot be had (it then runs as written)."""
    try:
        src = textwrap.dedent(inspect.getsource(func))
        tree = ast.parse(src)
    except (OSError, TypeError, SyntaxError, IndentationError):
        return None
    fn = tree.body[0] if tree.body else None
    if not isinstance(fn, ast.FunctionDef) or fn.name != func.__name__:
        return None
    fn.decorator_list = []
    rewriter = _Divisions()
    rewriter.visit(fn)
    if not rewriter.changed:
        return None
    freevars = func.__code__.co_freevars
    first = func.__code__.co_firstlineno
    body = [fn]
    if freevars:  # an enclosing function gives the copy the same free variables
        outer = ast.FunctionDef(
            "_tracer_outer_",
            ast.arguments([], [ast.arg(v) for v in freevars], None, [], [], None, []),
            [fn, ast.Return(ast.Name(fn.name, ast.Load()))],
            [],
            None,
        )
        body = [outer]
    module = ast.Module(body, [])
    ast.fix_missing_locations(module)
    ast.increment_lineno(module, first - 1)
    try:
        compiled = compile(module, func.__code__.co_filename, "exec")
    except (SyntaxError, ValueError):
        return None
    for c in _code_objects(compiled):
        if c.co_name == func.__name__ and c is not compiled:
            if set(c.co_freevars) - set(freevars):
                return None
            return c
    return None
