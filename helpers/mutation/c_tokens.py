"""CUDA C as tokens that keep their offsets, for the C mutation operators (``c_ops``): a mutant is the
original text with one span of tokens replaced, so its layout and line numbers stay the reference's."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable

_TOKEN = re.compile(
    r"""(?P<ws>\s+)|(?P<comment>//[^\n]*|/\*.*?\*/)|(?P<pp>\#[^\n]*)
    |(?P<num>(?:\d+\.\d*|\.\d+|\d+)(?:[eE][+-]?\d+)?[fFuUlL]*)
    |(?P<id>[A-Za-z_]\w*)
    |(?P<op><<=|>>=|->|\+\+|--|<<|>>|<=|>=|==|!=|&&|\|\||[-+*/%&|^]=|[-+*/%<>=!?:;,.(){}\[\]&|^~])
    |(?P<other>.)""",
    re.X | re.S,
)
TYPES = {"float", "double", "int", "unsigned", "long", "short", "char", "void", "bool", "size_t", "const", "auto"}
_QUALIFIERS = {"const", "__restrict__", "volatile", "extern", "static", "__global__", "__device__", "__shared__"}


@dataclass(frozen=True)
class Token:
    kind: str
    text: str
    start: int
    end: int


@dataclass(frozen=True)
class Param:
    name: str
    pointer: bool
    ctype: str  # "float", "int"...: what may stand in for what


@dataclass(frozen=True)
class CContext:
    """What the operators know of the exercise: its parameters, the check's first block size and n."""

    params: tuple = ()  # Param
    block: int = 128
    size: int = 0  # the check's first n (0: the answer has no n of its own)
    size_name: str = "n"
    body_start: int = 0  # offset after the kernel's parameter list: uses of parameters start there


@dataclass(frozen=True)
class Edit:
    first: int  # token index
    end: int  # token index after the last replaced one
    text: str
    label: str


@dataclass(frozen=True)
class COperator:
    name: str
    edits: Callable  # (tokens, source, ctx) -> list[Edit]


def tokens(src: str) -> list[Token]:
    out = []
    for m in _TOKEN.finditer(src):
        if m.lastgroup not in ("ws", "comment"):
            out.append(Token(m.lastgroup, m.group(), m.start(), m.end()))
    return out


def params_of(text: str) -> tuple:
    """'const float* x, int n' (C) or 'float32 x, raw T y' (CuPy) -> Params."""
    out = []
    for part in filter(None, (p.strip() for p in text.split(","))):
        words = [w for w in part.replace("*", " * ").split() if w not in _QUALIFIERS and w != "raw"]
        if len(words) < 2:
            continue
        base = words[0]
        base = {"float32": "float", "float64": "double", "int32": "int", "int64": "long"}.get(base, base)
        out.append(Param(words[-1], "*" in words, base))
    return tuple(out)


def match_bracket(toks, k, opening="(", closing=")"):
    """Index of the bracket closing the one at ``k``."""
    depth = 0
    for j in range(k, len(toks)):
        if toks[j].text == opening:
            depth += 1
        elif toks[j].text == closing:
            depth -= 1
            if depth == 0:
                return j
    return len(toks) - 1


def span(src, toks, a, b) -> str:
    """The text of tokens a..b-1 as written (spacing kept)."""
    return "" if b <= a else src[toks[a].start : toks[b - 1].end]


def binary(toks, k) -> bool:
    """Is the operator at ``k`` binary (not a unary minus, not the ``*`` of a pointer declaration)?"""
    if k == 0:
        return False
    prev = toks[k - 1]
    if prev.kind == "id":
        return prev.text not in TYPES and prev.text not in ("return",)
    return prev.kind == "num" or prev.text in (")", "]")


def body_start(src: str, kernel: str) -> int:
    """Offset just after ``kernel``'s parameter list (0 for a snippet with no declaration)."""
    toks = tokens(src)
    for k, t in enumerate(toks):
        if t.text == kernel and k + 1 < len(toks) and toks[k + 1].text == "(":
            return toks[match_bracket(toks, k + 1)].end
    return 0
