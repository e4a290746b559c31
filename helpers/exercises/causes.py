"""What a learner's source shows about a wrong result, read from its syntax tree (never run):
floor division of values, a 1-D index in a 2-D kernel, a loop that stops before the array's end.

Each function returns the learner's own expression, as written, so a message can quote it; or
None (an empty list) when the source shows no such thing or cannot be parsed.
"""

from __future__ import annotations

import ast
import textwrap


def _tree(src) -> ast.AST | None:
    text = textwrap.dedent(src or "")
    try:
        tree = ast.parse(text)
    except SyntaxError:  # a lambda cut out of a longer line, or no source at all
        return None
    tree.text = text  # for _written: the learner's spelling (1e9 stays 1e9)
    return tree


def _written(tree, node) -> str:
    """A node's text as the learner wrote it (ast.unparse where a segment cannot be had)."""
    return ast.get_source_segment(tree.text, node) or ast.unparse(node)


def _index_nodes(tree) -> set:
    """Nodes inside a subscript's index (``x[i // 2]``): arithmetic on positions, not on values."""
    inside = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Subscript):
            inside.update(id(n) for n in ast.walk(node.slice))
    return inside


def _floor_nodes(tree):
    """(expression, the statement holding it) for every ``a // b`` and ``a //= b``, outermost first."""
    for stmt in ast.walk(tree):
        if not isinstance(stmt, ast.stmt):
            continue
        if isinstance(stmt, ast.AugAssign) and isinstance(stmt.op, ast.FloorDiv):
            yield stmt, stmt
        for field in ("value", "test", "iter"):  # the statement's own expression, not nested statements
            part = getattr(stmt, field, None)
            if isinstance(part, ast.AST):
                for node in ast.walk(part):
                    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.FloorDiv):
                        yield node, stmt


def _stored_in_array(tree, index) -> set:
    """Names whose value is written into an array element (``out[i] = avg``; not the ``i``): a floor
    division assigned to one of them divides values."""
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Assign, ast.AugAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if any(isinstance(t, ast.Subscript) for t in targets):
                names.update(n.id for n in ast.walk(node.value) if isinstance(n, ast.Name) and id(n) not in index)
    return names


def floor_divisions(src, kernel=True) -> list[str]:
    """The ``//`` expressions that divide values, as written. In a function every ``//`` outside an
    index counts. In a kernel ``//`` is mostly index arithmetic (row = i // cols), so only one that
    reads an array element or a float constant, or whose result is stored in an array (directly
    or through one local name) counts."""
    tree = _tree(src)
    if tree is None:
        return []
    index = _index_nodes(tree)
    stored = _stored_in_array(tree, index)
    found, inner = [], set()
    for node, stmt in _floor_nodes(tree):
        if id(node) in index or id(node) in inner:  # an index, or part of a // already quoted
            continue
        if kernel and not _divides_values(node, stmt, stored):
            continue
        inner.update(id(n) for n in ast.walk(node))
        text = _written(tree, node)
        if text not in found:
            found.append(text)
    return found


def _divides_values(node, stmt, stored) -> bool:
    parts = list(ast.walk(node))
    if any(isinstance(n, ast.Subscript) for n in parts):
        return True
    if any(isinstance(n, ast.Constant) and isinstance(n.value, float) for n in parts):
        return True
    targets = stmt.targets if isinstance(stmt, ast.Assign) else [getattr(stmt, "target", None)]
    if any(isinstance(t, ast.Subscript) for t in targets):
        return True
    return any(isinstance(t, ast.Name) and t.id in stored for t in targets)


def _calls(tree, attr):
    return [n for n in ast.walk(tree) if isinstance(n, ast.Call) and getattr(n.func, "attr", None) == attr]


def _uses(tree, base, axis) -> bool:
    """``cuda.blockIdx.y`` (or a bare ``blockIdx.y``) anywhere in the source."""
    for n in ast.walk(tree):
        if isinstance(n, ast.Attribute) and n.attr == axis:
            inner = n.value
            if (isinstance(inner, ast.Attribute) and inner.attr == base) or (
                isinstance(inner, ast.Name) and inner.id == base
            ):
                return True
    return False


def one_d_index(src) -> str | None:
    """The 1-D index a kernel computes where its launch is 2-D, as written: ``cuda.grid(1)``, or the
    statement that builds an index from blockIdx.x when nothing reads blockIdx.y (the blocks of a
    2-D grid then repeat each other's work along y). None when the kernel reads cuda.grid(2)."""
    tree = _tree(src)
    if tree is None:
        return None
    if any(_is_const(c.args[0], 2) for c in _calls(tree, "grid") if c.args):
        return None
    for call in _calls(tree, "grid"):
        if call.args and _is_const(call.args[0], 1):
            return _written(tree, call)
    if _uses(tree, "blockIdx", "y") or not _uses(tree, "blockIdx", "x"):
        return None
    built = [
        _written(tree, s) for s in ast.walk(tree) if isinstance(s, ast.Assign) and "blockIdx" in ast.unparse(s.value)
    ]
    # The row built from blockIdx.x (with threadIdx.y) is the telling one; else the first index built.
    return next((b for b in built if ".y" in b), built[0] if built else None)


def _is_const(node, value) -> bool:
    return isinstance(node, ast.Constant) and node.value == value


def capped_loop(src) -> str | None:
    """The stop of a grid-stride loop, ``for ... in range(start, stop, stride)``, that is capped
    (``min(...)``) or holds a number (``4 * cuda.blockDim.x``, not the ``1`` of ``x.shape[1]``), as
    written: such a loop must run to the array's size. Loops with a constant step (over a 3x3
    neighbourhood, say) are not grid-stride loops."""
    tree = _tree(src)
    if tree is None:
        return None
    index = _index_nodes(tree)
    for node in ast.walk(tree):
        if not (isinstance(node, ast.For) and isinstance(node.iter, ast.Call) and len(node.iter.args) == 3):
            continue
        if getattr(node.iter.func, "id", None) != "range" or isinstance(node.iter.args[2], ast.Constant):
            continue
        stop = node.iter.args[1]
        capped = isinstance(stop, ast.Call) and getattr(stop.func, "id", None) == "min"
        number = any(isinstance(n, ast.Constant) and id(n) not in index for n in ast.walk(stop))
        if capped or number:
            return _written(tree, stop)
    return None
