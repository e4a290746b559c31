"""Runs INSIDE the fresh process that grades one submission (started by ``execute.py``).

Order matters:
1. read the job from stdin (cells, exercises, seeds, limits, the key that signs results), then
   point stdin at /dev/null;
2. import and SNAPSHOT the trusted objects (the engine, the exercise objects, NumPy, builtins)
   and neutralise the student's ``.check``/``.hint``/``.solution`` (a check only records its
   argument: the grader grades, after the cell);
3. run the code cells in order in one namespace (a fresh ``__main__``), each under a timer;
   a failing cell is reported and the next one runs, as in Jupyter;
4. grade each exercise with the snapshot (fresh inputs from the grader's seed) as soon as its
   answer is known, and stream every result as one signed JSON line to the results file, so a
   later crash cannot erase it; what was never checked is graded from the final namespace.
"""

from __future__ import annotations

import builtins
import functools
import hashlib
import hmac
import importlib
import json
import linecache
import os
import re
import signal
import sys
import types
import warnings

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
    except BaseException as e:  # noqa: BLE001 - student code may raise anything, SystemExit included
        signal.setitimer(signal.ITIMER_REAL, 0)
        return None, e


def _limits(job):
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


def _signer(path, key):
    out = open(path, "ab", buffering=0)

    def emit(obj):
        line = json.dumps(obj, default=str, ensure_ascii=True)
        mac = hmac.new(key, line.encode(), hashlib.sha256).hexdigest()
        out.write(f"{mac} {line}\n".encode())

    return emit


def _short(text, n=MAX_MESSAGE):
    text = str(text)
    return text if len(text) <= n else text[: n - 1] + "…"


# CUDA errors after which the process's context is unusable: every later GPU call fails too.
# The child then exits with GPU_POISONED so the parent reruns the notebook without the culprit.
STICKY_CUDA_ERRORS = ("CUDA_ERROR_ILLEGAL_ADDRESS", "CUDA_ERROR_LAUNCH_FAILED", "CUDA_ERROR_ILLEGAL_INSTRUCTION",
                      "CUDA_ERROR_MISALIGNED_ADDRESS", "CUDA_ERROR_HARDWARE_STACK_ERROR", "CUDA_ERROR_INVALID_PC",
                      "cudaErrorIllegalAddress", "cudaErrorLaunchFailure", "cudaErrorIllegalInstruction",
                      "cudaErrorMisalignedAddress")
GPU_POISONED = 75


def poisons_gpu(text: str) -> bool:
    return any(code in text for code in STICKY_CUDA_ERRORS)


def describe_exception(e) -> str:
    if isinstance(e, CellTimeout):
        return "timed out"
    if isinstance(e, SystemExit):
        return f"called exit({e.code!r})"
    if isinstance(e, MemoryError):
        return "ran out of memory (MemoryError)"
    return _short(f"{type(e).__name__}: {e}", 300)


class _Shell:
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
            with open(os.path.basename(line.split()[-1]), "w") as f:
                f.write(body)

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
    except Exception:  # noqa: BLE001 - fall back to dropping the lines
        return "\n".join("" if _MAGIC.match(ln) else ln for ln in source.splitlines())


def _plain(x, depth=0):
    """The answer as plain values: subclasses of int/float/str/tuple/list lose their methods and
    objects with a home-made ``__eq__`` become unequal to everything (``class Liar(int)`` tricks)."""
    t = type(x)
    if t in _EXACT or depth > 20:
        return x
    if t in (tuple, list):
        return t(_plain(v, depth + 1) for v in x)
    if isinstance(x, bool):
        return bool(x)
    if isinstance(x, int):
        return int.__int__(x)
    if isinstance(x, float):
        return float.__float__(x)
    if isinstance(x, str):
        return str.__str__(x)
    if isinstance(x, tuple):
        return tuple(_plain(v, depth + 1) for v in tuple.__iter__(x))
    if isinstance(x, list):
        return [_plain(v, depth + 1) for v in list.__iter__(x)]
    eq = getattr(t, "__eq__", None)
    if isinstance(eq, types.FunctionType) or isinstance(getattr(type(t), "__eq__", None), types.FunctionType):
        return _Opaque(t.__name__)
    return x


class _Opaque:
    def __init__(self, name):
        self.name = name

    def __eq__(self, other):
        return False

    __hash__ = object.__hash__

    def __repr__(self):
        return f"<a {self.name} object>"


_EXACT = {int, float, bool, str, complex, type(None), bytes}


class Runner:
    def __init__(self, job, emit):
        self.job, self.emit = job, emit
        self.cell_timeout = float(job["cell_timeout"])
        self.grade_timeout = float(job.get("grade_timeout") or job["cell_timeout"])
        self.pending = {}  # exercise id -> (answer, options, cell) recorded by the student's check
        self.graded = set(job.get("exclude", ()))  # excluded: crashed or hung the process in an earlier run
        self.cell = None
        self.tampered = None

    # -- bootstrap: everything trusted is imported and snapshotted before student code exists
    def bootstrap(self):
        import numpy as np

        import helpers
        from helpers import _numba, env
        from helpers import exercises as E

        _EXACT.update(t for t in set(np.sctypeDict.values()) if isinstance(t, type))
        _EXACT.add(np.ndarray)
        self.np, self.E, self._numba, self.env = np, E, _numba, env
        self.helpers_dir = os.path.dirname(os.path.abspath(helpers.__file__)) + os.sep
        self.specs, self.exercises, self.by_object = {}, {}, {}
        for spec in self.job["exercises"]:
            self.specs[spec["id"]] = spec
            try:
                mod = importlib.import_module(f"helpers.problems.{spec['module']}")
                ex = getattr(mod, spec["name"], None)
            except Exception as e:  # noqa: BLE001 - a course (instructor) problem, not the student's
                ex, why = None, f"helpers.problems.{spec['module']} cannot be imported ({describe_exception(e)})"
            else:
                why = f"helpers/problems/{spec['module']}.py has no exercise {spec['name']}"
            if isinstance(ex, E.Exercise):
                self.exercises[spec["id"]] = ex
                self.by_object[id(ex)] = spec["id"]
            else:
                self.graded.add(spec["id"])
                self.emit({"type": "result", "exercise": spec["id"], "status": "not_graded", "grader_problem": True,
                           "message": f"not graded: {why} (a problem with the course, not with this notebook)."})
        self._neutralise(E)
        self.grade = E.Exercise.grade  # the trusted method, held before any student code runs
        self.not_attempted = E.not_attempted
        from .integrity import Integrity

        self.integrity = Integrity(self.exercises.values(), gpu=env.on_gpu())

    def _neutralise(self, E):
        runner = self

        def check(self, answer=E.base.MISSING, seed=None, **options):
            ex_id = runner.by_object.get(id(self))
            if ex_id is not None:
                runner.pending[ex_id] = (answer, options, runner.cell)
            return None

        def quiet(self, *a, **k):
            return None

        classes = [E.Exercise, *self._subclasses(E.Exercise)]
        for cls in classes:
            for name, fn in (("check", check), ("hint", quiet), ("solution", quiet)):
                if name in vars(cls):
                    setattr(cls, name, fn)

    @staticmethod
    def _subclasses(cls):
        out = []
        for sub in cls.__subclasses__():
            out.extend([sub, *Runner._subclasses(sub)])
        return out

    # -- cells
    def run_cells(self, cells):
        module = types.ModuleType("__main__")
        ns = module.__dict__
        ns["__builtins__"] = builtins
        ns["get_ipython"] = lambda: shell
        shell = _Shell(ns)
        sys.modules["__main__"] = module
        self.ns = ns
        skip = set(self.job.get("skip_cells", ()))
        for index, source in cells:
            if index in skip:
                continue
            self.cell = index
            self.emit({"type": "cell", "cell": index})
            filename = f"<cell {index + 1}>"
            code_src = transform(source)
            linecache.cache[filename] = (len(code_src), None, code_src.splitlines(True), filename)
            try:
                code = compile(code_src, filename, "exec")
            except (SyntaxError, ValueError) as e:
                self.emit({"type": "cell_error", "cell": index, "error": describe_exception(e)})
                continue
            _, exc = timed(lambda: exec(code, ns), self.cell_timeout)
            self.emit({"type": "between", "cell": index})
            if exc is not None:
                what = (f"did not finish within {self.cell_timeout:g} s and was stopped" if isinstance(exc, CellTimeout)
                        else f"raised {describe_exception(exc)}")
                self.emit({"type": "cell_error", "cell": index, "error": what, "timeout": isinstance(exc, CellTimeout)})
                if poisons_gpu(what):
                    os._exit(GPU_POISONED)  # nothing after this cell could use the GPU
            self._after_cell()
        self.cell = None

    def _after_cell(self):
        pyplot = sys.modules.get("matplotlib.pyplot")
        if pyplot is not None:
            timed(lambda: pyplot.close("all"), 10)
        self._check_integrity()
        for ex_id in list(self.pending):
            answer, options, cell = self.pending.pop(ex_id)
            if ex_id in self.job.get("exclude", ()):
                continue
            self.grade_one(ex_id, answer, options, f"your check call in cell {cell + 1}" if cell is not None else "your check call")

    def _check_integrity(self):
        if self.tampered is None:
            problems = self.integrity.problems()
            if problems:
                self.tampered = problems
                self.emit({"type": "tamper", "cell": self.cell, "what": problems})
                sys.settrace(None)
                sys.setprofile(None)
        return self.tampered

    # -- grading
    def grade_one(self, ex_id, answer, options, source):
        ex, spec = self.exercises[ex_id], self.specs[ex_id]
        self.emit({"type": "grading", "exercise": ex_id})
        row = {"type": "result", "exercise": ex_id, "graded_from": source, "max_points": float(self.integrity_points(ex))}
        if self._check_integrity():
            self.emit({**row, "status": "tampering", "message": "not graded: the grading machinery was changed."})
            self.graded.add(ex_id)
            return
        options = {k: v for k, v in options.items() if k in spec.get("options", {})}
        foreign = self._foreign(answer)
        if foreign:
            self.emit({**row, "status": "failed", "review": foreign,
                       "message": f"your answer is {foreign}, not code written in your notebook."})
            self.graded.add(ex_id)
            return
        if not self.not_attempted(answer):
            answer = self._sanitise(ex, answer)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            result, exc = timed(lambda: self.grade(ex, answer, seed=spec["seed"], **options), self.grade_timeout)
        if exc is not None:
            msg = (f"grading stopped after {self.grade_timeout:g} s: your code did not finish (an endless loop?)."
                   if isinstance(exc, CellTimeout) else f"your code {describe_exception(exc)} while being graded.")
            self.emit({**row, "status": "error", "seed": spec["seed"], "message": msg})
            self.graded.add(ex_id)
            return
        if self.integrity.problems():  # student code run by the check (e.g. a kernel on the tracer) changed things
            self._check_integrity()
            self.emit({**row, "status": "tampering", "message": "not graded: your code changed the grading machinery while it was being graded."})
            self.graded.add(ex_id)
            return
        if poisons_gpu(str(result.message)):
            os._exit(GPU_POISONED)  # the parent grades this exercise as an error and reruns without it
        out = {**row, "status": str(result.status), "message": _short(result.message), "seed": result.seed,
               "points": float(result.points), "max_points": float(result.max_points),
               "metrics": self._jsonable(result.metrics)}
        if result.picture is not None and self.job.get("pictures"):
            path = os.path.join(self.job["pictures"], f"{ex_id}.png")
            _, e = timed(lambda: result.picture.savefig(path, dpi=80, bbox_inches="tight"), self.grade_timeout)
            if e is None:
                out["picture"] = path
        self.emit(out)
        self.graded.add(ex_id)

    @staticmethod
    def integrity_points(ex):
        return getattr(ex, "points", 1.0)

    def _foreign(self, answer):
        """'a function from the course's helpers (...)' when the answer was not written in the notebook."""
        fn = self._numba.python_function(answer) or (answer if isinstance(answer, types.FunctionType) else None)
        code = getattr(fn, "__code__", None)
        path = getattr(code, "co_filename", "") or ""
        if path.startswith(self.helpers_dir):
            rel = os.path.relpath(path, os.path.dirname(self.helpers_dir.rstrip(os.sep)))
            return f"the course's own code ({getattr(fn, '__qualname__', '?')} from {rel})"
        return None

    def _sanitise(self, ex, answer):
        E = self.E
        if isinstance(ex, E.ValueExercise):
            return _plain(answer)
        if isinstance(ex, E.FunctionExercise) and isinstance(answer, types.FunctionType):
            @functools.wraps(answer)
            def plain_result(*args, **kwargs):
                return _plain(answer(*args, **kwargs))

            return plain_result
        return answer

    @staticmethod
    def _jsonable(metrics):
        try:
            return json.loads(json.dumps(dict(metrics or {}), default=str))
        except (TypeError, ValueError):
            return {}

    def grade_rest(self):
        """Exercises never checked by the student: their answers from the final namespace."""
        for ex_id, spec in self.specs.items():
            if ex_id in self.graded or ex_id not in self.exercises:
                continue
            self.cell = None
            self.emit({"type": "grading", "exercise": ex_id})
            if spec.get("answer") is None:
                answer = self.E.base.MISSING
            else:
                answer, exc = timed(lambda: eval(compile(spec["answer"], "<answer>", "eval"), self.ns), self.cell_timeout)
                if exc is not None:
                    missing = isinstance(exc, NameError)
                    self.emit({"type": "result", "exercise": ex_id, "status": "not_attempted" if missing else "error",
                               "max_points": float(self.integrity_points(self.exercises[ex_id])),
                               "message": (f"no answer found: the notebook never defines `{spec['answer']}` (was the cell "
                                           "that defines it deleted or renamed?)." if missing else
                                           f"the answer `{spec['answer']}` could not be read: {describe_exception(exc)}.")})
                    self.graded.add(ex_id)
                    continue
            options = {}
            for key, expr in spec.get("options", {}).items():
                value, exc = timed(lambda: eval(compile(expr, "<answer>", "eval"), self.ns), self.cell_timeout)
                if exc is None:
                    options[key] = value
            self.grade_one(ex_id, answer, options, f"`{spec['answer']}` at the end of the notebook")


def main():
    job = json.loads(sys.stdin.buffer.read().decode())
    fd = os.open(os.devnull, os.O_RDONLY)
    os.dup2(fd, 0)
    os.close(fd)
    emit = _signer(job["results"], bytes.fromhex(job.pop("key")))
    _limits(job)
    import faulthandler

    faulthandler.enable()  # a segfault prints where it happened into the captured output
    runner = Runner(job, emit)
    runner.bootstrap()
    emit({"type": "ready"})
    runner.run_cells([(c["index"], c["source"]) for c in job["cells"]])
    runner.grade_rest()
    emit({"type": "done"})
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except Exception:  # noqa: BLE001 - the student may have replaced or closed it
            pass
    os._exit(0)  # no atexit handlers or finalizers from student code
