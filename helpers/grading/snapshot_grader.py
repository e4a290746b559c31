"""Runs INSIDE the child process of an unjudged notebook: the child grades its own student.

Before any student code exists it imports and SNAPSHOTS the trusted objects (the engine, the
exercise objects, NumPy, builtins) and neutralises the student's ``.check``/``.hint``/
``.solution`` (a check only records its argument). After each cell it grades what was checked,
with the snapshot and fresh inputs from the grader's seed; at the end, from the final namespace,
what never was. Every result is one signed line, streamed as it is known.
"""

from __future__ import annotations

import functools
import importlib
import os
import types
import warnings

from .cell_runner import CellRunner
from .cells import (
    EXACT,
    GPU_POISONED,
    CellTimeout,
    course_code,
    describe_exception,
    gpu_context_broken,
    jsonable,
    plain,
    poisons_gpu,
    short,
    timed,
    unread_answer,
)


class SnapshotGrader(CellRunner):
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
            except Exception as e:  # any failure is a course (instructor) problem, not the student's
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
            out.extend([sub, *SnapshotGrader._subclasses(sub)])
        return out

    def after_cell(self, index):
        self.close_figures()
        self.check_integrity()
        for ex_id in list(self.pending):
            answer, options, cell = self.pending.pop(ex_id)
            if ex_id in self.excluded:
                continue
            # Graded again when checked again (a wrong answer fixed later): the last check counts.
            where = f"your check call in cell {cell + 1}" if cell is not None else "your check call"
            self.grade_one(ex_id, answer, options, where, cell)

    # -- grading
    def grade_one(self, ex_id, answer, options, source, cell=None):
        """``cell``: the index of the cell whose check is graded (None: the end of the notebook)."""
        ex, spec = self.exercises[ex_id], self.specs[ex_id]
        self.emit({"type": "grading", "exercise": ex_id})
        row = {
            "type": "result",
            "exercise": ex_id,
            "graded_from": source,
            "cell": cell,
            "max_points": float(self.integrity_points(ex)),
        }
        if self.check_integrity():
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
            self.check_integrity()
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
