"""Mutants that are not wrong answers, each with the reason it computes the right thing the way
the exercise asks. A rule matches mutants by exercise, operator and a pattern of the site; a rule
that matches no mutant any more fails the report test, so this table keeps no stale excuses.
tests/mutation/test_equivalent.py runs every matched mutant at a GPU-like size and checks its
numbers against the exercise's oracle.
"""

from __future__ import annotations

import re
from typing import NamedTuple


class Equivalent(NamedTuple):
    exercise: str
    operator: str
    site: str  # a regular expression searched in the mutant's site label
    reason: str

    def matches(self, key: str) -> bool:
        exercise, _part, operator, site = key.split(" | ", 3)
        return exercise == self.exercise and operator == self.operator and re.search(self.site, site) is not None


_WIDER_FLOAT = (
    "float64 constants make the arithmetic wider, not wrong: the pixel is rounded to float32 when stored and "
    "equals the reference within the check's tolerance; the exercise asks for the right pixels, and a plain "
    "literal such as 0.299 or 9.0 (what the hints write) is float64 in Numba too"
)

_WIDER_SUM = (
    "a float64 accumulator (one scalar, in registers) adds the float32 inputs more precisely and is rounded to "
    "float32 when stored: the same numbers within tolerance, by the technique the exercise asks; an accumulator "
    "started as 0.0 is float64 in Numba too (a float64 shared or local array is not excused: it doubles on-chip "
    "memory, and the check says so)"
)

_EVERY_LAUNCH = "the same result for every block of 1 to 1,024 threads with 1 to 255 registers (checked exhaustively)"

_RECORDED_AGAIN = (
    "recording an event again at the same point of the same stream, or waiting again for work already waited "
    "for, changes nothing: the same events mark the same launch, and the host has already waited"
)

_FLOAT32_ADD = (
    "a float16 product is exact in float32 and in float64, and a float64 sum of two float32 numbers rounded to "
    "float32 (np.float32(acc + p)) is the float32 sum itself (53 bits >= 2 * 24 + 2): the same float32 "
    "accumulation, step by step"
)

EQUIVALENT: tuple[Equivalent, ...] = (
    Equivalent(
        "nb18.dot_fp32_acc", "dtype_changed", r"^line [23]: dtype changed: np\.float32 -> np\.float64", _FLOAT32_ADD
    ),
    Equivalent(
        "nb18.wmma_gemm",
        "dtype_changed",
        r"^line 7: type int -> short$",
        "a short tile_row holds every tile row up to 32,767 (matrices up to 524,272 rows), and C promotes it to int "
        "before any offset is computed, so every tile is the same there; past that it wraps negative, a launch of "
        "524,288 or more rows that the check does not make (20 s of CPU in the interpreter for one such launch)",
    ),
    Equivalent("nb16.time_kernel", "call_doubled", r"called twice: (start|end)\.record\(stream\)$", _RECORDED_AGAIN),
    Equivalent("nb16.time_kernel", "call_doubled", r"called twice: end\.synchronize\(\)$", _RECORDED_AGAIN),
    Equivalent("nb16.pipeline", "call_doubled", r"called twice: s\.synchronize\(\)$", _RECORDED_AGAIN),
    Equivalent("nb04.grayscale", "dtype_changed", r"np\.float32 -> np\.float64", _WIDER_FLOAT),
    Equivalent("nb04.blur", "dtype_changed", r"np\.float32 -> np\.float64", _WIDER_FLOAT),
    Equivalent(
        "nb05.matmul_tiled", "dtype_changed", r"^line 9: dtype changed: numba\.float32 -> numba\.float64$", _WIDER_SUM
    ),
    Equivalent(
        "nb06.warp_sum", "dtype_changed", r"^line 3: dtype changed: numba\.float32 -> numba\.float64$", _WIDER_SUM
    ),
    Equivalent(
        "nb07.row_sums", "dtype_changed", r"^line 5: dtype changed: numba\.float32 -> numba\.float64$", _WIDER_SUM
    ),
    Equivalent(
        "nb06.scan",
        "comparison_boundary",
        r"^line 9: boundary d < SCAN -> d <= SCAN$",
        "one more round with d == SCAN, where no thread has t >= d: every thread copies its element to the other "
        "buffer and the reads swap to it, so the same scan comes out, one barrier later",
    ),
    Equivalent(
        "nb07.occupancy",
        "constant_off_by_one",
        r"line 3: constant 255 -> 254$",
        _EVERY_LAUNCH + ": regs * 32 is a multiple of 32, so adding 254 or 255 before dividing by 256 rounds up to "
        "the same multiple of 256 registers per warp",
    ),
    Equivalent(
        "nb07.occupancy",
        "constant_off_by_one",
        r"line 3: constant 256 -> 255$",
        _EVERY_LAUNCH + ": a granule written as 255 registers (the rounding still divides by 256) changes 65536 // "
        "(warps * registers per warp) only where warps * granules * blocks = 257, a prime: 1 warp of 1 granule, "
        "already over the 32-block limit",
    ),
    Equivalent(
        "nb07.occupancy",
        "constant_off_by_one",
        r"line 3: constant 256 -> 257 \(#2\)$",
        _EVERY_LAUNCH + ": rounding up with // 257 instead of // 256 gives one granule less only at 249 registers, "
        "where the block count floors to the same number for every warp count",
    ),
    Equivalent(
        "nb08.leaky_relu",
        "comparison_boundary",
        r"^line 1: boundary > -> >=$",
        "the two branches differ only where x == 0, and there both are 0 (x itself, or alpha * 0): x >= 0 and "
        "x > 0 give the same y for every input, which is how the leaky ReLU is often written",
    ),
    Equivalent(
        "nb10.check_result",
        "constant_off_by_one",
        r"^line 7: constant 0 -> -1$",
        "values[-1] and values[0] are the same element in the branch that runs, where len(values) == 1: the "
        "single value comes back either way",
    ),
    Equivalent(
        "nb14.compaction_offsets",
        "dtype_changed",
        r"^line 5: dtype changed: np\.int32 -> np\.int64$",
        "an int64 init_value makes the scan add in int64; the offsets of 0/1 flags are at most n and are stored "
        "into the int32 output the exercise asks for, so every offset and the count are the same",
    ),
    Equivalent(
        "nb14.compaction_offsets",
        "constant_off_by_one",
        r"^line 5: constant 1 -> 2$",
        "cuda.compute reads the first element of init_value (checked on an H200): np.zeros(2, np.int32) starts the "
        "scan at 0 as np.zeros(1, np.int32) does, with the same int32 accumulator",
    ),
    Equivalent(
        "nb05.stencil",
        "comparison_boundary",
        r"0 < i <= n -> 0 < i < n",
        "the left halo is skipped only when i == n, in a block that starts past the end of x: none of its "
        "threads writes an output, so nothing reads that tile[0]",
    ),
    Equivalent(
        "nb17.warp_scan",
        "comparison_boundary",
        r"^line 6: boundary delta < WARP -> delta <= WARP$",
        "a sixth step with delta = 32 reads lane laneid - 32, outside the warp for every lane, so each lane gets its "
        "own value back and none adds it (laneid >= 32 never holds): one more shuffle that changes nothing",
    ),
    Equivalent(
        "nb17.warp_scan",
        "dtype_changed",
        r"^line 4: dtype changed: numba\.int32 -> numba\.int64$",
        "an int64 zero for the lanes past the end makes v int64 (Numba unifies int32 with int64): the same sums of "
        "the int32 inputs, moved by shuffles and stored into the int32 output, in a wider register",
    ),
)


def reason(key: str) -> str | None:
    """Why the mutant with this key is equivalent, or None when it is a wrong answer."""
    for rule in EQUIVALENT:
        if rule.matches(key):
            return rule.reason
    return None
