"""Runs INSIDE the child process: the student's code cells in order, in one namespace (a fresh
``__main__``), each under a timer; a failing cell is reported and the next one runs, as in
Jupyter. After each cell the tamper check runs, then ``judged_runner.py`` hands the answers
checked so far to the judge.
"""

from __future__ import annotations

import builtins
import linecache
import os
import sys
import types

from .cells import (
    GPU_POISONED,
    CellTimeout,
    Shell,
    describe_exception,
    gpu_context_broken,
    poisons_gpu,
    timed,
    transform,
)


class CellRunner:
    """What both kinds of child share; a subclass says how it starts (``bootstrap``) and what
    happens after each cell (``after_cell``)."""

    def __init__(self, job, emit):
        self.job, self.emit = job, emit
        self.cell_timeout = float(job["cell_timeout"])
        self.grade_timeout = float(job.get("grade_timeout") or job["cell_timeout"])
        self.pending = {}  # exercise id -> (answer, options, cell) recorded by the student's check (described)
        # Excluded: crashed or hung the process in an earlier run, never graded again. An exercise
        # checked again later is graded again: the last check in the notebook counts.
        self.excluded = set(job.get("exclude", ()))
        self.graded = set(self.excluded)  # graded at least once: not graded again at the end
        self.cell = None
        self.tampered = None
        self.on_gpu = False  # set in bootstrap; asks gpu_context_broken() after each cell and graded step

    def bootstrap(self):
        raise NotImplementedError

    def after_cell(self, index):
        raise NotImplementedError

    def run_cells(self, cells):
        module = types.ModuleType("__main__")
        ns = module.__dict__
        ns["__builtins__"] = builtins
        ns["get_ipython"] = lambda: shell
        shell = Shell(ns)
        sys.modules["__main__"] = module
        self.ns = ns
        # As in Jupyter, whose kernel runs in the notebook's folder with '' first on sys.path: a
        # module the notebook writes itself (%%writefile my_kernels.py) imports from the working
        # folder. Nothing handed in with the notebook is there, and the course and NumPy were
        # imported before any student code, so a file of that name does not replace them.
        if not sys.path or sys.path[0] != "":
            sys.path.insert(0, "")
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
            self.after_cell(index)
        self.cell = None

    def close_figures(self):
        pyplot = sys.modules.get("matplotlib.pyplot")
        if pyplot is not None:
            timed(lambda: pyplot.close("all"), 10)

    def check_integrity(self):
        if self.tampered is None:
            problems = self.integrity.problems()
            if problems:
                self.tampered = problems
                self.emit({"type": "tamper", "cell": self.cell, "what": problems})
                sys.settrace(None)
                sys.setprofile(None)
        return self.tampered
