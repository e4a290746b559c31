"""The CPU tracer: run a `@cuda.jit` kernel on the CPU and record every memory access.

    t = trace(kernel, griddim, blockdim, *args, outputs=("out",))
    t = trace(kernel[griddim, blockdim], *args)
    t.ok, t.verdicts, t.metrics, t.summary(), t.show()

One job per module, in the order a traced launch uses them:

- ``records``     what is recorded: arrays, thread coordinates, the access log
- ``arrays``      ``TracedArray``: bounds-checked arrays that log every element access
- ``arguments``   a launch's arguments as traced arrays, one per piece of memory (``x`` and ``x[:]`` are one)
- ``fakecuda``    the fake ``cuda`` module a kernel runs against (threadIdx, shared, const, atomics, warp calls,
                  cg); a warp's lanes meet at a compare-and-swap, as a converged warp runs it
- ``shapes``      shared/local array shapes a GPU compiler refuses (`cuda.shared.array(out.size, ...)`)
- ``instrument``  copies of the learner's functions whose globals see the fake module
- ``launch``      how ``trace()`` reads the launch from its call (a simulated kernel keeps its last one)
- ``runner``      the scheduler (blocks, threads, barriers) and ``trace()`` itself
- ``result``      ``Trace``: what one launch did
- ``verdicts``    out-of-bounds, negative indices, uninitialised shared reads, divergent barriers, warp
                  misuse, grid syncs not reached, unwritten outputs
- ``gpumath``     ``math`` and division with GPU results (inf/nan, integer division by zero is 0)
- ``races``       two threads (or blocks) on one element with nothing ordering them
- ``findings``    ``Verdict``, and how verdict sentences name threads, lines and elements
- ``metrics``     accesses per thread, coalescing, bank conflicts
- ``constant``    constant-memory reads per warp: how many addresses each one served (``Trace.const_reads()``)
- ``pictures``    matplotlib pictures of a trace
"""

from ..accesses import ATOMIC, READ, WRITE, ArrayInfo
from .metrics import Metrics
from .result import Trace
from .runner import trace
from .verdicts import VERDICT_KINDS, Verdict

__all__ = ["trace", "Trace", "ArrayInfo", "Verdict", "Metrics", "VERDICT_KINDS", "READ", "WRITE", "ATOMIC"]
