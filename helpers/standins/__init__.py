"""CPU stand-ins for the libraries that launch CUDA C (CuPy, PyCUDA, cuda.core, the driver API) and cuda.compute.

    cp = helpers.standins.library("cupy")            # real CuPy on a GPU, the stand-in in CPU mode
    core = helpers.standins.library("cuda.core")
    driver = helpers.standins.library("cuda.bindings.driver")

Why: notebooks 08-11 launch CUDA C through four libraries. Without a GPU those libraries cannot
launch anything, yet the kernels and the launches are what the notebooks teach. Each stand-in
mirrors only the calls the notebooks use, with the real call signatures; arrays are NumPy
underneath, and every launch runs the kernel's PTX (compiled by NVRTC, as the real library
compiles it) thread by thread in helpers.ptx. An out-of-bounds access, a race, a divergent
barrier or warp misuse is one sentence (a KernelError naming kernel, thread and line); a feature
a stand-in does not model (timing, streams running concurrently, memory pools) is one sentence
saying it needs a GPU. On a GPU, ``library`` returns the real module and nothing here runs.

One module per library: ``cupy`` (its streams and CUDA Graph capture in ``cupy_streams``), ``pycuda``
(driver, compiler.SourceModule, gpuarray, elementwise.ElementwiseKernel), ``cuda_core``, ``driver`` and
``cuda_compute`` (NumPy semantics, notebook 14); ``_launch`` is what they share.
"""

from __future__ import annotations

import importlib

from ..env import on_gpu
from ..errors import LearnerAttributeError, LearnerValueError, shown

STANDINS = {
    "cupy": "helpers.standins.cupy",
    "cuda.core": "helpers.standins.cuda_core",
    "cuda.bindings.driver": "helpers.standins.driver",
    "pycuda": "helpers.standins.pycuda",
    "cuda.compute": "helpers.standins.cuda_compute",
}

__all__ = ["STANDINS", "library"]


def library(name: str):
    """The module a notebook launches kernels with: the real `name` on a GPU, its stand-in otherwise."""
    if not isinstance(name, str) or name not in STANDINS:
        raise LearnerValueError(
            f"no CPU stand-in for {shown(name)}: helpers.standins.library takes one of "
            f"{', '.join(map(repr, STANDINS))}."
        )
    return importlib.import_module(name if on_gpu() else STANDINS[name])


def __getattr__(attr):
    """``helpers.standins.cupy`` and the others load on first use (each compiles nothing at import)."""
    if attr in ("cupy", "cuda_core", "driver", "pycuda"):
        return importlib.import_module(f"{__name__}.{attr}")
    raise LearnerAttributeError(
        f"helpers.standins has no {attr!r}: use helpers.standins.library(name) with one of {', '.join(STANDINS)}."
    )
