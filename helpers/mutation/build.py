"""A mutant's source made into a kernel or function whose source is readable, as a learner's is.

The checks read a kernel's source (the compile check, the structural checks): a mutant is
written to a file of its own and executed there, in a copy of the reference module's globals,
so ``inspect.getsource`` and the compile server see it exactly as they see a learner's cell.
"""

from __future__ import annotations

import ast
import builtins
import hashlib
import os
import tempfile
import textwrap
from pathlib import Path

from .. import _numba


def mutant_dir() -> Path:
    path = Path(os.environ.get("COURSE_MUTANT_DIR") or Path(tempfile.gettempdir()) / "course-mutants")
    path.mkdir(parents=True, exist_ok=True)
    return path


def function_tree(fn) -> ast.FunctionDef:
    """The reference's ``def`` (with its decorators) as a tree."""
    import inspect

    fn = _numba.python_function(fn) or fn
    return ast.parse(textwrap.dedent(inspect.getsource(fn))).body[0]


def globals_of(fn) -> dict:
    return (_numba.python_function(fn) or fn).__globals__


def unresolved(tree: ast.FunctionDef, namespace: dict) -> set:
    """Names the mutant reads that nothing defines: such a mutant is not a program a learner could run."""
    bound = set(namespace) | set(dir(builtins))
    for node in ast.walk(tree):
        if isinstance(node, ast.arg):
            bound.add(node.arg)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            bound.add(node.id)
        elif isinstance(node, ast.ExceptHandler) and node.name:  # except ValueError as e
            bound.add(node.name)
        elif isinstance(node, (ast.FunctionDef, ast.Import, ast.ImportFrom)):
            names = [node.name] if isinstance(node, ast.FunctionDef) else [a.asname or a.name for a in node.names]
            bound.update(n.split(".")[0] for n in names)
    return {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)} - bound


def build(tree: ast.FunctionDef, namespace: dict, call: bool = False):
    """Execute the mutated ``def`` from a file of its own; ``call``: it is a factory, return what it builds."""
    text = ast.unparse(tree) + "\n"
    digest = hashlib.sha1(text.encode()).hexdigest()[:16]
    path = mutant_dir() / f"mutant_{digest}.py"
    if not path.exists() or path.read_text() != text:
        path.write_text(text)
    ns = dict(namespace)
    ns.update(__name__=f"course_mutant_{digest}", __file__=str(path))
    exec(compile(text, str(path), "exec"), ns)  # noqa: S102 - the mutant is the project's own reference, rewritten
    made = ns[tree.name]
    return made() if call else made
