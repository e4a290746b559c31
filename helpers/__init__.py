"""Helpers for the CUDA-from-Python course.

``import helpers`` must come first in every notebook: it decides CPU (simulator) or GPU
mode before Numba is imported and prints a one-line banner. The modules, one job each:

- ``helpers.env``        mode detection, the banner, ``gpu_only`` and ``size``
- ``helpers.geometry``   launch geometry and the interactive grid explorer
- ``helpers.trace``      run a kernel on the CPU and record every memory access
- ``helpers.verdicts``   races, out-of-bounds and other verdicts, plus metrics, from a trace
- ``helpers.draw``       matplotlib pictures of grids and traces
- ``helpers.exercises``  self-checking exercises: check, hint, solution, progress
- ``helpers.grade``      the instructors' batch grader
- ``helpers._numba``     the only module that touches Numba internals
"""

from . import env
from .env import MODE, banner, banner_text, gpu_only, on_gpu, size
from .errors import CourseError

__all__ = ["env", "MODE", "banner", "banner_text", "gpu_only", "on_gpu", "size", "CourseError", "trace", "progress"]


def _install_ipython_handler() -> bool:
    """Show CourseError as its one-sentence message, not a traceback through helpers."""
    try:
        ip = get_ipython()  # noqa: F821 - defined only inside IPython
    except NameError:
        return False

    def _handler(shell, etype, value, tb, tb_offset=None):
        print(f"{etype.__name__}: {value}", file=__import__("sys").stderr)
        return None

    ip.set_custom_exc((CourseError,), _handler)
    return True


if _install_ipython_handler():
    banner()


def __getattr__(name):
    # Heavy modules load on first use so `import helpers` stays fast and light.
    if name == "trace":
        from .trace import trace

        return trace
    if name == "progress":
        from .exercises import progress

        return progress
    raise AttributeError(f"module 'helpers' has no attribute {name!r}")
