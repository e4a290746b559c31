"""Enumerate the places an operator can change, and make one changed copy per place and variant.

An operator is a pair (match, variants): ``match(node, ctx)`` says whether a node is a site, and
``variants(node, ctx)`` returns the replacement nodes (an expression, a statement, or a list of
statements) with a short label each. Every mutant changes exactly one site, in a deep copy of
the reference's tree, so each one is a single, nameable mistake.
"""

from __future__ import annotations

import ast
import copy
from dataclasses import dataclass
from typing import Callable, Iterator


@dataclass(frozen=True)
class Context:
    """What the operators know of the exercise: parameter roles and the literals its check uses."""

    inputs: tuple = ()  # names of the parameters the exercise reads
    outputs: tuple = ()  # names of the parameters it writes (outputs and accumulators)
    block: tuple = (32, 1, 1)  # threads per block of the check's first launch
    grid: tuple = (1, 1, 1)  # blocks of the check's first launch
    size: int = 0  # the check's first size n
    arrays: tuple = ()  # shared and local arrays the kernel declares


@dataclass(frozen=True)
class Change:
    """One rewritten site: the new node(s) and what changed, in words."""

    new: object
    label: str


class _Replace(ast.NodeTransformer):
    def __init__(self, target, new):
        self.target, self.new = target, new

    def visit(self, node):
        if node is self.target:
            return self.new
        return self.generic_visit(node)


def _sites(tree, match, ctx):
    return [n for n in ast.walk(tree) if match(n, ctx)]


def mutate(
    tree: ast.FunctionDef, match: Callable, variants: Callable, ctx: Context
) -> Iterator[tuple[ast.FunctionDef, str]]:
    """Every (mutated tree, label) with one site of ``tree`` replaced by one of its variants."""
    for k in range(len(_sites(tree, match, ctx))):
        count = len(variants(_sites(tree, match, ctx)[k], ctx))
        for j in range(count):
            mutant = copy.deepcopy(tree)
            site = _sites(mutant, match, ctx)[k]
            line = getattr(site, "lineno", tree.lineno) - tree.lineno + 1
            change = variants(site, ctx)[j]
            before = ast.unparse(site).splitlines()[0]
            mutant = _Replace(site, change.new).visit(mutant)
            _fill_empty(mutant)
            ast.fix_missing_locations(mutant)
            yield mutant, f"line {line}: {change.label or before}"


def _fill_empty(tree):
    """A block left empty by a removal (a barrier that was an ``if``'s only statement) gets ``pass``."""
    for node in ast.walk(tree):
        if isinstance(getattr(node, "body", None), list) and not node.body:
            node.body.append(ast.Pass())


def call_name(node) -> str:
    """``cuda.atomic.add`` for a call (or attribute) written that way, else ''."""
    node = node.func if isinstance(node, ast.Call) else node
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return ".".join(reversed(parts))
    return ""


def with_element(node, k: int, made) -> ast.expr:
    """``node`` with its k-th element replaced by ``made`` when it is a tuple, else ``made`` itself
    (a subscript's index or a returned value, one or several)."""
    if not isinstance(node, ast.Tuple):
        return made
    new = copy.deepcopy(node)
    new.elts[k] = made
    return new


def expr(text: str) -> ast.expr:
    return ast.parse(text, mode="eval").body


def stmts(text: str) -> list:
    return ast.parse(text).body


def shown(node) -> str:
    return ast.unparse(node).splitlines()[0]
