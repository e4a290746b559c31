"""Exercise definitions, one module per notebook: ``from helpers.problems import nb02``.

Each module defines exercises as data and ends with ``EXERCISES = register(__name__, globals())``,
which names every exercise after its variable (``nb02.saxpy`` has id "nb02.saxpy"). Modules
named ``nbNN`` are found automatically, so adding a notebook's exercises is one new file (plus
its wrong answers in ``tests/wrong_solutions/nbNN.py``).
"""

import importlib
import pkgutil
import re


def _discover():
    names = (m.name for m in pkgutil.iter_modules(__path__))
    return tuple(sorted(n for n in names if re.fullmatch(r"nb\d+", n)))


MODULES = _discover()  # course order ("nb01" < "nb02" < ...); progress() lists exercises in this order


def all_exercises():
    """Every shipped exercise, in course order (imports the modules on first use)."""
    out = []
    for name in MODULES:
        out.extend(importlib.import_module(f"{__name__}.{name}").EXERCISES.values())
    return out
