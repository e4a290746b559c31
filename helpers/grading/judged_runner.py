"""Runs INSIDE the child process of a judged notebook: the child holds no exercise, reference or
key (``judge.py`` in the grader's process has them). It installs stand-ins for the exercise
modules whose ``.check`` only records the answer; after each cell that checked something, and at
the end, it describes the answers to the judge and answers the judge's requests (call, trace,
launch, resolve an expression...) until the judge says continue.
"""

from __future__ import annotations

import os
import warnings

from .cell_runner import CellRunner
from .cells import GPU_POISONED, CellTimeout, describe_exception, gpu_context_broken, timed


class JudgedRunner(CellRunner):
    def __init__(self, job, emit, requests):
        super().__init__(job, emit)
        self.requests = requests  # the judge's requests, on what was stdin

    def bootstrap(self):
        import numpy  # noqa: F401 - imported before student code: the student's cannot be a replaced one

        import helpers  # noqa: F401
        from helpers import env

        from .serve import Server, install_stubs

        self.wants = {}
        for module, spec in (self.job.get("public") or {}).items():
            for name, ex in (spec.get("exercises") or {}).items():
                self.wants[f"{module}.{name}"] = str(ex.get("want") or "function")
        stubs = install_stubs(self.job.get("public") or {}, self._record)
        from .undrawn import install as undrawn

        undrawn()  # the notebook's own pictures: nobody reads them here
        self.on_gpu = env.on_gpu()
        self.server = Server(self.on_gpu)
        from .integrity import Integrity

        # Changes here cannot raise a grade (the judge compares outputs itself), but an attempt is
        # still reported for the instructor.
        self.integrity = Integrity(stubs, gpu=self.on_gpu)

    def _record(self, ex_id, answer, options):
        """check() was called: the answer is described now, inside the student's call, before the
        judge has sent any input for it; the judge grades this description and asks for no other
        (a kernel's source and globals, grading/remote.py)."""
        if ex_id in self.wants and ex_id not in self.excluded:  # checked again: the later check counts
            described = self._described(answer, self.wants[ex_id])
            opts = {str(k): self._described(v, "function" if callable(v) else "value") for k, v in options.items()}
            self.pending[ex_id] = (described, opts, self.cell)

    def _described(self, value, want):
        """The description, under the cell's own timer (a second timer here would cancel it)."""
        from .serve import MISSING

        try:
            got = self.server.describe(value, want)
        except Exception:  # the student's objects may raise anything; a timeout still stops the cell
            got = None
        return got if got is not None else {"kind": "value", "value": None if value is MISSING else _Unreadable()}

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
            out.append({"exercise": ex_id, "cell": cell, "answer": answer, "options": options})
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
        except BaseException as e:  # student code (a property, __getattr__...) may raise anything
            return {"error": describe_exception(e)}
        options = {}
        for key, expr in (body.get("options") or {}).items():
            try:
                options[str(key)] = eval(compile(str(expr), "<answer>", "eval"), self.ns)
            except BaseException:  # student code may raise anything: an option that cannot be read is not passed
                continue
        ex_id = str(body.get("exercise"))
        return {
            "answer": self._describe(value, self.wants.get(ex_id, "function")),
            "options": {k: self._describe(v, "function" if callable(v) else "value") for k, v in options.items()},
        }

    def after_cell(self, index):
        from .. import _wire

        self.close_figures()
        self.check_integrity()
        if self.pending:
            self.emit({"type": "idle", "cell": index, "pending": _wire.encode(self._pending_list())})
            self.serve()

    def finish(self):
        from .. import _wire

        self.cell = None
        self.emit({"type": "end", "pending": _wire.encode(self._pending_list())})
        self.serve()


class _Unreadable:
    """An answer whose description failed: it equals nothing and says so."""

    def __repr__(self):
        return "<an object the grader could not read>"
