"""The best SGEMM step in CUDA C (bench/sgemm_c.cu), compiled and launched through cuda.core.

    COURSE_MODE=gpu python bench/sgemm_c.py --out docs/data/sgemm_c.json

The tuned Numba kernel's tile (128 x 128, 8 x 8 per thread, double-buffered shared tiles) and a wider
one (128 x 256, 8 x 16 per thread), plus float4 (128-bit) loads/stores, which Numba's indexing does not
emit, and __launch_bounds__ (numba-cuda has launch_bounds= and max_registers= too, unused by the Numba
steps: docs/sgemm-ladder.md). Each variant is checked against float64 before timing and timed against
cuBLAS (TF32 off) in the same run.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

os.environ.setdefault("CUPY_TF32", "0")
os.environ.setdefault("NVIDIA_TF32_OVERRIDE", "0")
ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

SOURCE = Path(__file__).with_name("sgemm_c.cu")
BM = BN = 128
# (label, macros): MINB = blocks per SM promised to the compiler (caps registers at 65536/(256*MINB))
VARIANTS = (
    # the bench's step: 8 x 16 outputs per thread halve the shared reads per FMA; 229 registers, 1 block/SM
    ("CUDA C, float4, 128x256 tile, 8x16 per thread, BK 8, 1 block/SM", {"BK": 8, "BN": 256, "TN": 16, "MINB": 1}),
    (
        "CUDA C, float4, 8x16 per thread, next k-step's reads first",
        {"BK": 8, "BN": 256, "TN": 16, "MINB": 1, "FRAGDB": 1},
    ),
    ("CUDA C, float4, BK 8, 2 blocks/SM, next k-step's reads first", {"BK": 8, "MINB": 2, "FRAGDB": 1}),
    ("CUDA C, float4, BK 8, 2 blocks/SM", {"BK": 8, "MINB": 2}),
    ("CUDA C, float4, BK 16, 2 blocks/SM", {"BK": 16, "MINB": 2}),
    ("CUDA C, float4, BK 16, 1 block/SM", {"BK": 16, "MINB": 1}),
)


def compile_kernel(macros: dict, arch: str):
    from cuda.core import Program, ProgramOptions

    opts = ProgramOptions(arch=arch, define_macro=[(k, str(v)) for k, v in macros.items()])
    return Program(SOURCE.read_text(), code_type="c++", options=opts).compile("cubin").get_kernel("sgemm_vec")


def threads(macros: dict) -> int:
    """(BM / 8) x (BN / TN) threads: 8 x TN outputs each."""
    return (BM // 8) * (macros.get("BN", BN) // macros.get("TN", 8))


def launcher(kernel, m, n, k, A, B, C, macros):
    """A zero-argument launch on the legacy default stream (where the Timer's events are recorded)."""
    import numpy as np
    from cuda.core import Device, LaunchConfig, launch

    bn, bk = macros.get("BN", BN), macros["BK"]
    if m % BM or n % bn or k % bk:
        raise ValueError(f"sgemm_vec needs M a multiple of {BM}, N of {bn} and K of {bk}; got {m}, {n}, {k}")
    stream = Device().default_stream
    cfg = LaunchConfig(grid=(n // bn, m // BM), block=threads(macros))
    args = (np.int32(m), np.int32(n), np.int32(k), A.data.ptr, B.data.ptr, C.data.ptr)
    return lambda: launch(stream, cfg, kernel, *args)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", default="docs/data/sgemm_c.json")
    p.add_argument("--size", type=int, default=4096)
    p.add_argument("--seed", type=int, default=20261123)
    a = p.parse_args(argv)
    from cuda.core import Device

    from bench.timing import machine, sgemm_timer

    dev = Device(0)
    dev.set_current()
    b = sgemm_timer(a.size, a.seed)
    cp, s = b.cp, a.size
    ceiling = b.ceiling_sgemm().value
    A, B = b.rand((s, s)), b.rand((s, s))
    C = cp.full((s, s), cp.nan, dtype=cp.float32)
    recs = []
    for label, macros in VARIANTS:
        rec = {"label": label, "macros": macros}
        try:
            kern = compile_kernel(macros, f"sm_{dev.arch}")
            at = kern.attributes
            rec.update(
                registers=at.num_regs,
                local_bytes=at.local_size_bytes,
                shared_bytes=at.shared_size_bytes,
                blocks_per_sm=kern.occupancy.max_active_blocks_per_multiprocessor(threads(macros), 0),
            )
            go = launcher(kern, s, s, s, A, B, C, macros)
            C.fill(cp.nan)
            go()
            dev.sync()
            err = b.sgemm_error(A, B, C)
            rec["scaled_error"] = float(err)
            if not err <= s * 2.0**-24:
                rec.update(status="wrong result")
            else:
                secs, runs = b.time(go)
                rec.update(status="ok", seconds=secs, runs=runs, tflops=2 * s**3 / secs / 1e12)
        except Exception as e:  # a variant that fails is recorded, the others still run
            rec.update(status="failed", error=f"{type(e).__name__}: {str(e).splitlines()[0][:200]}")
        recs.append(rec)
    ceiling = max(ceiling, b.ceiling_sgemm().value)
    for r in recs:
        if r.get("status") == "ok":
            r["of_cublas"] = r["tflops"] * 1e12 / ceiling
        print(
            f"{r['label']:38s} {r['status']}: {r.get('tflops', 0):5.1f} TFLOP/s "
            f"({100 * r.get('of_cublas', 0):.0f}%) regs {r.get('registers')} local {r.get('local_bytes')} "
            f"blocks/SM {r.get('blocks_per_sm')} {r.get('error', '')}",
            flush=True,
        )
    out = {"size": s, "machine": machine(), "cublas_tflops": ceiling / 1e12, "variants": recs}
    Path(a.out).parent.mkdir(parents=True, exist_ok=True)
    Path(a.out).write_text(json.dumps(out, indent=1) + "\n")
    return 0 if any(r.get("status") == "ok" for r in recs) else 1


if __name__ == "__main__":
    sys.exit(main())
