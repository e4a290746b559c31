"""Operators on a ``@cuda.jit`` kernel's body: the mistakes a learner makes in a kernel.

Each operator names one family of wrong answer (issue: guards, indices, launch literals,
barriers, atomics, privatization, serial work, chunks, aliasing, dtypes) and is applied to one
site at a time by ``sites.mutate``.
"""

from __future__ import annotations

import ast
import copy
from dataclasses import dataclass
from typing import Callable

from .sites import Change, call_name, expr, shown, stmts, with_element

_FLIP = {ast.Lt: ast.LtE, ast.LtE: ast.Lt, ast.Gt: ast.GtE, ast.GtE: ast.Gt}
_NEGATE = {ast.Lt: ast.GtE, ast.LtE: ast.Gt, ast.Gt: ast.LtE, ast.GtE: ast.Lt, ast.Eq: ast.NotEq, ast.NotEq: ast.Eq}
_SYMBOL = {ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">=", ast.Eq: "==", ast.NotEq: "!="}
_GEOMETRY = ("cuda.threadIdx", "cuda.blockIdx", "cuda.blockDim", "cuda.gridDim")
_TYPES = {"float32": "float64", "float64": "float32", "int32": "int64", "int64": "int32"}


@dataclass(frozen=True)
class Operator:
    name: str
    match: Callable
    variants: Callable


def _op_changes(node, table, what):
    out = []
    for k, op in enumerate(node.ops):
        if type(op) in table:
            new = copy.deepcopy(node)
            new.ops[k] = table[type(op)]()
            out.append(Change(new, f"{what} {shown(node)} -> {shown(new)}"))
    return out


def _is_compare(node, ctx):
    return isinstance(node, ast.Compare)


def _guard(node, ctx):
    return isinstance(node, ast.If) and not node.orelse and isinstance(node.test, (ast.Compare, ast.BoolOp))


def _guard_removed(node, ctx):
    if len(node.body) == 1 and isinstance(node.body[0], (ast.Return, ast.Continue, ast.Break)):
        return [Change([], f"guard removed: if {shown(node.test)}")]  # an early exit: without its guard, no exit
    return [Change(node.body, f"guard removed: if {shown(node.test)}")]


def _guard_inverted(node, ctx):
    new = copy.deepcopy(node)
    new.test = ast.UnaryOp(ast.Not(), new.test)
    return [Change(new, f"guard inverted: if {shown(new.test)}")]


def _ifexp(node, ctx):
    return isinstance(node, ast.IfExp) and isinstance(node.test, (ast.Compare, ast.BoolOp))


def _ifexp_removed(node, ctx):
    return [Change(node.body, f"guard removed: {shown(node)} -> {shown(node.body)}")]


def _axis(node, ctx):
    return isinstance(node, ast.Attribute) and node.attr in ("x", "y") and call_name(node.value) in _GEOMETRY


def _swap_axis(node, ctx):
    new = copy.deepcopy(node)
    new.attr = "y" if node.attr == "x" else "x"
    return [Change(new, f"axes swapped: {shown(node)} -> {shown(new)}")]


def _pair_index(node, ctx):
    return isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Tuple) and len(node.slice.elts) == 2


def _swap_pair(node, ctx):
    new = copy.deepcopy(node)
    new.slice.elts.reverse()
    return [Change(new, f"index axes swapped: {shown(node)} -> {shown(new)}")]


def _grid2_unpack(node, ctx):
    return (
        isinstance(node, ast.Assign)
        and isinstance(node.targets[0], ast.Tuple)
        and len(node.targets[0].elts) == 2
        and call_name(node.value) in ("cuda.grid", "cuda.gridsize")
    )


def _swap_unpack(node, ctx):
    new = copy.deepcopy(node)
    new.targets[0].elts.reverse()
    return [Change(new, f"axes swapped: {shown(node)} -> {shown(new)}")]


def _array_index(node, ctx):
    if not isinstance(node, ast.Subscript) or not isinstance(node.value, ast.Name):
        return False
    return node.value.id in ctx.inputs + ctx.outputs or node.value.id in ctx.arrays


def _index_shift(node, ctx):
    out = []
    elts = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
    for k in range(len(elts)):
        if isinstance(elts[k], ast.Slice):  # x[i:] or A[i, :]: a slice is not an index to shift
            continue
        for sign in ("+", "-"):
            new = copy.deepcopy(node)
            new.slice = with_element(new.slice, k, expr(f"({shown(elts[k])}) {sign} 1"))
            out.append(Change(new, f"index {sign}1: {shown(node)} -> {shown(new)}"))
    return out


def _launch_literal(node, ctx):
    name = call_name(node)
    if isinstance(node, ast.Attribute) and call_name(node.value) in ("cuda.blockDim", "cuda.gridDim"):
        return node.attr in ("x", "y")
    return (
        isinstance(node, ast.Call)
        and name in ("cuda.gridsize",)
        and len(node.args) == 1
        and isinstance(node.args[0], ast.Constant)
        and node.args[0].value in (1, 2, 3)
    )


def _to_literal(node, ctx):
    axis = {"x": 0, "y": 1, "z": 2}
    if isinstance(node, ast.Call) and node.args[0].value > 1:  # cuda.gridsize(2): a tuple, one stride per axis
        value = tuple(int(ctx.grid[d] * ctx.block[d]) for d in range(node.args[0].value))
        new = ast.Tuple([ast.Constant(v) for v in value], ast.Load())
        return [Change(new, f"literal from the check's launch: {shown(node)} -> {shown(new)}")]
    if isinstance(node, ast.Call):
        value = ctx.grid[0] * ctx.block[0]
    elif call_name(node.value) == "cuda.blockDim":
        value = ctx.block[axis[node.attr]]
    else:
        value = ctx.grid[axis[node.attr]]
    return [Change(ast.Constant(int(value)), f"literal from the check's launch: {shown(node)} -> {value}")]


def _size_read(node, ctx):
    if isinstance(node, ast.Attribute) and node.attr == "size" and isinstance(node.value, ast.Name):
        return node.value.id in ctx.inputs + ctx.outputs
    if isinstance(node, ast.Call) and call_name(node) == "len" and len(node.args) == 1:
        return isinstance(node.args[0], ast.Name) and node.args[0].id in ctx.inputs + ctx.outputs
    return False


def _size_literal(node, ctx):
    return [Change(ast.Constant(int(ctx.size)), f"literal from the check's first size: {shown(node)} -> {ctx.size}")]


def _barrier(node, ctx):
    """A barrier statement: cuda.syncthreads(), cuda.syncwarp(...) or the grid's cuda.cg.this_grid().sync()."""
    if not (isinstance(node, ast.Expr) and isinstance(node.value, ast.Call)):
        return False
    f = node.value.func
    grid = isinstance(f, ast.Attribute) and f.attr == "sync" and call_name(f.value) == "cuda.cg.this_grid"
    return grid or call_name(node.value) in ("cuda.syncthreads", "cuda.syncwarp")


def _barrier_changes(node, ctx):
    inside = ast.If(test=expr("cuda.threadIdx.x == 0"), body=[copy.deepcopy(node)], orelse=[])
    return [Change([], "barrier removed"), Change(inside, "barrier moved into `if cuda.threadIdx.x == 0:`")]


def _loop_with_barrier(node, ctx):
    return isinstance(node, (ast.For, ast.While)) and any(_barrier(s, ctx) for s in node.body)


def _barrier_out_of_loop(node, ctx):
    new = copy.deepcopy(node)
    moved = next(copy.deepcopy(s) for s in node.body if _barrier(s, ctx))  # the loop's own kind of barrier
    new.body = [s for s in new.body if not _barrier(s, ctx)] or [ast.Pass()]
    return [Change([new, moved], "barrier moved out of the loop, after it")]


def _atomic(node, ctx):
    return isinstance(node, ast.Expr) and call_name(node.value) in (
        "cuda.atomic.add",
        "cuda.atomic.max",
        "cuda.atomic.min",
    )


def _atomic_plain(node, ctx):
    a, k, v = (shown(x) for x in node.value.args[:3])
    kind = call_name(node.value).rsplit(".", 1)[-1]
    text = f"{a}[{k}] += {v}" if kind == "add" else f"{a}[{k}] = {kind}({a}[{k}], {v})"
    return [Change(stmts(text), f"atomic made plain: {shown(node)} -> {text}")]


def _shared_atomic(node, ctx):
    if not _atomic(node, ctx) or not isinstance(node.value.args[0], ast.Name):
        return False
    return node.value.args[0].id in ctx.arrays and bool(ctx.outputs)


def _to_global(node, ctx):
    new = copy.deepcopy(node)
    new.value.args[0] = ast.Name(ctx.outputs[-1], ast.Load())
    return [Change(new, f"privatization dropped: {shown(node)} -> {shown(new)}")]


class _Rename(ast.NodeTransformer):
    """Replace geometry reads (``cuda.threadIdx.x``, ``cuda.grid(1)``...) by expressions."""

    def __init__(self, table):
        self.table = table

    def visit_Attribute(self, node):
        name = call_name(node)
        return expr(self.table[name]) if name in self.table else self.generic_visit(node)

    def visit_Call(self, node):
        name = f"{call_name(node)}({shown(node.args[0]) if node.args else ''})"
        return expr(self.table[name]) if name in self.table else self.generic_visit(node)


def _declares(stmt):
    return isinstance(stmt, ast.Assign) and call_name(stmt.value) in ("cuda.shared.array", "cuda.local.array")


def _one_d(node, ctx):
    if not isinstance(node, ast.FunctionDef):
        return False
    text = ast.unparse(node)
    return ".y" not in text and "grid(2)" not in text and ("threadIdx.x" in text or "grid(1)" in text)


def _serial(node, ctx):
    """The block's work done by thread 0 in a loop; and the whole grid's work done by one thread."""
    out = []
    for who, loop, table in (
        (
            "block",
            "_t in range(cuda.blockDim.x)",
            {"cuda.threadIdx.x": "_t", "cuda.grid(1)": "(cuda.blockIdx.x * cuda.blockDim.x + _t)"},
        ),
        (
            "grid",
            "_g in range(cuda.gridsize(1))",
            {
                "cuda.threadIdx.x": "(_g % cuda.blockDim.x)",
                "cuda.blockIdx.x": "(_g // cuda.blockDim.x)",
                "cuda.grid(1)": "_g",
                "cuda.gridsize(1)": "(cuda.gridDim.x * cuda.blockDim.x)",
            },
        ),
    ):
        new = copy.deepcopy(node)
        head = [s for s in new.body if _declares(s)]
        body = [_Rename(table).visit(s) for s in new.body if not _declares(s) and not _barrier(s, ctx)]
        guard = "cuda.threadIdx.x == 0" if who == "block" else "cuda.grid(1) == 0"
        wrapper = stmts(f"if {guard}:\n    for {loop}:\n        pass")[0]
        wrapper.body[0].body = [_strip_barriers(s) for s in body] or [ast.Pass()]
        new.body = head + [wrapper]
        out.append(Change(new, f"the {who}'s work serialized in thread 0"))
    return out


def _strip_barriers(stmt):
    class _Drop(ast.NodeTransformer):
        def visit_Expr(self, node):
            return None if _barrier(node, None) else node

    return _Drop().visit(stmt)


def _strided_loop(node, ctx):
    return (
        isinstance(node, ast.For)
        and call_name(node.iter) == "range"
        and len(node.iter.args) == 3
        and isinstance(node.target, ast.Name)
    )


def _chunks(node, ctx):
    start, stop, step = (shown(a) for a in node.iter.args)
    new = copy.deepcopy(node)
    chunk = f"((({stop}) + ({step}) - 1) // ({step}))"
    new.iter = expr(f"range(({start}) * {chunk}, min(({start}) * {chunk} + {chunk}, {stop}))")
    return [Change(new, f"contiguous chunks per thread instead of a stride: {shown(node.iter)} -> {shown(new.iter)}")]


def _output_store(node, ctx):
    return (
        isinstance(node, ast.Assign)
        and len(node.targets) == 1
        and isinstance(node.targets[0], ast.Subscript)
        and isinstance(node.targets[0].value, ast.Name)
        and node.targets[0].value.id in ctx.outputs
        and bool(ctx.inputs)
    )


def _alias(node, ctx):
    target = node.targets[0]
    scratch = copy.deepcopy(target)
    scratch.value = ast.Name(ctx.inputs[0], ast.Store())
    read = copy.deepcopy(scratch)
    read.ctx = ast.Load()
    text = f"{shown(scratch)} = {shown(node.value)}\n{shown(target)} = {shown(read)}"
    return [Change(stmts(text), f"the result written over the input {ctx.inputs[0]} first")]


def _type_name(node, ctx):
    return (isinstance(node, ast.Attribute) and node.attr in _TYPES) or (
        isinstance(node, ast.Name) and node.id in _TYPES
    )


def _retype(node, ctx):
    new = copy.deepcopy(node)
    if isinstance(new, ast.Attribute):
        new.attr = _TYPES[node.attr]
    else:
        new.id = _TYPES[node.id]
    return [Change(new, f"dtype changed: {shown(node)} -> {shown(new)}")]


OPERATORS = (
    Operator("comparison_boundary", _is_compare, lambda n, c: _op_changes(n, _FLIP, "boundary")),
    Operator("comparison_negated", _is_compare, lambda n, c: _op_changes(n, _NEGATE, "negated")),
    Operator("guard_removed", _guard, _guard_removed),
    Operator("guard_removed", _ifexp, _ifexp_removed),
    Operator("guard_inverted", _guard, _guard_inverted),
    Operator("axes_swapped", _axis, _swap_axis),
    Operator("axes_swapped", _pair_index, _swap_pair),
    Operator("axes_swapped", _grid2_unpack, _swap_unpack),
    Operator("index_shifted", _array_index, _index_shift),
    Operator("launch_literal", _launch_literal, _to_literal),
    Operator("size_literal", _size_read, _size_literal),
    Operator("barrier_misplaced", _barrier, _barrier_changes),
    Operator("barrier_misplaced", _loop_with_barrier, _barrier_out_of_loop),
    Operator("atomic_plain", _atomic, _atomic_plain),
    Operator("privatization_dropped", _shared_atomic, _to_global),
    Operator("serialized", _one_d, _serial),
    Operator("chunks_not_stride", _strided_loop, _chunks),
    Operator("output_aliased", _output_store, _alias),
    Operator("dtype_changed", _type_name, _retype),
)
