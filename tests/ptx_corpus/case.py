"""One differential case, its seeded inputs, and the comparison of two runs of it.

Why a case carries its own tolerance: most PTX float instructions (add/mul/fma/div.rn/
sqrt.rn/cvt) are correctly rounded, so the interpreter must agree with the GPU bit for bit;
only `.approx` instructions (ex2, lg2, sin, cos, rsqrt, rcp/div.approx) are allowed to
differ, by what the PTX ISA states for them (helpers/ptx/alu.py computes them correctly
rounded). Integers are always compared bit for bit.
"""

from __future__ import annotations

import hashlib
import zlib
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

CATEGORIES = {
    "reduction": "shared-memory reductions with __syncthreads",
    "atomic": "atomics (only order-independent results compared)",
    "warp": "warp shuffles and votes",
    "indexing": "2-D/3-D indexing, pitch, grid-stride loops, shared tiles",
    "integer": "integer overflow, unsigned wrap, shifts, division of negatives, bit tricks",
    "conversion": "float <-> int conversions: NaN, inf, out of range, rounding modes",
    "nan-inf": "NaN and infinity: arithmetic, fminf/fmaxf, copysign, comparisons",
    "denormal": "subnormal inputs and outputs, with and without -ftz",
    "rounding": "directed rounding intrinsics (__fadd_rz, __fmul_rd, ...) and rint/floor/ceil",
    "double": "double precision arithmetic and libdevice functions",
    "half": "half precision (cuda_fp16.h)",
    "approx": ".approx instructions: __expf, __sinf, __fdividef, rsqrtf, --use_fast_math",
    "control": "calls, local arrays, divergent loops, vector loads",
    "course": "every CUDA C source of the course, collected automatically",
}


@dataclass(frozen=True)
class Case:
    """A launch of `kernel` (CUDA C `source`) on inputs `make(rng)` returns, by parameter name, in order.

    `outputs`: the arrays compared after the launch. `ulps`/`atol`: float tolerance (an int or a
    {output: value} dict); 0/0 means bit-identical, so -0.0 vs +0.0 is a mismatch. `nan`: "any"
    (any NaN equals any NaN: the ISA does not fix the payload of a computed NaN) or "bits" (the
    payload must match: neg/abs/copysign only move the sign bit). `refused`: why the interpreter
    is expected to refuse this kernel (the GPU still runs it, so support can be proved later).
    `fp16`: compile with the cuda_fp16.h include directory. `exact_approx`: why a 0-ulp tolerance holds
    although the PTX has `.approx` instructions (libdevice uses them as seeds it then corrects).
    """

    name: str
    category: str
    source: str
    kernel: str
    grid: tuple | int
    block: tuple | int
    make: Callable
    outputs: tuple
    ulps: int | dict = 0
    atol: float | dict = 0.0
    nan: str = "any"
    options: tuple = ()
    shared_bytes: int = 0
    note: str = ""
    refused: str = ""
    fp16: bool = False
    exact_approx: str = ""
    origin: str = ""  # course cases: where the source was found
    extra: dict = field(default_factory=dict, compare=False, hash=False)

    def inputs(self) -> dict:
        """Fresh inputs, the same on every machine: the rng is seeded by the case name."""
        return self.make(np.random.default_rng(zlib.crc32(self.name.encode())))

    def tolerance(self, output):
        u = self.ulps.get(output, 0) if isinstance(self.ulps, dict) else self.ulps
        a = self.atol.get(output, 0.0) if isinstance(self.atol, dict) else self.atol
        return int(u), float(a)

    def fingerprint(self, inputs=None) -> str:
        """What the stored GPU result was computed from: a changed case needs a new GPU run."""
        h = hashlib.sha256()
        for part in (self.source, self.kernel, repr(_dims(self.grid)), repr(_dims(self.block)), repr(self.options)):
            h.update(part.encode() + b"\0")
        h.update(str(self.shared_bytes).encode() + (b"fp16" if self.fp16 else b""))
        for k, v in (inputs or self.inputs()).items():
            a = np.asarray(v)
            h.update(k.encode() + a.dtype.str.encode() + repr(a.shape).encode() + a.tobytes())
        return h.hexdigest()[:16]


def _dims(d):
    d = (d,) if isinstance(d, int) else tuple(d)
    return d + (1,) * (3 - len(d))


dims = _dims

# ----------------------------------------------------------------------------- inputs

F32_SPECIALS = np.array(
    [0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 1.5, -1.5, 2.5, -2.5, 3.5, np.inf, -np.inf, np.nan, -np.nan]
    + [3.4028235e38, -3.4028235e38, 1.1754944e-38, -1.1754944e-38, 1e-45, -1e-45, 1e-40, -3e-39]
    + [2147483520.0, 2147483648.0, -2147483648.0, -2147483904.0, 4294967040.0, 4294967296.0, 3e9, -3e9]
    + [1e20, -1e20, 0.49999997, 8388609.0, 16777217.0, 0.1, -0.7, 1e-30, 6.0e-8, 65504.0, 65520.0],
    np.float32,
)


def f32_mix(rng, n, scale=100.0):
    """Specials, then ordinary values, then random bit patterns (NaN payloads, subnormals, huge)."""
    k = len(F32_SPECIALS)
    normal = (rng.standard_normal(n) * scale).astype(np.float32)
    bits = rng.integers(0, 2**32, n, dtype=np.uint64).astype(np.uint32).view(np.float32)
    out = np.where(np.arange(n) % 3 == 0, bits, normal)
    out[: min(k, n)] = F32_SPECIALS[: min(k, n)]
    return out.astype(np.float32)


def f64_mix(rng, n, scale=100.0):
    specials = np.array(
        [0.0, -0.0, 1.0, -1.0, 0.5, 2.5, -2.5, np.inf, -np.inf, np.nan, 1.7976931348623157e308, 2.2250738585072014e-308]
        + [5e-324, -5e-324, 1e-310, 9007199254740993.0, 4503599627370497.0, 1e300, -1e-300, 0.1],
        np.float64,
    )
    normal = rng.standard_normal(n) * scale
    bits = rng.integers(0, 2**63, n, dtype=np.int64).view(np.float64) * np.where(rng.random(n) < 0.5, -1, 1)
    out = np.where(np.arange(n) % 3 == 0, bits, normal)
    out[: min(len(specials), n)] = specials[: min(len(specials), n)]
    return out


def i32_mix(rng, n):
    specials = np.array(
        [0, 1, -1, 2, -2, 7, -7, 2**31 - 1, -(2**31), 2**30, -(2**30), 65535, 65536, 255, -256], np.int64
    )
    out = rng.integers(-(2**31), 2**31, n, dtype=np.int64)
    out[1::4] = rng.integers(-1000, 1000, len(out[1::4]))
    out[: min(len(specials), n)] = specials[: min(len(specials), n)]
    return out.astype(np.int32)


# ----------------------------------------------------------------------------- comparison

_UINT = {2: np.uint16, 4: np.uint32, 8: np.uint64}
_SINT = {2: np.int16, 4: np.int32, 8: np.int64}


def ordered(a):
    """Float bits as integers ordered like the floats (+0 and -0 both 0): ulp distance = difference."""
    a = np.ascontiguousarray(a)
    s = a.view(_SINT[a.itemsize]).astype(object if a.itemsize == 8 else np.int64)
    mag = a.view(_UINT[a.itemsize]).astype(object if a.itemsize == 8 else np.int64) & ((1 << (8 * a.itemsize - 1)) - 1)
    return np.where(s < 0, -mag, mag)


def ulp_distance(a, b):
    """Per-element distance in units in the last place; inf where exactly one side is NaN, 0 for two NaNs."""
    a, b = np.asarray(a), np.asarray(b)
    na, nb = np.isnan(a), np.isnan(b)
    d = np.abs(ordered(np.where(na | nb, 0, a).astype(a.dtype)) - ordered(np.where(na | nb, 0, b).astype(b.dtype)))
    d = d.astype(np.float64)
    return np.where(na != nb, np.inf, np.where(na & nb, 0.0, d))


@dataclass
class Verdict:
    ok: bool
    max_ulps: float = 0.0  # over float elements that are not both NaN
    bad: int = 0
    first: str = ""


def compare(gpu, cpu, ulps=0, atol=0.0, nan="any") -> Verdict:
    """Does the interpreter's array `cpu` match the GPU's `gpu` within the case's tolerance?"""
    gpu, cpu = np.asarray(gpu), np.asarray(cpu)
    if gpu.dtype != cpu.dtype or gpu.shape != cpu.shape:
        return Verdict(False, float("inf"), -1, f"GPU gave {gpu.dtype}{gpu.shape}, interpreter {cpu.dtype}{cpu.shape}")
    g, c = gpu.ravel(), cpu.ravel()
    if g.dtype.kind != "f":
        bad = np.flatnonzero(np.any(g.view(np.uint8).reshape(len(g), -1) != c.view(np.uint8).reshape(len(c), -1), 1))
        first = f"[{bad[0]}] GPU {g[bad[0]]!r}, interpreter {c[bad[0]]!r}" if len(bad) else ""
        return Verdict(len(bad) == 0, 0.0, len(bad), first)
    U = _UINT[g.itemsize]
    same_bits = g.view(U) == c.view(U)
    dist = ulp_distance(g, c)
    both_nan = np.isnan(g) & np.isnan(c)
    if nan == "any":
        ok = same_bits | both_nan
    else:
        ok = same_bits.copy()
    if ulps or atol:
        with np.errstate(invalid="ignore", over="ignore"):
            close = (dist <= ulps) | (np.abs(g.astype(np.float64) - c.astype(np.float64)) <= atol)
        ok |= close & ~np.isnan(g) & ~np.isnan(c)
    bad = np.flatnonzero(~ok)
    finite = dist[~both_nan]
    max_ulps = float(finite.max()) if len(finite) else 0.0
    first = ""
    if len(bad):
        i = bad[0]
        first = (
            f"[{i}] GPU {g[i]!r} (0x{int(g.view(U)[i]):0{2 * g.itemsize}x}), interpreter {c[i]!r} "
            f"(0x{int(c.view(U)[i]):0{2 * g.itemsize}x}), {dist[i]:g} ulps"
        )
    return Verdict(len(bad) == 0, max_ulps, len(bad), first)
