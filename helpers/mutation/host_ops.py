"""Operators on host code (a plain function, a launch function, a pipeline around a kernel):
arithmetic and rounding slips, off-by-one constants, where results live, and the target or
parallelism an exercise asks for.
"""

from __future__ import annotations

import ast
import copy

from .kernel_ops import OPERATORS as KERNEL_OPERATORS
from .kernel_ops import Operator
from .sites import Change, call_name, expr, shown

_ARITH = {
    ast.Add: (ast.Sub,),
    ast.Sub: (ast.Add,),
    ast.Mult: (ast.FloorDiv, ast.Add),
    ast.Div: (ast.FloorDiv, ast.Mult),
    ast.FloorDiv: (ast.Div, ast.Mult),
    ast.Mod: (ast.FloorDiv,),
}


def _binop(node, ctx):
    return isinstance(node, ast.BinOp) and type(node.op) in _ARITH


def _arith(node, ctx):
    out = []
    for op in _ARITH[type(node.op)]:
        new = copy.deepcopy(node)
        new.op = op()
        out.append(Change(new, f"operator: {shown(node)} -> {shown(new)}"))
    return out


def _ceil_division(node, ctx):
    """(a + b - 1) // b, -(-a // b), math.ceil(a / b): the rounding up of grid arithmetic."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.FloorDiv):
        text = shown(node.left)
        return text.endswith("- 1") or text.startswith("-")
    return isinstance(node, ast.Call) and call_name(node) in ("math.ceil", "np.ceil", "ceil")


def _floor(node, ctx):
    if isinstance(node, ast.Call):
        inner = node.args[0]
        if isinstance(inner, ast.BinOp) and isinstance(inner.op, ast.Div):
            new = ast.BinOp(inner.left, ast.FloorDiv(), inner.right)
            return [Change(new, f"floor for ceiling: {shown(node)} -> {shown(new)}")]
        return []
    divisor = node.right
    left = node.left
    if isinstance(left, ast.UnaryOp):  # -(-a // b)
        return []
    if (
        isinstance(left, ast.BinOp)
        and isinstance(left.op, ast.Sub)
        and isinstance(left.left, ast.BinOp)
        and isinstance(left.left.op, ast.Add)
        and ast.dump(left.left.right) == ast.dump(divisor)
    ):  # (a + b - 1) // b, and not (a * b - 1) // b, which is no rounding up
        a = left.left.left
    else:
        return []
    new = ast.BinOp(copy.deepcopy(a), ast.FloorDiv(), copy.deepcopy(divisor))
    return [Change(new, f"floor for ceiling: {shown(node)} -> {shown(new)}")]


def _negated_ceil(node, ctx):
    return (
        isinstance(node, ast.UnaryOp)
        and isinstance(node.op, ast.USub)
        and isinstance(node.operand, ast.BinOp)
        and isinstance(node.operand.op, ast.FloorDiv)
        and isinstance(node.operand.left, ast.UnaryOp)
        and isinstance(node.operand.left.op, ast.USub)
    )


def _floor_negated(node, ctx):
    new = ast.BinOp(copy.deepcopy(node.operand.left.operand), ast.FloorDiv(), copy.deepcopy(node.operand.right))
    return [Change(new, f"floor for ceiling: {shown(node)} -> {shown(new)}")]


def _number(node, ctx):
    return isinstance(node, ast.Constant) and type(node.value) in (int, float) and not isinstance(node.value, bool)


def _plus_minus_one(node, ctx):
    return [Change(ast.Constant(node.value + d), f"constant {node.value} -> {node.value + d}") for d in (1, -1)]


def _minmax(node, ctx):
    return isinstance(node, ast.Call) and call_name(node) in ("min", "max", "np.minimum", "np.maximum")


def _swap_minmax(node, ctx):
    other = {"min": "max", "max": "min", "np.minimum": "np.maximum", "np.maximum": "np.minimum"}[call_name(node)]
    new = copy.deepcopy(node)
    new.func = expr(other)
    return [Change(new, f"{call_name(node)} -> {other}")]


def _device_copy(node, ctx):
    return isinstance(node, ast.Call) and call_name(node) in (
        "cuda.to_device",
        "cuda.device_array",
        "cuda.device_array_like",
    )


def _host_instead(node, ctx):
    name = call_name(node)
    if name == "cuda.to_device":
        new = copy.deepcopy(node.args[0])
        return [Change(new, f"a host array where a device array is asked: {shown(node)} -> {shown(new)}")]
    new = copy.deepcopy(node)
    new.func = expr("np.empty" if name == "cuda.device_array" else "np.empty_like")
    return [Change(new, f"a host array where a device array is asked: {shown(node)} -> {shown(new)}")]


def _returned_name(node, ctx):
    return isinstance(node, ast.Return) and isinstance(node.value, ast.Name)


def _to_host(node, ctx):
    new = copy.deepcopy(node)
    new.value = expr(f"{node.value.id}.copy_to_host()")
    return [Change(new, f"the result returned on the host: {shown(node)} -> {shown(new)}")]


def _keyword(node, ctx):
    return isinstance(node, ast.Call) and any(k.arg in ("target", "parallel", "fastmath") for k in node.keywords)


def _drop_keyword(node, ctx):
    out = []
    for k in node.keywords:
        if k.arg in ("target", "parallel"):
            new = copy.deepcopy(node)
            new.keywords = [x for x in new.keywords if x.arg != k.arg]
            out.append(Change(new, f"{k.arg}= dropped: {shown(node)} -> {shown(new)}"))
    return out


def _prange(node, ctx):
    return isinstance(node, ast.Call) and call_name(node) in ("prange", "numba.prange", "nb.prange")


def _to_range(node, ctx):
    new = copy.deepcopy(node)
    new.func = ast.Name("range", ast.Load())
    return [Change(new, f"prange -> range: {shown(node)} -> {shown(new)}")]


_WHOLE = {"comparison_boundary", "comparison_negated", "guard_removed", "guard_inverted", "dtype_changed"}

OPERATORS = (
    *(op for op in KERNEL_OPERATORS if op.name in _WHOLE),
    Operator("arithmetic", _binop, _arith),
    Operator("floor_for_ceiling", _ceil_division, _floor),
    Operator("floor_for_ceiling", _negated_ceil, _floor_negated),
    Operator("constant_off_by_one", _number, _plus_minus_one),
    Operator("min_max_swapped", _minmax, _swap_minmax),
    Operator("host_not_device", _device_copy, _host_instead),
    Operator("returned_on_host", _returned_name, _to_host),
    Operator("target_dropped", _keyword, _drop_keyword),
    Operator("target_dropped", _prange, _to_range),
)
