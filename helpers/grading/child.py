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
import importlib
import json
import linecache
import os
import sys
import types
import warnings

from .cells import (
    EXACT,
    GPU_POISONED,
    CellTimeout,
    Shell,
    course_code,
    describe_exception,
    gpu_context_broken,
    jsonable,
    limits,
    plain,
    poisons_gpu,
    short,
    signer,
    timed,
    transform,
    unread_answer,
)
from .devices import describe as describe_device


class Runner:
    def __init__(self, job, emit):
        self.job, self.emit = job, emit
        self.cell_timeout = float(job["cell_timeout"])
        self.grade_timeout = float(job.get("grade_timeout") or job["cell_timeout"])
        self.pending = {}  # exercise id -> (answer, options, cell) recorded by the student's check
        self.graded = set(job.get("exclude", ()))  # excluded: crashed or hung the process in an earlier run
        self.cell = None
        self.tampered = None
        self.on_gpu = False  # set in bootstrap; asks gpu_context_broken() after each cell and graded step
        self.judged = bool(job.get("judge"))  # the grader judges in its own process (judge.py)
        self.requests = None  # judged: the judge's requests, on what was stdin

    # -- bootstrap: everything trusted is imported and snapshotted before student code exists
    def bootstrap(self):
        import numpy as np

        from helpers import _numba, env
        from helpers import exercises as E

        EXACT.update(t for t in set(np.sctypeDict.values()) if isinstance(t, type))
        EXACT.add(np.ndarray)
        self.np, self.E, self._numba, self.env = np, E, _numba, env
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
                self.emit(
                    {
                        "type": "result",
                        "exercise": spec["id"],
                        "status": "not_graded",
                        "grader_problem": True,
                        "message": f"not graded: {why} (a problem with the course, not with this notebook).",
                    }
                )
        self._neutralise(E)
        self.grade = E.Exercise.grade  # the trusted method, held before any student code runs
        self.not_attempted = E.not_attempted
        from .integrity import Integrity

        self.on_gpu = env.on_gpu()
        self.integrity = Integrity(self.exercises.values(), gpu=self.on_gpu)

    # -- judged mode: no exercise, reference or key in this process (judge.py holds them)
    def bootstrap_judged(self):
        import numpy  # noqa: F401 - imported before student code, as in the unjudged run

        import helpers  # noqa: F401
        from helpers import env

        from .serve import Server, install_stubs

        self.wants = {}
        for module, spec in (self.job.get("public") or {}).items():
            for name, ex in (spec.get("exercises") or {}).items():
                self.wants[f"{module}.{name}"] = str(ex.get("want") or "function")
        stubs = install_stubs(self.job.get("public") or {}, self._record)
        self.on_gpu = env.on_gpu()
        self.server = Server(self.on_gpu)
        from .integrity import Integrity

        # Changes here cannot raise a grade (the judge compares outputs itself), but an attempt is
        # still reported for the instructor, as in an unjudged run.
        self.integrity = Integrity(stubs, gpu=self.on_gpu)

    def _record(self, ex_id, answer, options):
        if ex_id in self.wants and ex_id not in self.graded:
            self.pending[ex_id] = (answer, options, self.cell)

    def _describe(self, value, want):
        from .serve import MISSING

        got, exc = timed(lambda: self.server.describe(value, want), self.grade_timeout)
        if exc is not None or got is None:
            return {"kind": "value", "value": None if value is MISSING else _Unreadable()}
        return got

    def _pending_list(self):
        out = []
        for ex_id in list(self.pending):
            answer, options, cell = self.pending.pop(ex_id)
            self.graded.add(ex_id)
            out.append(
                {
                    "exercise": ex_id,
                    "cell": cell,
                    "answer": self._describe(answer, self.wants.get(ex_id, "function")),
                    "options": {
                        str(k): self._describe(v, "function" if callable(v) else "value") for k, v in options.items()
                    },
                }
            )
        return out

    def serve(self):
        """Answer the judge until it says continue (or quit)."""
        from .. import _wire
        from ..tracer.watchdog import describe_function, watchdog
        from .serve import error_reply

        while True:
            line = self.requests.readline()
            if not line:
                os._exit(0)  # the judge is gone: nothing more to do
            try:
                req = _wire.loads(line)
                op = req.get("op")
                body = _wire.decode(req.get("body")) if "body" in req else {}
            except (_wire.WireError, AttributeError, TypeError, ValueError):
                continue
            if op in ("continue", "quit"):
                return op
            if not isinstance(body, dict):
                body = {}
            if op == "resolve":
                reply, exc = timed(lambda: self._resolve(body), self.cell_timeout)
            else:
                what = "your kernel" if op in ("trace", "gpu") else "your function"

                def run(body=body, what=what):
                    with warnings.catch_warnings(), watchdog(self.grade_timeout, describe_function(what)):
                        warnings.simplefilter("ignore")
                        return self.server.handle({**body, "op": op})

                reply, exc = timed(run, self.grade_timeout)
            if exc is None:
                try:
                    self.emit({"type": "reply", "id": req.get("id"), "ok": _wire.encode(reply)})
                except _wire.WireError as e:
                    exc = e
            if exc is not None:
                error = (
                    {
                        "type": "Timeout",
                        "message": f"grading stopped after {self.grade_timeout:g} s: your code did not finish "
                        "(an endless loop?).",
                        "course": True,
                    }
                    if isinstance(exc, CellTimeout)
                    else error_reply(exc)
                )
                self.emit({"type": "reply", "id": req.get("id"), "error": error})
            if self.on_gpu and gpu_context_broken():
                os._exit(GPU_POISONED)

    def _resolve(self, body):
        try:
            value = eval(compile(str(body.get("expr")), "<answer>", "eval"), self.ns)
        except NameError as e:
            return {"error": describe_exception(e), "missing": True}
        except BaseException as e:  # noqa: BLE001 - student code (a property, __getattr__...)
            return {"error": describe_exception(e)}
        options = {}
        for key, expr in (body.get("options") or {}).items():
            try:
                options[str(key)] = eval(compile(str(expr), "<answer>", "eval"), self.ns)
            except BaseException:  # noqa: BLE001, S112 - an option that cannot be read is not passed
                continue
        ex_id = str(body.get("exercise"))
        return {
            "answer": self._describe(value, self.wants.get(ex_id, "function")),
            "options": {k: self._describe(v, "function" if callable(v) else "value") for k, v in options.items()},
        }

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
        shell = Shell(ns)
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
                what = (
                    f"did not finish within {self.cell_timeout:g} s and was stopped"
                    if isinstance(exc, CellTimeout)
                    else f"raised {describe_exception(exc)}"
                )
                self.emit({"type": "cell_error", "cell": index, "error": what, "timeout": isinstance(exc, CellTimeout)})
                if poisons_gpu(what):
                    os._exit(GPU_POISONED)  # nothing after this cell could use the GPU
            if self.on_gpu and gpu_context_broken():  # an error a launch left behind without raising
                os._exit(GPU_POISONED)
            if self.judged:
                self._after_cell_judged(index)
            else:
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
            self.grade_one(
                ex_id, answer, options, f"your check call in cell {cell + 1}" if cell is not None else "your check call"
            )

    def _after_cell_judged(self, index):
        from .. import _wire

        pyplot = sys.modules.get("matplotlib.pyplot")
        if pyplot is not None:
            timed(lambda: pyplot.close("all"), 10)
        self._check_integrity()
        if self.pending:
            self.emit({"type": "idle", "cell": index, "pending": _wire.encode(self._pending_list())})
            self.serve()

    def finish_judged(self):
        from .. import _wire

        self.cell = None
        self.emit({"type": "end", "pending": _wire.encode(self._pending_list())})
        self.serve()

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
        row = {
            "type": "result",
            "exercise": ex_id,
            "graded_from": source,
            "max_points": float(self.integrity_points(ex)),
        }
        if self._check_integrity():
            self.emit({**row, "status": "tampering", "message": "not graded: the grading machinery was changed."})
            self.graded.add(ex_id)
            return
        options = {k: v for k, v in options.items() if k in spec.get("options", {})}
        foreign = self._foreign(answer)
        if foreign:
            self.emit(
                {
                    **row,
                    "status": "failed",
                    "review": foreign,
                    "message": f"your answer is {foreign}, not code written in your notebook.",
                }
            )
            self.graded.add(ex_id)
            return
        if not self.not_attempted(answer):
            answer = self._sanitise(ex, answer)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            result, exc = timed(lambda: self.grade(ex, answer, seed=spec["seed"], **options), self.grade_timeout)
        if self.on_gpu and gpu_context_broken():
            os._exit(GPU_POISONED)  # whatever the check said: the parent grades this one as an error, reruns the rest
        if exc is not None:
            msg = (
                f"grading stopped after {self.grade_timeout:g} s: your code did not finish (an endless loop?)."
                if isinstance(exc, CellTimeout)
                else f"your code {describe_exception(exc)} while being graded."
            )
            self.emit({**row, "status": "error", "seed": spec["seed"], "message": msg})
            self.graded.add(ex_id)
            return
        if self.integrity.problems():  # student code run by the check (e.g. a kernel on the tracer) changed things
            self._check_integrity()
            self.emit(
                {
                    **row,
                    "status": "tampering",
                    "message": "not graded: your code changed the grading machinery while it was being graded.",
                }
            )
            self.graded.add(ex_id)
            return
        if poisons_gpu(str(result.message)):
            os._exit(GPU_POISONED)  # the parent grades this exercise as an error and reruns without it
        out = {
            **row,
            "status": str(result.status),
            "message": short(result.message),
            "seed": result.seed,
            "points": float(result.points),
            "max_points": float(result.max_points),
            "metrics": jsonable(result.metrics),
        }
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
        """'the course's own code (...)' when the answer was not written in the notebook."""
        fn = self._numba.python_function(answer) or (answer if isinstance(answer, types.FunctionType) else None)
        path = getattr(getattr(fn, "__code__", None), "co_filename", "") or ""
        return course_code(path, getattr(fn, "__qualname__", "?"))

    def _sanitise(self, ex, answer):
        E = self.E
        if isinstance(ex, E.ValueExercise):
            return plain(answer)
        if isinstance(ex, E.FunctionExercise) and isinstance(answer, types.FunctionType):

            @functools.wraps(answer)
            def plain_result(*args, **kwargs):
                return plain(answer(*args, **kwargs))

            return plain_result
        return answer

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
                answer, exc = timed(
                    lambda: eval(compile(spec["answer"], "<answer>", "eval"), self.ns), self.cell_timeout
                )
                if exc is not None:
                    points = self.integrity_points(self.exercises[ex_id])
                    missing, why = isinstance(exc, NameError), describe_exception(exc)
                    self.emit(unread_answer(ex_id, spec["answer"], points, missing, why))
                    self.graded.add(ex_id)
                    continue
            options = {}
            for key, expr in spec.get("options", {}).items():
                value, exc = timed(lambda: eval(compile(expr, "<answer>", "eval"), self.ns), self.cell_timeout)
                if exc is None:
                    options[key] = value
            self.grade_one(ex_id, answer, options, f"`{spec['answer']}` at the end of the notebook")


class _Unreadable:
    """An answer whose description failed: it equals nothing and says so."""

    def __repr__(self):
        return "<an object the grader could not read>"


def _channel_emitter(fd):
    from .. import _wire

    def emit(obj):
        data = _wire.dumps(obj)
        while data:
            try:
                n = os.write(fd, data)
            except InterruptedError:
                continue
            data = data[n:]

    return emit


def main():
    requests = os.fdopen(os.dup(0), "rb")  # judged: the judge's requests follow the job on this pipe
    job = json.loads(requests.readline().decode())
    fd = os.open(os.devnull, os.O_RDONLY)
    os.dup2(fd, 0)
    os.close(fd)
    if job.get("judge"):
        emit = _channel_emitter(int(job["channel_fd"]))
        limits(job)
        runner = Runner(job, emit)
        runner.requests = requests
        import faulthandler

        faulthandler.enable()
        runner.bootstrap_judged()
        emit(describe_device())
        emit({"type": "ready"})
        runner.run_cells([(c["index"], c["source"]) for c in job["cells"]])
        runner.finish_judged()
        emit({"type": "done"})
        _flush_and_exit()
    requests.close()
    emit = signer(job["results"], bytes.fromhex(job.pop("key")))
    limits(job)
    import faulthandler

    faulthandler.enable()  # a segfault prints where it happened into the captured output
    runner = Runner(job, emit)
    runner.bootstrap()
    emit(describe_device())  # which GPU this process sees (the summary says which GPU graded what)
    emit({"type": "ready"})
    runner.run_cells([(c["index"], c["source"]) for c in job["cells"]])
    runner.grade_rest()
    emit({"type": "done"})
    _flush_and_exit()


def _flush_and_exit():
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except Exception:  # noqa: BLE001 - the student may have replaced or closed it
            pass
    os._exit(0)  # no atexit handlers or finalizers from student code
