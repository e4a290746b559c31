"""Helpers for the CUDA-from-Python course.

``import helpers`` must come first in every notebook: it decides CPU (simulator) or GPU
mode before Numba is imported and prints a one-line banner. Learners use ``helpers.trace``,
``helpers.progress()``, ``helpers.gpu_only`` and ``helpers.size``; the rest, one job each:

- ``helpers.env``         environment and mode: detection, the banner, ``gpu_only``, ``size``
- ``helpers.limits``      the hardware limits of a launch, defined once
- ``helpers.accesses``    the access log both CPU interpreters write (access kinds, ``ArrayInfo``)
- ``helpers.geometry``    launch geometry, launch pictures and the grid explorer (no Numba)
- ``helpers.tracer``      the CPU tracer: run a kernel, record every access, verdicts, metrics, pictures
- ``helpers.exercises``   the exercise engine: kinds, inputs, launch rules, checks, explanations, progress
- ``helpers.problems``    the course's exercises as data, one module per notebook
- ``helpers.grading``     the instructors' batch grader (``python -m helpers.grade``)
- ``helpers.cuda_c``      CUDA C: compile with NVRTC, check ``cuda.bindings`` results
- ``helpers.ptx``         run one CUDA C launch on the CPU from its PTX, thread by thread
- ``helpers.standins``    CPU stand-ins for CuPy, PyCUDA, cuda.core and the driver API (launches run in helpers.ptx)
- ``helpers._numba``      the only module that touches Numba internals

Layers, lowest first (a module imports only from its own layer or lower ones;
``tests/project/test_import_graph.py`` enforces it): errors, limits, accesses, _style, _files -> _numba, env,
cuda_c -> geometry -> tracer -> ptx -> standins -> exercises -> problems -> grading and this package root.
"""

# First, before anything below can raise: in IPython a CourseError shows as its sentence and a
# bug inside helpers as one line (helpers/_safety.py); outside IPython this does nothing.
from . import _safety

_IN_IPYTHON = _safety.install()

from . import env, standins  # noqa: E402
from .env import MODE, banner, banner_text, gpu_only, on_gpu  # noqa: E402
from .errors import CourseError, LearnerError  # noqa: E402
from .sizes import size  # noqa: E402

if not MODE.gpu and not env.NO_CUDA_WHEELS:
    # CPU mode with Numba's compiler at hand: a notebook's kernel[grid, block](...) runs from the kernel's PTX
    # on the course's interpreter where it can, else on the simulator (helpers/ptx/launch.py says when and why)
    from .ptx import launch as _launch

    _launch.install(_launch.Launcher())

__all__ = [
    "env",
    "standins",
    "MODE",
    "banner",
    "banner_text",
    "gpu_only",
    "on_gpu",
    "size",
    "CourseError",
    "LearnerError",
    "trace",
    "progress",
    "last_error",
]

if _IN_IPYTHON:
    banner()


def last_error() -> None:
    """Print the full traceback behind the last one-line error from helpers (to report a bug)."""
    _safety.last_error()


def trace(kernel, *args, **options):
    """Run `kernel` on the CPU, one thread at a time, and record every memory access.

    `helpers.trace(kernel, griddim, blockdim, *args, outputs=("out",))` or
    `helpers.trace(kernel[griddim, blockdim], *args)`; returns a `Trace` (see
    `helpers.tracer`). A function here, not a module, so `helpers.trace` means the same
    whatever was imported before; the tracer itself loads on first use.
    """
    import inspect

    from .tracer import trace as _trace

    try:
        inspect.signature(_trace).bind(kernel, *args, **options)
    except TypeError as e:  # an unknown keyword: said here, not as a TypeError from inside helpers
        raise LearnerError(
            f"helpers.trace: {e}; it takes trace(kernel, griddim, blockdim, *args, outputs=(...), "
            "sharedmem=..., watchdog=..., compile_check=...)."
        ) from None
    return _trace(kernel, *args, **options)


def progress(show: bool = True):
    """Show a table of this learner's exercises (status, attempts, points, last result);
    ``show=False`` returns the rows instead."""
    from .exercises.progress import show_progress
    from .problems import all_exercises

    return show_progress(all_exercises(), show)
