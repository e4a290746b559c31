"""Shared and local array shapes a GPU compiler refuses: the tracer sees the shape's value, Numba
its type, and only a literal (a number, a global constant, a tuple of them) types as one.

Read from the allocation's source, once per allocation line: `cuda.shared.array(out.size, ...)`,
`cuda.local.array(n, ...)` with `n` a kernel parameter (or a local computed from one),
`cuda.blockDim.x + 2` or `TPB + 2` (Numba folds no arithmetic on names; CPython folds `2 * 16`
itself) are refused, as numba-cuda 0.30.4 refuses them (helpers.compile_check says the same
sentence when it is asked). A device function's parameter is not: Numba types a literal argument
as a literal, so `dev(4)` compiles. Anything this cannot read is left to the compile check.
"""

import ast
import inspect
import linecache
import textwrap

from ..compile_check.sentences import SHAPE_NOT_CONSTANT

_RUNTIME = frozenset({"threadIdx", "blockIdx", "blockDim", "gridDim", "laneid", "warpsize", "grid", "gridsize"})
_ARITHMETIC = (ast.BinOp, ast.UnaryOp, ast.BoolOp, ast.Compare, ast.Call, ast.Subscript)


def refusal(frame, kernel_code):
    """One sentence when the allocation `frame` is making has a shape no GPU compiler takes, else None."""
    try:
        found = _allocation(frame)
    except (OSError, TypeError, SyntaxError, ValueError):
        return None
    if found is None:
        return None
    fn, shape = found
    code = frame.f_code
    params = set(code.co_varnames[: code.co_argcount]) if code is kernel_code else set()
    if not _Shape(fn, params).runtime(shape):
        return None
    src = linecache.getline(code.co_filename, frame.f_lineno, frame.f_globals).strip()
    where = f" (line {frame.f_lineno}: `{src}`)" if src else ""
    return "Numba cannot compile this kernel for a GPU: " + SHAPE_NOT_CONSTANT.format(where=where)


def _allocation(frame):
    """(the function's AST, the shape expression) of the shared/local array call on the frame's line."""
    code = frame.f_code
    lines, first = inspect.getsourcelines(code)
    tree = ast.parse(textwrap.dedent("".join(lines)))
    fn = tree.body[0] if tree.body else None
    if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return None
    line = frame.f_lineno - first + 1  # in the parsed source
    for node in ast.walk(fn):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "array"
            and isinstance(node.func.value, ast.Attribute)
            and node.func.value.attr in ("shared", "local")
            and node.lineno <= line <= (node.end_lineno or node.lineno)
        ):
            shape = node.args[0] if node.args else next((k.value for k in node.keywords if k.arg == "shape"), None)
            return (fn, shape) if shape is not None else None
    return None


class _Shape:
    """Whether an expression's value is certainly not a literal when Numba types the kernel."""

    def __init__(self, fn, params):
        self.params = params
        self.assigned = {}  # local name -> [assigned expression, or None: a loop target, +=, ...]
        for node in ast.walk(fn):
            if isinstance(node, ast.Assign):
                for target in node.targets:
                    self._bind(target, node.value)
            elif isinstance(node, (ast.AnnAssign, ast.AugAssign, ast.NamedExpr)):
                self._bind(node.target, node.value if isinstance(node, ast.AnnAssign) else None)
            elif isinstance(node, (ast.For, ast.comprehension)):
                self._bind(node.target, None)
        self.seen = set()

    def _bind(self, target, value):
        if isinstance(target, ast.Name):
            self.assigned.setdefault(target.id, []).append(value)
        elif isinstance(target, (ast.Tuple, ast.List)):
            for t in target.elts:
                self._bind(t, None)  # unpacked: what it holds is not read here

    def runtime(self, e):
        if isinstance(e, ast.Constant):
            return False
        if isinstance(e, ast.Tuple):
            return any(self.runtime(x) for x in e.elts)
        if isinstance(e, ast.IfExp):  # Numba unifies two equal literals
            return self.runtime(e.body) or self.runtime(e.orelse)
        if isinstance(e, ast.Name):
            return self._name(e.id)
        if isinstance(e, ast.Attribute):
            root = e
            while isinstance(root, ast.Attribute):
                root = root.value
            if isinstance(root, ast.Name) and (root.id in self.params or self._local_runtime(root.id)):
                return True  # out.size, out.shape[0]
            return e.attr in _RUNTIME or any(
                isinstance(a, ast.Attribute) and a.attr in _RUNTIME for a in ast.walk(e)
            )  # cuda.blockDim.x, cuda.warpsize
        if isinstance(e, _ARITHMETIC):  # only arithmetic on numbers alone is folded (by CPython)
            return any(isinstance(n, (ast.Name, ast.Attribute)) for n in ast.walk(e))
        return False  # anything else: not read here, left to the compile check

    def _name(self, name):
        return name in self.params or self._local_runtime(name)

    def _local_runtime(self, name):
        values = self.assigned.get(name)
        if not values or name in self.seen:  # a global or closure constant, or a cycle
            return False
        self.seen.add(name)
        try:
            return any(v is None or self.runtime(v) for v in values)
        finally:
            self.seen.discard(name)
