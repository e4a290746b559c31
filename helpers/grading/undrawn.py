"""The course's pictures, not drawn in the grading child.

Why: no output of the student's process is read by the grader, and drawing the notebook's own launch and
access pictures (with Matplotlib's import) was about half of a notebook-02 submission's CPU time
(``bench/grade_speed.py``). ``install`` replaces the functions that draw (not the ones a notebook calls:
``geometry.draw_launch`` and ``Trace.show`` still check their arguments and raise what they raise in
Jupyter) with one that returns ``UNDRAWN``, an object a cell can keep, save or style as a figure: any
attribute, call or index of it gives it back, and it iterates as empty. The judge's own pictures (the
feedback for a failed exercise) are drawn inside ``drawing()``, with the real functions.
"""

from __future__ import annotations

import importlib
import sys
from contextlib import contextmanager

SITES = (
    ("helpers.geometry.pictures", ("_draw_1d", "_draw_2d")),
    ("helpers.tracer.pictures", ("draw_accesses", "draw_coalescing", "draw_banks")),
)
_REAL: dict = {}  # (module, name) -> the drawing function install() replaced


class Undrawn:
    """A picture that was not drawn: whatever a cell does with a figure, it gives back itself."""

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return self

    def __call__(self, *args, **kwargs):
        return self

    def __getitem__(self, key):
        return self

    def __iter__(self):
        return iter(())

    def __len__(self):
        return 0

    def __repr__(self):
        return "(a picture, not drawn while grading)"


UNDRAWN = Undrawn()


def _undrawn(*args, **kwargs):
    return UNDRAWN


def install() -> None:
    """Before any student code: every drawing function in ``SITES`` returns ``UNDRAWN``."""
    for module, names in SITES:
        mod = importlib.import_module(module)
        for name in names:
            _REAL.setdefault((module, name), getattr(mod, name))
            setattr(mod, name, _undrawn)


@contextmanager
def drawing():
    """The real drawing functions for the judge's own pictures, put back as they were afterwards."""
    saved = {key: getattr(sys.modules[key[0]], key[1]) for key in _REAL}
    for (module, name), fn in _REAL.items():
        setattr(sys.modules[module], name, fn)
    try:
        yield
    finally:
        for (module, name), fn in saved.items():
            setattr(sys.modules[module], name, fn)
