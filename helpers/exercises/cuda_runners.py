"""GPU runners of the CUDA C exercises (notebooks 08 and 09): launch a learner's CUDA C with
CuPy on given inputs, return (output, guard band intact).

Why a module of their own, outside ``helpers/problems``: the batch grader judges from its own
process and runs these in the student's process, which cannot read ``helpers/problems`` (it
holds the references). Nothing here knows an answer: only how each library launches a kernel.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from .libraries import gpu_output_with_guard, guard_intact

LEAKY_IN, LEAKY_OUT = "float32 x, float32 alpha", "float32 y"
L2_IN, L2_OUT = "float32 x", "float32 y"
LINCOMB_ARGS = "float a, float* x, float b, float* y, float* z"


def run_leaky(op, values, block=128):
    import cupy as cp

    k = cp.ElementwiseKernel(LEAKY_IN, LEAKY_OUT, op, "leaky_relu")
    return cp.asnumpy(k(cp.asarray(values["x"]), np.float32(values["alpha"]))), True


def run_l2(answer, values, block=128):
    import cupy as cp

    m, r, p, ident = answer
    k = cp.ReductionKernel(L2_IN, L2_OUT, m, r, p, ident, "l2_norm")
    return np.asarray(cp.asnumpy(k(cp.asarray(values["x"]))), dtype=np.float32).reshape(()), True


def run_clamp(src, values, block=128):
    import cupy as cp

    n = int(values["n"])
    full, y = gpu_output_with_guard(cp, n)
    k = cp.RawKernel(src, "clamp")
    k(((n + block - 1) // block,), (block,), (cp.asarray(values["x"]), y, values["lo"], values["hi"], np.int32(n)))
    return cp.asnumpy(y), guard_intact(cp, full, n)


def run_axpby(src, values, block=128):
    import cupy as cp

    n = int(values["n"])
    full, out = gpu_output_with_guard(cp, n)
    k = cp.RawKernel('extern "C" { ' + src + "\n}\n", "axpby")  # what SourceModule compiles, via CuPy
    x, y = cp.asarray(values["x"]), cp.asarray(values["y"])
    k(((n + block - 1) // block,), (block,), (out, x, y, values["a"], values["b"], np.int32(n)))
    return cp.asnumpy(out), guard_intact(cp, full, n)


def run_lincomb(op, values, block=128):
    import cupy as cp

    from .. import cuda_c

    n = len(values["x"])
    full, z = gpu_output_with_guard(cp, n)
    k = cp.RawKernel(cuda_c.pycuda_elementwise_source(LINCOMB_ARGS, op, "lincomb"), "lincomb")
    x, y = cp.asarray(values["x"]), cp.asarray(values["y"])
    k((8,), (128,), (np.float32(values["a"]), x, np.float32(values["b"]), y, z, np.uint64(n)))
    return cp.asnumpy(z), guard_intact(cp, full, n)


def pycuda_kernel(source: str, name: str):
    """A PyCUDA SourceModule kernel of the course's: the real PyCUDA on a GPU (the notebook's
    primary context), the CPU stand-in otherwise."""
    from .. import env

    if env.on_gpu():
        import pycuda.autoprimaryctx  # noqa: F401 - the notebook's context
        from pycuda.compiler import SourceModule
    else:
        from ..standins.pycuda import SourceModule
    return SourceModule(source).get_function(name)


class RecordedKernel:
    """A PyCUDA kernel that records each launch (grid, block) before returning: the check sees how
    often and how it was launched, not only what came out."""

    def __init__(self, kernel, given=()):
        self._kernel, self._given = kernel, given
        self.launches = []  # library_calls.LaunchSeen
        self.wrapped = []  # per launch: (drv wrapper name, wraps a given array itself?) for In / Out / InOut

    def _seen(self, grid, block):
        from .library_calls import LaunchSeen, dims

        self.launches.append(LaunchSeen(dims(grid), dims(block), True))

    def __call__(self, *args, **kwargs):
        done = self._kernel(*args, **kwargs)  # a launch PyCUDA refuses raises its own message first
        self._seen(kwargs.get("grid", (1, 1)), kwargs.get("block", (1, 1, 1)))
        self.wrapped.append(
            [(type(a).__name__, any(a.array is g for g in self._given)) for a in args if hasattr(a, "array")]
        )
        return done

    def prepared_call(self, grid, block, *args, **kwargs):
        done = self._kernel.prepared_call(grid, block, *args, **kwargs)
        self._seen(grid, block)
        return done

    def __getattr__(self, name):  # prepare, num_regs...: the kernel's own
        return getattr(self._kernel, name)


class PycudaCall(NamedTuple):
    result: object  # what the learner's function returned
    args: list  # the arguments afterwards (drv.InOut changes them in place)
    launches: list  # library_calls.LaunchSeen
    wrapped: list  # RecordedKernel.wrapped


def call_with_pycuda_kernel(fn, kernel: dict, args: list) -> PycudaCall:
    """``fn(kernel, *args)`` with the course's PyCUDA kernel built here, recorded."""
    recorded = RecordedKernel(pycuda_kernel(str(kernel["source"]), str(kernel["name"])), given=tuple(args))
    result = fn(recorded, *args)
    return PycudaCall(result, args, list(recorded.launches), list(recorded.wrapped))


def run_wmma_tile(src, values, block=32):
    """Notebook 18's tile kernels (exercises/tiles.py): the kernel values["kernel"] on a (N/16, M/16) grid of
    one-warp blocks, C updated in place; (C after the launch, True: C is the whole output, no guard band)."""
    import cupy as cp

    from .. import cuda_c

    a, b, c = (cp.asarray(values[k]) for k in ("a", "b", "c"))
    m, n, k = (int(values[x]) for x in ("M", "N", "K"))
    # CuPy's NVRTC searches its own CUDA include folder, which may lack crt/mma.h (mma.h includes it): the course's
    # header wheels go on the path as they do for cuda_c.compile
    fn = cp.RawKernel(src, values["kernel"], options=cuda_c.include_options())
    fn((n // 16, m // 16), (block,), (a, b, c, np.int32(m), np.int32(n), np.int32(k)))
    cp.cuda.get_current_stream().synchronize()
    return cp.asnumpy(c), True


RUNNERS = {f.__name__: f for f in (run_leaky, run_l2, run_clamp, run_axpby, run_lincomb, run_wmma_tile)}
