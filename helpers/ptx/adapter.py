"""A `PtxRun` as a `helpers.tracer.Trace`: CUDA C gets the Numba tracer's verdicts, metrics, pictures.

    t = helpers.ptx.trace(src, "clamp", 3, 128, x, y, np.float32(-1), np.float32(1), np.int32(n),
                          outputs=("y",))
    t.verdicts, t.metrics, t.show()

Why a separate module: helpers.ptx runs kernels and knows nothing of verdicts; the tracer package
sits below it, so only this adapter imports both (helpers.ptx.trace runs, then calls it).
"""

from __future__ import annotations

from ..tracer.result import Trace

__all__ = ["to_trace"]


def to_trace(r, outputs=(), language="cuda_c") -> Trace:
    """The Trace of a finished PtxRun; `outputs`: array names (or ids) that every thread must fill;
    `language`: whose words the verdicts use ("python" for a Numba kernel run from its PTX)."""
    t = Trace.from_table(
        r.kernel_name,
        r.griddim,
        r.blockdim,
        r.arrays,
        r.table,
        r.locations,
        out_of_bounds=r.out_of_bounds,
        divergent=r.divergent,
        warp_misuse=r.warp_misuse,
        cas_locations=r.cas_locations,
        language=language,
    )
    t.outputs = [o if isinstance(o, int) else t.array_id(o) for o in outputs]
    t.printed = r.printed
    return t
