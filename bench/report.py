"""What the benchmark measured, judged and written down: no GPU code here.

``bench/run.py`` does the timing on a GPU and hands this module plain numbers: ``Row`` per
kernel, ``Ceiling`` per roof. This module checks results against a reference
(``max_scaled_error``), turns times into GB/s or FLOP/s and fractions of a ceiling, decides
pass or miss for each target, and renders ``docs/benchmarks-<gpu>.md``. Keeping it GPU-free lets
the test suite check all of that in CPU mode.
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass

GB = 1e9
TFLOP = 1e12


# ------------------------------------------------------------------------------ checking results


def max_scaled_error(got, want, scale=None, xp=None):
    """max |got - want| / scale, with scale = max(|want|, tiny) when not given.

    ``xp`` is numpy or cupy (the arrays' module); the answer is a Python float. NaN or inf
    anywhere in ``got`` gives inf, so a kernel that writes garbage can never pass.
    """
    if xp is None:
        import numpy as xp
    got = xp.asarray(got, dtype=xp.float64)
    want = xp.asarray(want, dtype=xp.float64)
    if got.shape != want.shape:
        return math.inf
    if not bool(xp.isfinite(got).all()):
        return math.inf
    if scale is None:
        scale = xp.maximum(xp.abs(want), 1e-30)
    err = xp.abs(got - want) / scale
    return float(err.max()) if err.size else 0.0


def median(samples):
    return statistics.median(samples)


# ------------------------------------------------------------------------------ rows and ceilings


@dataclass
class Ceiling:
    """A roof measured in this run: device-to-device copy (bytes/s) or cuBLAS SGEMM (FLOP/s)."""

    key: str  # "copy" or "sgemm"
    label: str
    value: float | None  # bytes/s or FLOP/s; None when it could not be measured
    detail: str = ""
    error: str = ""


@dataclass
class Row:
    """One kernel's measurement. ``work`` is bytes moved (bandwidth rows) or FLOPs (sgemm rows)."""

    key: str
    label: str
    kind: str  # "bandwidth" | "flops"
    size: str
    status: str = "failed"  # "ok" | "failed" | "skipped"
    seconds: float | None = None  # median time of one launch (or one two-pass reduction)
    work: float | None = None
    samples: int = 0
    error: str = ""
    note: str = ""

    @property
    def rate(self):
        """Bytes/s or FLOP/s, from the median time."""
        if self.status != "ok" or not self.seconds or not self.work:
            return None
        return self.work / self.seconds

    @property
    def ceiling_key(self):
        return "copy" if self.kind == "bandwidth" else "sgemm"


def fraction(row: Row, ceilings: dict):
    c = ceilings.get(row.ceiling_key)
    if row.rate is None or c is None or not c.value:
        return None
    return row.rate / c.value


def format_rate(kind, rate):
    if rate is None:
        return "—"
    return f"{rate / GB:,.0f} GB/s" if kind == "bandwidth" else f"{rate / TFLOP:.1f} TFLOP/s"


def format_time(seconds):
    if seconds is None:
        return "—"
    if seconds < 1e-3:
        return f"{seconds * 1e6:.1f} µs"
    return f"{seconds * 1e3:.3f} ms"


def format_fraction(f):
    return "—" if f is None else f"{100 * f:.0f}%"


# ------------------------------------------------------------------------------ targets


@dataclass
class Target:
    """``keys`` are row keys; the best of them counts (one row, or the best SGEMM step)."""

    name: str
    keys: tuple
    minimum: float  # fraction of the ceiling
    ceiling: str
    why_missed: str  # the usual reasons, printed only when the target is missed


TARGETS = (
    Target(
        "copy, 4 elements per thread ≥ 92% of copy bandwidth",
        ("copy_k4",),
        0.92,
        "copy",
        "each thread issues its four loads before its first store, so 16 bytes per thread are in flight; "
        "a miss means clocks were throttled (nvidia-smi -q -d CLOCK) or the arrays too small to hide the launch. "
        "One element per thread (copy_kernel) is expected to fall short on a GPU with more bandwidth: "
        "bench/streaming.py shows why.",
    ),
    Target(
        "vector add, 4 elements per thread ≥ 92% of copy bandwidth",
        ("vector_add_k4",),
        0.92,
        "copy",
        "as for the copy: 32 bytes of loads in flight per thread; two reads per write even beat the "
        "copy's one-to-one mix on HBM.",
    ),
    Target(
        "SAXPY, 4 elements per thread ≥ 92% of copy bandwidth",
        ("saxpy_k4",),
        0.92,
        "copy",
        "as for vector add: same traffic (two reads, one write per element).",
    ),
    Target(
        "tiled transpose (padded tile, no bank conflicts) ≥ 92% of copy bandwidth",
        ("transpose_padded", "transpose_padded_fast", "transpose_t64", "transpose_t64_u"),
        0.92,
        "copy",
        "unsigned indices drop Numba's negative-index wrap-around (663 PTX instructions to 250): the 64 x 64 "
        "tile with 8 elements per thread went from 84% to 94% on an H200, where the signed 16-per-thread "
        "tile had stopped at 91%; docs/data/streaming-*.json compares tile sides and elements per thread on "
        "each GPU. Tried on the H200 and slower: staging the loads in registers first (81%), evict-first "
        "cache hints (90%), one wave of blocks looping over tiles (85%; with the next tile's loads issued "
        "before the stores, 84%), blocks renumbered along diagonals (89%) or grouped as a GEMM groups its "
        "tiles (87%), 64-bit words with each 2 x 2 square transposed in registers (83%), rectangular tiles "
        "(128 x 32: 90%).",
    ),
    Target(
        "block reduction ≥ 80% of copy bandwidth",
        ("reduction",),
        0.80,
        "copy",
        "the second pass (one block) and the launch gap between the passes are fixed costs; "
        "a miss means the first pass has too few loads in flight (raise the unrolling) or the input is too small.",
    ),
    Target(
        "best Numba SGEMM step ≥ 80% of cuBLAS float32 (TF32 off)",
        ("sgemm_naive", "sgemm_tiled", "sgemm_regblock", "sgemm_gen", "sgemm_gen_db", "sgemm_tuned", "sgemm_vl"),
        0.80,
        "sgemm",
        "docs/data/sgemm_tune.json records registers, spills and resident blocks per SM of every "
        "tried tile shape and docs/data/sgemm_ncu.json the Nsight Compute view of each step; a miss "
        "on a new GPU usually means the shape tuned on another GPU does not suit it: run bench/sgemm_tune.py there.",
    ),
    Target(
        "CUDA C SGEMM step (float4, cuda.core) ≥ 92% of cuBLAS float32 (TF32 off)",
        ("sgemm_c",),
        0.92,
        "sgemm",
        "compare registers, spills and blocks per SM of each variant in docs/data/sgemm_c.json "
        "(bench/sgemm_c.py times them all): a wider thread tile needs more registers than 2 blocks/SM allow.",
    ),
)


@dataclass
class Verdict:
    target: Target
    best_key: str | None
    value: float | None  # best fraction among the target's rows
    result: str  # "pass" | "miss" | "not measured"
    detail: str = ""


def judge(rows: list, ceilings: dict, targets=TARGETS) -> list:
    """Pass or miss for each target, from the measured rows (never from fixed numbers)."""
    by_key = {r.key: r for r in rows}
    out = []
    for t in targets:
        candidates = [(fraction(by_key[k], ceilings), k) for k in t.keys if k in by_key]
        measured = [(f, k) for f, k in candidates if f is not None]
        if not measured:
            why = (
                "no row measured"
                if not candidates
                else "; ".join(
                    f"{k}: {by_key[k].status}{' (' + by_key[k].error + ')' if by_key[k].error else ''}"
                    for _, k in candidates
                )
            )
            c = ceilings.get(t.ceiling)
            if c is None or not c.value:
                why = f"the {t.ceiling} ceiling was not measured" + (
                    f" ({c.error})" if c is not None and c.error else ""
                )
            out.append(Verdict(t, None, None, "not measured", why))
            continue
        f, k = max(measured)
        out.append(Verdict(t, k, f, "pass" if f >= t.minimum else "miss"))
    return out


# ------------------------------------------------------------------------------ host-time limits

PREPARED_WAY = "Numba kernel, parameters packed once (helpers.prepared_launch)"


def _prepared_us(record):
    row = next((r for r in record.get("rows", []) if r.get("way") == PREPARED_WAY), None)
    return row.get("host_us") if row and row.get("correct") else None


def _graph_us(record):
    return record.get("launch_cost", {}).get("numba", {}).get("graph", {}).get("done_us")


def _tensor_fraction(record):
    bf16 = [
        r["of_cublas"]
        for r in record.get("rows", [])
        if r.get("kernel") == "course" and r.get("precision") == "bf16" and r.get("status") == "ok"
    ]
    return max(bf16) if bf16 else None


@dataclass(frozen=True)
class Limit:
    """A bound on one figure read from the record another script wrote: host microseconds at most
    (``unit`` "µs") or a fraction of a library's speed at least (``unit`` "of cuBLAS")."""

    name: str
    record: str  # which record: "launch_cost", "streams_graphs" or "tensor_gemm"
    read: object  # record -> the figure, or None when the row is missing or was wrong
    bound: float
    why_missed: str
    unit: str = "µs"

    def met(self, value) -> bool:
        return value <= self.bound if self.unit == "µs" else value >= self.bound


LIMITS = (
    Limit(
        "Numba kernel launched with its parameters packed once: ≤ 5 µs of host time per launch in a queued batch",
        "launch_cost",
        _prepared_us,
        5.0,
        "each launch is one cuLaunchKernel from Python; a miss means the host is slow or busy (compare the "
        "CUDA C rows of the same run, which pay the same call).",
    ),
    Limit(
        "Numba launches replayed from a CUDA graph: ≤ 2 µs per kernel",
        "streams_graphs",
        _graph_us,
        2.0,
        "a replay is one call for the whole graph; a miss means the kernels themselves take longer than "
        "the launch (the figure is the time to finish, not only to queue).",
    ),
    Limit(
        "tensor-core GEMM in CUDA C (bf16 in, FP32 accumulate; mma.sync or wgmma) ≥ 50% of cuBLAS bf16",
        "tensor_gemm",
        _tensor_fraction,
        0.5,
        "mma.sync alone stayed near 45% on an H200: Hopper's full tensor-core rate needs wgmma "
        "(bench/tensor_wgmma.cu, sm_90a); bench/tensor_gemm.py records each tile shape's registers and "
        "blocks per SM, and a wgmma row that failed says why.",
        unit="of cuBLAS",
    ),
)


@dataclass(frozen=True)
class LimitVerdict:
    limit: Limit
    value: float | None
    result: str  # "pass" | "miss" | "not measured"


def judge_limits(records: dict, limits=LIMITS) -> list:
    """Pass or miss for each host-time limit, from the records of this run (absent record: not measured)."""
    out = []
    for lim in limits:
        rec = records.get(lim.record)
        value = lim.read(rec) if rec else None
        result = "not measured" if value is None else "pass" if lim.met(value) else "miss"
        out.append(LimitVerdict(lim, value, result))
    return out


def render_limits(verdicts: list) -> str:
    lines = ["| Target | Measured | Result |", "|---|---:|---|"]
    for v in verdicts:
        measured = (
            "—"
            if v.value is None
            else f"{v.value:.2f} µs"
            if v.limit.unit == "µs"
            else f"{100 * v.value:.0f}% of cuBLAS"
        )
        result = {"pass": "pass", "miss": "**miss**"}.get(v.result, v.result)
        if v.result == "miss":
            result += f": {v.limit.why_missed}"
        lines.append(f"| {v.limit.name} | {measured} | {result} |")
    return "\n".join(lines) + "\n"


# ------------------------------------------------------------------------------ the report


def render_markdown(meta: dict, ceilings: dict, rows: list, verdicts: list) -> str:
    """docs/benchmarks-<gpu>.md: the machine, the ceilings, every kernel, every target."""
    L = []
    L.append("# Benchmarks")
    L.append("")
    L.append(
        f"Written by `{meta.get('command', 'python bench/run.py')}` on {meta.get('date', '?')}. "
        "Do not edit by hand: run `make bench` on a GPU again. Every number below was measured "
        "in that one run; fractions are of the ceilings measured in the same run."
    )
    if meta.get("quick"):
        L.append("")
        L.append(
            "**Quick mode** (`--quick`): smaller sizes and fewer repetitions; the fractions are less "
            "reliable than a full run's and the targets are judged anyway."
        )
    L.append("")
    L.append("| Machine | |")
    L.append("|---|---|")
    for k in ("GPU", "Driver", "Libraries", "Python", "Timing"):
        if meta.get(k):
            L.append(f"| {k} | {meta[k]} |")
    L.append("")
    L.append("## Ceilings (measured in this run)")
    L.append("")
    L.append("| Ceiling | Measured | How |")
    L.append("|---|---|---|")
    for key in ("copy", "sgemm"):
        c = ceilings.get(key)
        if c is None:
            continue
        kind = "bandwidth" if key == "copy" else "flops"
        value = format_rate(kind, c.value) if c.value else f"failed: {c.error}"
        L.append(f"| {c.label} | {value} | {c.detail} |")
    L.append("")
    L.append("## Kernels")
    L.append("")
    L.append(
        "Bandwidth kernels are judged against the copy ceiling (bytes each kernel must move, "
        "divided by its median time); SGEMM steps against cuBLAS (2·M·N·K FLOPs)."
    )
    L.append("")
    L.append("| Kernel | Size | Median time | Achieved | Of ceiling | Runs | Status |")
    L.append("|---|---|---:|---:|---:|---:|---|")
    for r in rows:
        status = r.status if r.status == "ok" else f"{r.status}: {r.error}" if r.error else r.status
        if r.note and r.status == "ok":
            status += f" ({r.note})"
        L.append(
            f"| {r.label} | {r.size} | {format_time(r.seconds)} | {format_rate(r.kind, r.rate)} | "
            f"{format_fraction(fraction(r, ceilings))} | {r.samples or '—'} | {status} |"
        )
    L.append("")
    L.append("## Targets")
    L.append("")
    L.append("| Target | Measured | Result |")
    L.append("|---|---:|---|")
    for v in verdicts:
        measured = format_fraction(v.value) + (f" ({v.best_key})" if v.best_key and len(v.target.keys) > 1 else "")
        result = {"pass": "pass", "miss": "**miss**"}.get(v.result, v.result)
        if v.detail:
            result += f": {v.detail}"
        L.append(f"| {v.target.name} | {measured} | {result} |")
    missed = [v for v in verdicts if v.result == "miss"]
    if missed:
        L.append("")
        L.append(
            "Missed targets and their usual causes (the causes are not measured by this script; "
            "profile with Nsight Compute to confirm):"
        )
        L.append("")
        for v in missed:
            L.append(f"- **{v.target.name}**: measured {format_fraction(v.value)}. {v.target.why_missed}")
    L.append("")
    L.append("## Method")
    L.append("")
    L.append("- Inputs are fresh random arrays (seed printed below), generated on the GPU for each kernel.")
    L.append(
        "- Each kernel runs once and its output is checked against NumPy/CuPy before any timing counts; "
        "the output of the last timed run is checked again. A wrong result marks the row `failed`."
    )
    L.append(
        "- Timing: CUDA events on the default stream around a batch of launches (the batch is queued "
        "behind one untimed launch, so Python's launch overhead is hidden); warm-up first; the "
        "median of the batches, divided by the batch size."
    )
    L.append(
        "- Bandwidth = bytes the kernel must read and write (e.g. 12 bytes per element for "
        "vector add) / median time. FLOP/s = 2·M·N·K / median time."
    )
    L.append(
        "- Copy ceiling: `cudaMemcpyAsync` device to device (counts read + write bytes). "
        "SGEMM ceiling: `cupy.matmul` on float32 with `CUPY_TF32=0` and `NVIDIA_TF32_OVERRIDE=0` "
        "(cuBLAS compute type 32F); its scaled error against float64 is reported to prove TF32 was off."
    )
    if meta.get("seed") is not None:
        L.append(f"- Seed: {meta['seed']}.")
    L.append("")
    return "\n".join(L)
