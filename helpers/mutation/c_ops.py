"""Operators on CUDA C answers (a RawKernel or SourceModule source, an elementwise operation, a
ReductionKernel's four expressions): the mistakes a learner makes in C, at the level of tokens.

The source is split into tokens that keep their offsets, so a mutant is the original text with
one span replaced: its layout, comments and line numbers stay those of the reference, and the
site label can name the line. Each operator returns ``Edit``s (first token, end token, new text,
label); ``mutate_c`` applies them one at a time.
"""

from __future__ import annotations

import re
from typing import Iterator

from .c_tokens import CContext, COperator, Edit, binary, match_bracket, span, tokens

# ----------------------------------------------------------------------------- comparisons and guards

_FLIP = {"<": "<=", "<=": "<", ">": ">=", ">=": ">"}
_NEGATE = {"<": ">=", "<=": ">", ">": "<=", ">=": "<", "==": "!=", "!=": "=="}


def _compare(table, what):
    def edits(toks, src, ctx):
        return [
            Edit(k, k + 1, table[t.text], f"{what} {t.text} -> {table[t.text]}")
            for k, t in enumerate(toks)
            if t.kind == "op" and t.text in table
        ]

    return edits


def _ifs(toks, src):
    """(index of ``if``, index of its closing bracket, condition text) for every ``if (...)``."""
    for k, t in enumerate(toks):
        if t.text == "if" and k + 1 < len(toks) and toks[k + 1].text == "(":
            close = match_bracket(toks, k + 1)
            yield k, close, span(src, toks, k + 2, close)


def _guards(toks, src, ctx):
    out = []
    for k, close, cond in _ifs(toks, src):
        if close + 1 < len(toks) and toks[close + 1].text == "return":  # an early exit: without it, no exit
            end = next((j for j in range(close, len(toks)) if toks[j].text == ";"), close) + 1
            out.append(Edit(k, end, "", f"guard removed: if ({cond}) return"))
        else:
            out.append(Edit(k, close + 1, "", f"guard removed: if ({cond})"))
    return out + [e for e in _ternaries(toks, src) if e.label.startswith("guard removed")]


def _inverted(toks, src, ctx):
    out = [Edit(k + 2, close, f"!({cond})", f"guard inverted: if (!({cond}))") for k, close, cond in _ifs(toks, src)]
    return out + [e for e in _ternaries(toks, src) if e.label.startswith("branches swapped")]


def _ternaries(toks, src):
    """``c ? a : b`` -> a, b (guard removed) and ``c ? b : a`` (branches swapped), at one bracket depth."""
    out = []
    for q, t in enumerate(toks):
        if t.text != "?":
            continue
        start, depth = q, 0
        while start > 0:
            p = toks[start - 1].text
            depth += p == ")"
            if p == "(":
                if depth == 0:
                    break
                depth -= 1
            if depth == 0 and p in ("=", ",", ";", "{", "return", "?", ":"):
                break
            start -= 1
        colon, end, depth = None, q + 1, 0
        while end < len(toks):
            p = toks[end].text
            if p in ("(", "["):
                depth += 1
            elif p in (")", "]"):
                if depth == 0:
                    break
                depth -= 1
            elif depth == 0 and p == ":" and colon is None:
                colon = end
            elif depth == 0 and p in (";", ","):
                break
            end += 1
        if colon is None:
            continue
        cond, a, b = span(src, toks, start, q), span(src, toks, q + 1, colon), span(src, toks, colon + 1, end)
        out.append(Edit(start, end, a, f"guard removed: {cond} ? {a} : {b} -> {a}"))
        out.append(Edit(start, end, b, f"guard removed: {cond} ? {a} : {b} -> {b}"))
        out.append(Edit(start, end, f"{cond} ? {b} : {a}", f"branches swapped: {cond} ? {b} : {a}"))
    return out


# ----------------------------------------------------------------------------- the index formula


def _geometry(toks, k) -> bool:
    return (
        toks[k].text in ("threadIdx", "blockIdx", "blockDim", "gridDim")
        and k + 2 < len(toks)
        and toks[k + 1].text == "."
    )


def _launch_literal(toks, src, ctx):
    out = []
    for k, t in enumerate(toks):
        if t.text == "blockDim" and _geometry(toks, k):
            for lit in dict.fromkeys((ctx.block, 128, 32, 256)):
                out.append(Edit(k, k + 3, str(lit), f"blockDim.{toks[k + 2].text} -> {lit}"))
        elif t.text == "gridDim" and _geometry(toks, k):
            out.append(Edit(k, k + 3, "1", f"gridDim.{toks[k + 2].text} -> 1"))
    return out


def _index_formula(toks, src, ctx):
    out = []
    for k, t in enumerate(toks):
        if not _geometry(toks, k) or t.text not in ("threadIdx", "blockIdx"):
            continue
        other = "blockIdx" if t.text == "threadIdx" else "threadIdx"
        out.append(Edit(k, k + 1, other, f"{t.text} -> {other}"))
        axis = toks[k + 2].text
        swap = {"x": "y", "y": "x", "z": "x"}.get(axis)
        if swap:
            out.append(Edit(k + 2, k + 3, swap, f"{t.text}.{axis} -> {t.text}.{swap}"))
        # blockIdx.x * blockDim.x + threadIdx.x -> threadIdx.x: the block's offset dropped
        if t.text == "blockIdx" and k + 7 < len(toks) and toks[k + 3].text == "*" and toks[k + 4].text == "blockDim":
            if toks[k + 7].text == "+":
                out.append(Edit(k, k + 8, "", "block offset dropped: blockIdx * blockDim + ..."))
            out.append(Edit(k + 3, k + 7, "", "blockIdx.x * blockDim.x -> blockIdx.x"))
    return out


def _index_shift(toks, src, ctx):
    out = []
    for k, t in enumerate(toks):
        if t.text == "[" and k + 2 < len(toks) and toks[k + 1].kind == "id" and toks[k + 2].text == "]":
            i = toks[k + 1].text
            out += [
                Edit(k + 1, k + 2, f"{i} + 1", f"index shifted: [{i}] -> [{i} + 1]"),
                Edit(k + 1, k + 2, f"{i} - 1", f"index shifted: [{i}] -> [{i} - 1]"),
            ]
    return out


# ----------------------------------------------------------------------------- barriers, atomics, shared memory


def _barrier(toks, src, ctx):
    out = []
    for k, t in enumerate(toks):
        if t.text in ("__syncthreads", "__syncwarp") and k + 3 < len(toks) and toks[k + 1].text == "(":
            close = match_bracket(toks, k + 1)
            end = close + 2 if close + 1 < len(toks) and toks[close + 1].text == ";" else close + 1
            out.append(Edit(k, end, "", f"barrier removed: {t.text}()"))
    return out


_PLAIN = {"atomicAdd": "+=", "atomicSub": "-=", "atomicExch": "=", "atomicOr": "|=", "atomicAnd": "&="}


def _atomic(toks, src, ctx):
    out = []
    for k, t in enumerate(toks):
        if t.text in _PLAIN and k + 1 < len(toks) and toks[k + 1].text == "(":
            close = match_bracket(toks, k + 1)
            depth, comma = 0, None
            for j in range(k + 2, close):
                depth += (toks[j].text in ("(", "[")) - (toks[j].text in (")", "]"))
                if depth == 0 and toks[j].text == ",":
                    comma = j
                    break
            if comma is None:
                continue
            target = span(src, toks, k + 2, comma)
            target = target[1:].strip() if target.startswith("&") else f"*({target})"
            out.append(
                Edit(
                    k,
                    close + 1,
                    f"({target} {_PLAIN[t.text]} {span(src, toks, comma + 1, close)})",
                    f"atomic made plain: {t.text}",
                )
            )
    return out


def _shared(toks, src, ctx):
    return [
        Edit(k, k + 1, "", "__shared__ removed (one array per thread)")
        for k, t in enumerate(toks)
        if t.text == "__shared__"
    ]


# ----------------------------------------------------------------------------- operands, parameters, types


def _operands(toks, src, ctx):
    """A use of a parameter replaced by another of the same kind: x for y, lo for hi, a for b."""
    out = []
    by_name = {p.name: p for p in ctx.params}
    for k, t in enumerate(toks):
        p = by_name.get(t.text)
        if p is None or t.start < ctx.body_start or (k and toks[k - 1].text == "."):
            continue
        for q in ctx.params:
            if q.name != p.name and q.pointer == p.pointer and q.ctype == p.ctype:
                out.append(Edit(k, k + 1, q.name, f"operand {p.name} -> {q.name}"))
    return out


def _parameter_order(toks, src, ctx):
    """Two neighbouring parameters of the kernel's declaration swapped."""
    if not ctx.body_start:
        return []
    first = next(
        (
            k
            for k, t in enumerate(toks)
            if t.text == "(" and k and toks[k - 1].kind == "id" and toks[k - 1].text not in ("if", "for", "while")
        ),
        None,
    )
    if first is None:
        return []
    close = match_bracket(toks, first)
    cuts = [first] + [j for j in range(first + 1, close) if toks[j].text == ","] + [close]
    parts = [span(src, toks, a + 1, b).strip() for a, b in zip(cuts, cuts[1:])]
    out = []
    for j in range(len(parts) - 1):
        swapped = parts[:j] + [parts[j + 1], parts[j]] + parts[j + 2 :]
        out.append(Edit(first + 1, close, ", ".join(swapped), f"parameters swapped: {parts[j]} <-> {parts[j + 1]}"))
    return out


_RETYPE = {"float": ("double", "int"), "double": ("float",), "int": ("float", "short")}


def _types(toks, src, ctx):
    return [
        Edit(k, k + 1, new, f"type {t.text} -> {new}")
        for k, t in enumerate(toks)
        if t.kind == "id" and t.text in _RETYPE
        for new in _RETYPE[t.text]
    ]


def _size_literal(toks, src, ctx):
    if not ctx.size:
        return []
    return [
        Edit(k, k + 1, str(ctx.size), f"size {t.text} -> {ctx.size} (the check's first n)")
        for k, t in enumerate(toks)
        if t.text == ctx.size_name and t.start >= ctx.body_start
    ]


# ----------------------------------------------------------------------------- arithmetic, functions, constants

_ARITH = {
    "+": ("-", "*"),
    "-": ("+",),
    "*": ("+", "/"),
    "/": ("*",),
    "%": ("/",),
    "+=": ("=", "-="),
    "-=": ("+=",),
    "*=": ("+=", "="),
    "/=": ("*=",),
}
_CALLS = {"fminf": "fmaxf", "fmaxf": "fminf", "fmin": "fmax", "fmax": "fmin", "min": "max", "max": "min"}
_DROPPED = ("sqrt", "sqrtf", "rsqrtf", "fabsf", "fabs", "abs", "expf", "exp", "logf", "log")


def _arith(toks, src, ctx):
    out = []
    for k, t in enumerate(toks):
        if t.kind == "op" and t.text in _ARITH and (t.text.endswith("=") or binary(toks, k)):
            out += [Edit(k, k + 1, new, f"operator {t.text} -> {new}") for new in _ARITH[t.text]]
    return out


def _calls(toks, src, ctx):
    out = []
    for k, t in enumerate(toks):
        if t.kind != "id" or k + 1 >= len(toks) or toks[k + 1].text != "(":
            continue
        if t.text in _CALLS:
            out.append(Edit(k, k + 1, _CALLS[t.text], f"{t.text} -> {_CALLS[t.text]}"))
        elif t.text in _DROPPED:
            close = match_bracket(toks, k + 1)
            out.append(Edit(k, close + 1, f"({span(src, toks, k + 2, close)})", f"{t.text}() dropped"))
    return out


def _constants(toks, src, ctx):
    out = []
    for k, t in enumerate(toks):
        if t.kind != "num" or (k and toks[k - 1].text == "["):  # a shared array's size is the layout, not a value
            continue
        m = re.fullmatch(r"([\d.eE+-]+)([fFuUlL]*)", t.text)
        if not m:
            continue
        value, suffix = float(m.group(1)), m.group(2)
        is_int = re.fullmatch(r"\d+", m.group(1)) is not None
        for new in (value + 1, value - 1) if value else (1.0,):
            text = (str(int(new)) if is_int else repr(float(new))) + suffix
            if not text.startswith("-"):
                out.append(Edit(k, k + 1, text, f"constant {t.text} -> {text}"))
    return out


OPERATORS = (
    COperator("comparison_boundary", _compare(_FLIP, "boundary")),
    COperator("comparison_negated", _compare(_NEGATE, "negated")),
    COperator("guard_removed", _guards),
    COperator("guard_inverted", _inverted),
    COperator("launch_literal", _launch_literal),
    COperator("index_formula", _index_formula),
    COperator("index_shifted", _index_shift),
    COperator("size_literal", _size_literal),
    COperator("barrier_removed", _barrier),
    COperator("atomic_plain", _atomic),
    COperator("privatization_dropped", _shared),
    COperator("operand_swapped", _operands),
    COperator("parameter_order", _parameter_order),
    COperator("dtype_changed", _types),
    COperator("arithmetic", _arith),
    COperator("function_swapped", _calls),
    COperator("constant_changed", _constants),
)


def mutate_c(src: str, ctx: CContext) -> Iterator[tuple[str, str, str]]:
    """Every (operator name, mutated source, site label) with one span of ``src`` replaced."""
    toks = tokens(src)
    lead = len(src) - len(src.lstrip("\n"))
    for op in OPERATORS:
        for e in op.edits(toks, src, ctx):
            start, end = toks[e.first].start, toks[e.end - 1].end if e.end > e.first else toks[e.first].start
            line = src.count("\n", lead, start) + 1
            yield op.name, src[:start] + e.text + src[end:], f"line {line}: {e.label}"
