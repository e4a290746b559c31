"""Operators on host code that drives a GPU (a PyCUDA launch, a ``cuda.core`` launch, a library call):
the launch that never happens or happens twice, grid and block swapped, the wrong copy direction, a
copy of the input launched on, another stream, an input overwritten after use, and a result in the
wrong type or back on the host.

They are the mistakes that give the right numbers by accident, or the right numbers the wrong way,
so a check that only compares outputs lets them through.
"""

from __future__ import annotations

import ast
import copy

from .kernel_ops import Operator
from .sites import Change, call_name, expr, shown, stmts, with_element

_COPIES = {"drv.InOut": ("drv.In", "drv.Out"), "drv.In": ("drv.InOut",), "drv.Out": ("drv.InOut",)}
_ARRAY_USES = ("size", "data", "shape", "dtype", "nbytes")


def _call_statement(node, ctx):
    return isinstance(node, ast.Expr) and isinstance(node.value, ast.Call)


def _removed(node, ctx):
    return [Change([], f"call removed: {shown(node)}")]


def _doubled(node, ctx):
    return [Change([node, copy.deepcopy(node)], f"called twice: {shown(node)}")]


def _grid_and_block(node, ctx):
    names = {k.arg for k in getattr(node, "keywords", ())}
    return isinstance(node, ast.Call) and {"grid", "block"} <= names


def _swap_grid_block(node, ctx):
    new = copy.deepcopy(node)
    kw = {k.arg: k for k in new.keywords}
    kw["grid"].value, kw["block"].value = kw["block"].value, kw["grid"].value
    return [Change(new, f"grid and block swapped: {shown(new)}")]


def _copy_wrapper(node, ctx):
    return isinstance(node, ast.Call) and call_name(node) in _COPIES and len(node.args) == 1


def _copy_direction(node, ctx):
    out = []
    for other in _COPIES[call_name(node)]:
        new = copy.deepcopy(node)
        new.func = expr(other)
        out.append(Change(new, f"copy direction: {shown(node)} -> {shown(new)}"))
    new = copy.deepcopy(node)
    new.args = [ast.Call(ast.Attribute(new.args[0], "copy", ast.Load()), [], [])]
    out.append(Change(new, f"a copy launched on: {shown(node)} -> {shown(new)}"))
    return out


def _stream_argument(node, ctx):
    return (
        isinstance(node, ast.Call)
        and bool(node.args)
        and isinstance(node.args[0], ast.Name)
        and node.args[0].id == "stream"
        and call_name(node).endswith("launch")
    )


def _other_stream(node, ctx):
    new = copy.deepcopy(node)
    new.args[0] = expr("core.Device().create_stream()")
    return [Change(new, f"launched on a new stream, never synchronized: {shown(new)}")]


def arrays_of(fn: ast.FunctionDef) -> list:
    """The parameters used as arrays (``x.size``, ``x.data``, ``x[...]``, wrapped for a copy, a library's keys)."""
    params = [a.arg for a in fn.args.args]
    used = set()
    for node in ast.walk(fn):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.attr in _ARRAY_USES:
            used.add(node.value.id)
        elif isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name):
            used.add(node.value.id)
        elif isinstance(node, ast.Call) and (call_name(node) in _COPIES or call_name(node).startswith("cc.")):
            used.update(a.id for a in node.args if isinstance(a, ast.Name))
            used.update(k.value.id for k in node.keywords if k.arg.startswith("d_in") and isinstance(k.value, ast.Name))
    return [p for p in params if p in used]


def _whole_function(node, ctx):
    return isinstance(node, ast.FunctionDef)


def _clobbered(node, ctx):
    """Each array parameter overwritten at the end (before the return), after the work used it."""
    out = []
    for name in arrays_of(node):
        new = copy.deepcopy(node)
        at = len(new.body) - (1 if isinstance(new.body[-1], ast.Return) else 0)
        new.body[at:at] = stmts(f"{name}[...] = 0")
        out.append(Change(new, f"input overwritten after use: {name}[...] = 0"))
    return out


def _returns_value(node, ctx):
    return isinstance(node, ast.Return) and node.value is not None


def _result_changed(node, ctx):
    parts = node.value.elts if isinstance(node.value, ast.Tuple) else [node.value]
    out = []
    for k, part in enumerate(parts):
        for text, what in (
            ("({}).astype('float64')", "result widened to float64"),
            ("({}).get()", "result copied to the host"),
        ):
            new = copy.deepcopy(node)
            new.value = with_element(new.value, k, expr(text.format(ast.unparse(part))))
            out.append(Change(new, f"{what}: {shown(part)}"))
    return out


OPERATORS = (
    Operator("call_removed", _call_statement, _removed),
    Operator("call_doubled", _call_statement, _doubled),
    Operator("grid_block_swapped", _grid_and_block, _swap_grid_block),
    Operator("copy_direction", _copy_wrapper, _copy_direction),
    Operator("other_stream", _stream_argument, _other_stream),
    Operator("input_clobbered", _whole_function, _clobbered),
    Operator("result_type", _returns_value, _result_changed),
)
