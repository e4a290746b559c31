"""The mutants of a CUDA C exercise's reference answer: a kernel's source, an elementwise
operation, or a ReductionKernel's four expressions, each changed by one C operator (``c_ops``).

The context comes from the exercise and from the check itself: the parameters the answer may use
(for an operand swapped with another of its kind), and the block size and n of the check's first
launch with the report's seed, so a literal copied from that launch is exactly the one a learner
who hard-codes it would write.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Iterator

import numpy as np

from ..exercises.cuda_run import launch_cases, size_of
from .c_ops import OPERATORS as C_OPERATORS
from .c_ops import mutate_c
from .c_tokens import CContext, body_start, params_of

OPERATORS = C_OPERATORS  # what run.targets names for a CUDA C part
_PARTS = ("map_expr", "reduce_expr", "post_map_expr", "identity")


@dataclass(frozen=True)
class CMutant:
    operator: str
    site: str
    source: str  # what the report shows: the mutated text
    answer: object  # what the check is given: a string, or the four strings of a reduction


def context(ex, seed: int) -> CContext:
    if ex.kind == "tile":  # exercises/tiles.py: one warp per block and no n a learner could hard-code
        return CContext(params=params_of(ex.c_params), block=32, body_start=body_start(ex.reference, ex.kernel))
    spec = ex.c_params or ex.arguments or f"{ex.in_params}, {ex.out_params}"
    params = params_of(spec)
    values, block = launch_cases(ex, np.random.default_rng(seed))[0]
    n = values.get("n")
    if n is None and ex.kind in ("raw", "sourcemodule"):
        n = size_of(values)
    start = body_start(ex.reference, ex.kernel) if isinstance(ex.reference, str) else 0
    # a library's generated kernel picks its own n and block: only a raw kernel's can be hard-coded
    size = int(n) if ex.kind in ("raw", "sourcemodule") and any(p.name == "n" for p in params) else 0
    return CContext(params=params, block=int(block), size=size, size_name="n", body_start=start)


def _reduction_params(ex) -> tuple:
    """The names a reduction's expressions may use: its inputs in map_expr, a and b elsewhere."""
    return params_of(f"{ex.in_params}, {ex.out_params}") + params_of("float a, float b")


def _raw_mutants(ex, ctx) -> Iterator[CMutant]:
    for op, text, site in mutate_c(ex.reference, ctx):
        yield CMutant(op, site, text, text)


def _reduction_mutants(ex, ctx) -> Iterator[CMutant]:
    ctx = CContext(params=_reduction_params(ex), block=ctx.block)
    ref = tuple(str(p) for p in ex.reference)
    for k, (part, text) in enumerate(zip(_PARTS, ref)):
        for op, new, site in mutate_c(text, ctx):
            answer = ref[:k] + (new,) + ref[k + 1 :]
            yield CMutant(op, f"{part}: {site.split(': ', 1)[1]}", repr(answer), answer)
    # reduce_expr doing map_expr's work again: right only when b is one element (one thread, in order)
    x = params_of(ex.in_params)[0].name
    word = re.compile(rf"\b{x}\b")
    map_of = {v: "(" + word.sub(v, ref[0]) + ")" for v in ("a", "b")}
    if word.search(ref[0]) and ref[1].replace(" ", "") in ("a+b", "b+a"):
        answer = (ref[0], f"{map_of['a']} + {map_of['b']}", ref[2], ref[3])
        yield CMutant(
            "map_in_reduce", f"reduce_expr: map_expr applied to partial results: {answer[1]}", repr(answer), answer
        )


def mutants(ex, seed: int) -> Iterator[CMutant]:
    """Every distinct mutant of the exercise's reference, its labels numbered where two read alike."""
    ctx = context(ex, seed)
    made = _reduction_mutants(ex, ctx) if ex.kind == "reduction" else _raw_mutants(ex, ctx)
    seen, labels = {repr(ex.reference) if ex.kind == "reduction" else ex.reference}, {}
    for m in made:
        if m.source in seen:
            continue
        seen.add(m.source)
        labels[(m.operator, m.site)] = labels.get((m.operator, m.site), 0) + 1
        count = labels[(m.operator, m.site)]
        yield m if count == 1 else CMutant(m.operator, f"{m.site} (#{count})", m.source, m.answer)
