"""How the grading child runs one student cell and reports on it: IPython syntax turned into
plain Python, timers and resource limits, and answers turned into plain
data that cannot run code when the grader reads them.

Used only inside the child process (``child.py`` and its runners); nothing here imports the course engine.
"""

from __future__ import annotations

import importlib
import json
import os
import re
import signal
import types

MAX_MESSAGE = 2000
_MAGIC = re.compile(r"^\s*[%!]", re.M)


class CellTimeout(BaseException):
    """Raised by the timer; a BaseException so that the engine's ``except Exception`` lets it through."""


def _on_alarm(signum, frame):
    # Re-armed: code that swallows one CellTimeout gets another every half second. Code that
    # swallows them all, or ignores SIGALRM, is killed by the parent's watchdog instead.
    signal.setitimer(signal.ITIMER_REAL, 0.5)
    raise CellTimeout()


def timed(fn, seconds: float):
    """(value, None) or (None, exception): run fn under a per-call timer, catching everything."""
    try:
        try:
            signal.signal(signal.SIGALRM, _on_alarm)
            signal.setitimer(signal.ITIMER_REAL, max(float(seconds), 0.01))
            return fn(), None
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
    except BaseException as e:  # student code may raise anything, SystemExit included
        signal.setitimer(signal.ITIMER_REAL, 0)
        return None, e


def limits(job):
    try:
        import resource

        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        if job.get("memory_mb"):
            cap = int(job["memory_mb"]) << 20
            resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
    except (ImportError, ValueError, OSError):
        pass
    try:  # Linux: die with the grader (a killed grader must not leave submissions running)
        import ctypes

        ctypes.CDLL(None).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


def jsonable(metrics) -> dict:
    """A result's metrics as JSON can keep them (anything else as text; {} if even that fails)."""
    try:
        return json.loads(json.dumps(dict(metrics or {}), default=str))
    except (TypeError, ValueError):
        return {}


_HELPERS_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep


def course_code(path: str, name: str) -> str | None:
    """'the course's own code (name from helpers/...)' when ``path`` is a file of helpers/, else None."""
    if not path.startswith(_HELPERS_DIR):
        return None
    return f"the course's own code ({name} from {os.path.relpath(path, os.path.dirname(_HELPERS_DIR.rstrip(os.sep)))})"


def unread_answer(ex_id, expr, points, missing: bool, why: str) -> dict:
    """The result row of an exercise never checked whose answer expression could not be evaluated at
    the end of the notebook: not attempted when the name is gone, else an error saying why."""
    return {
        "type": "result",
        "exercise": ex_id,
        "status": "not_attempted" if missing else "error",
        "max_points": float(points),
        "message": (
            f"no answer found: the notebook never defines `{expr}` (was the cell that defines it deleted or renamed?)."
            if missing
            else f"the answer `{expr}` could not be read: {why}."
        ),
    }


def short(text, n=MAX_MESSAGE):
    text = str(text)
    return text if len(text) <= n else text[: n - 1] + "…"


# CUDA errors after which the process's context is unusable: every later GPU call fails too.
# The child then exits with GPU_POISONED so the parent reruns the notebook without the culprit.
STICKY_CUDA_ERRORS = (
    "CUDA_ERROR_ILLEGAL_ADDRESS",
    "CUDA_ERROR_LAUNCH_FAILED",
    "CUDA_ERROR_ILLEGAL_INSTRUCTION",
    "CUDA_ERROR_MISALIGNED_ADDRESS",
    "CUDA_ERROR_HARDWARE_STACK_ERROR",
    "CUDA_ERROR_INVALID_PC",
    "CUDA_ERROR_INVALID_ADDRESS_SPACE",  # what a far out-of-bounds store gave on the H100 (error 717)
    "cudaErrorIllegalAddress",
    "cudaErrorLaunchFailure",
    "cudaErrorIllegalInstruction",
    "cudaErrorMisalignedAddress",
    "cudaErrorInvalidAddressSpace",
)


GPU_POISONED = 75


def poisons_gpu(text: str) -> bool:
    return any(code in text for code in STICKY_CUDA_ERRORS)


def gpu_context_broken(synchronize=None) -> bool:
    """Ask the GPU itself whether this process's CUDA context survived (GPU mode only).

    Why not only read the error text: the course's checks turn a failed launch into a learner's
    sentence, which need not name the CUDA error, and a check may fail in a later call than the
    launch. A sticky error (an illegal address, a failed launch) makes every later call fail, so
    one synchronize after each graded step tells the truth whatever the messages said.
    """
    try:
        if synchronize is None:
            from numba import cuda

            synchronize = cuda.synchronize
        synchronize()
    except Exception as e:  # any failure here means the context is unusable
        return True if poisons_gpu(f"{e}") else "CudaAPIError" in type(e).__name__ or "CUDA_ERROR" in f"{e}"
    return False


def describe_exception(e) -> str:
    if isinstance(e, CellTimeout):
        return "timed out"
    if isinstance(e, SystemExit):
        return f"called exit({e.code!r})"
    if isinstance(e, MemoryError):
        return "ran out of memory (MemoryError)"
    return short(f"{type(e).__name__}: {e}", 300)


class Shell:
    """Just enough of ``get_ipython()`` for course notebooks: line/cell magics run their code once
    (%time, %timeit, %%capture...), ``!shell`` lines and unknown magics are skipped."""

    def __init__(self, ns):
        self.ns = ns

    def run_line_magic(self, name, line, *_, **__):
        if name.lstrip("%") in ("time", "timeit", "prun") and line.strip():
            exec(compile(_strip_timeit_opts(line), "<magic>", "exec"), self.ns)

    def run_cell_magic(self, name, line, body, *_, **__):
        if name in ("time", "timeit", "capture", "prun"):
            exec(compile(body, "<magic>", "exec"), self.ns)
        elif name == "writefile" and line.strip():
            append = any(w in ("-a", "--append") for w in line.split()[:-1])
            with open(os.path.basename(line.split()[-1]), "a" if append else "w") as f:
                f.write(body)
            importlib.invalidate_caches()  # importable at once, whatever the folder's timestamp says

    def system(self, *_, **__):
        return None

    getoutput = system

    def __getattr__(self, name):  # anything else (events, kernel...) is a harmless no-op
        return lambda *a, **k: None


def _strip_timeit_opts(line):
    return re.sub(r"^(\s*-\w+(\s+\d+)?)+\s+", "", line)


def transform(source: str) -> str:
    if not _MAGIC.search(source):
        return source
    try:
        from IPython.core.inputtransformer2 import TransformerManager

        return TransformerManager().transform_cell(source)
    except Exception:  # any failure: fall back to dropping the lines
        return "\n".join("" if _MAGIC.match(ln) else ln for ln in source.splitlines())


def plain(x, depth=0):
    """The answer as plain values: subclasses of int/float/str/tuple/list lose their methods and
    objects with a home-made ``__eq__`` become unequal to everything (``class Liar(int)`` tricks)."""
    t = type(x)
    if t in EXACT or depth > 20:
        return x
    if t in (tuple, list):
        return t(plain(v, depth + 1) for v in x)
    if isinstance(x, bool):
        return bool(x)
    if isinstance(x, int):
        return int.__int__(x)
    if isinstance(x, float):
        return float.__float__(x)
    if isinstance(x, str):
        return str.__str__(x)
    if isinstance(x, tuple):
        return tuple(plain(v, depth + 1) for v in tuple.__iter__(x))
    if isinstance(x, list):
        return [plain(v, depth + 1) for v in list.__iter__(x)]
    eq = getattr(t, "__eq__", None)
    if isinstance(eq, types.FunctionType) or isinstance(getattr(type(t), "__eq__", None), types.FunctionType):
        return Opaque(t.__name__)
    return x


class Opaque:
    def __init__(self, name):
        self.name = name

    def __eq__(self, other):
        return False

    __hash__ = object.__hash__

    def __repr__(self):
        return f"<a {self.name} object>"


EXACT = {int, float, bool, str, complex, type(None), bytes}
