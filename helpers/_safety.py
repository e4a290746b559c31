"""One plain line instead of a traceback from inside ``helpers``, in IPython and Jupyter.

``import helpers`` installs this first (before ``helpers.env`` can raise), through IPython's own
``set_custom_exc``. Outside IPython nothing is installed: scripts, tests and the grader keep real
exceptions. What a cell's exception becomes:

- a ``CourseError`` (``LearnerError`` and kin): its sentence, which names the cause and the fix;
- ``KeyboardInterrupt`` while helpers was running: one line saying it was stopped, and where;
- any other exception whose innermost frame (libraries aside) is inside helpers: one line saying
  what failed and that it is a bug in the course, with ``helpers.last_error()`` for the details;
- otherwise the learner's own code raised: the usual traceback, with helpers' frames left out,
  so it points at the learner's line and nothing of the course's.
"""

from __future__ import annotations

import builtins
import linecache
import os
import sys
import sysconfig
import traceback
import types
from pathlib import Path

from .errors import CourseError

_HERE = Path(__file__).parent
HELPERS = tuple({str(_HERE) + os.sep, str(_HERE.resolve()) + os.sep})
LIBRARIES = tuple({sysconfig.get_paths()[k] for k in ("stdlib", "purelib", "platlib")})
REPORT = "helpers.last_error()"

_last = [None]  # (etype, value, tb) of the last exception turned into one line


def in_helpers(filename: str) -> bool:
    return filename.startswith(HELPERS)


def in_library(filename: str) -> bool:
    return filename.startswith(LIBRARIES) or filename.startswith("<frozen ")


def _frames(tb):
    while tb is not None:
        yield tb
        tb = tb.tb_next


def innermost_is_helpers(tb) -> bool:
    """The innermost frame that is neither the standard library nor an installed package belongs to
    helpers: the course's code raised, not the learner's (a NumPy error met inside helpers counts)."""
    for t in reversed(list(_frames(tb))):
        name = t.tb_frame.f_code.co_filename
        if in_helpers(name):
            return True
        if not in_library(name):
            return False
    return False


def _entry(tb) -> str:
    """The outermost helpers function the learner's cell called, as they would name it."""
    for t in _frames(tb):
        code = t.tb_frame.f_code
        if in_helpers(code.co_filename):
            return getattr(code, "co_qualname", code.co_name)
    return "helpers"


def _learner_line(tb) -> str:
    """The learner's innermost line below helpers' first frame (their kernel or function), if any."""
    where, seen = None, False
    for t in _frames(tb):
        name = t.tb_frame.f_code.co_filename
        seen = seen or in_helpers(name)
        if seen and not in_helpers(name) and not in_library(name):
            where = t
    if where is None:
        return ""
    src = linecache.getline(where.tb_frame.f_code.co_filename, where.tb_lineno).strip()
    return f" while your code was running line {where.tb_lineno}" + (f" (`{src}`)" if src else "")


def _text(value) -> str:
    try:
        return str(value)
    except Exception:  # an exception whose __str__ raises still gets its line
        return f"<{type(value).__name__} whose message could not be shown>"


def one_line(etype, value, tb) -> str | None:
    """The line shown for this exception, or None when the learner needs their traceback."""
    if issubclass(etype, CourseError):
        return f"{etype.__name__}: {_text(value)}"
    through_helpers = any(in_helpers(t.tb_frame.f_code.co_filename) for t in _frames(tb))
    if issubclass(etype, KeyboardInterrupt) and through_helpers:
        return f"Stopped: you interrupted {_entry(tb)}{_learner_line(tb)}; run the cell again when ready."
    if issubclass(etype, Exception) and innermost_is_helpers(tb):
        what = f"{etype.__name__}: {_text(value)}" if _text(value) else etype.__name__
        return (
            f"{_entry(tb)} failed inside the course's helpers ({what[:300]}): this is a bug in the course's "
            f"helpers, not in your code; please report it with this line and what {REPORT} prints."
        )
    return None


def without_helpers(tb):
    """The same traceback with helpers' frames left out (the learner's frames and libraries stay)."""
    kept = [t for t in _frames(tb) if not in_helpers(t.tb_frame.f_code.co_filename)]
    out = None
    for t in reversed(kept):
        out = types.TracebackType(out, t.tb_frame, t.tb_lasti, t.tb_lineno)
    return out


def _handler(shell, etype, value, tb, tb_offset=None):
    try:
        line = one_line(etype, value, tb)
    except Exception:  # IPython drops a handler that raises; keep this one
        line = f"{etype.__name__}: {_text(value)}"
    if line is None:  # the learner's own error: their traceback, without the course's frames
        shell.showtraceback((etype, value, without_helpers(tb) or tb), tb_offset=tb_offset)
        return None
    _last[0] = (etype, value, tb)
    sys.last_type, sys.last_value, sys.last_traceback = etype, value, tb  # so %tb and %debug still work
    print(line, file=sys.stderr)
    return None


def install() -> bool:
    """Install the handler in the running IPython shell; False (and nothing done) outside IPython."""
    get_ipython = getattr(builtins, "get_ipython", None)  # IPython puts it there; the grader does not
    shell = get_ipython() if callable(get_ipython) else None
    if shell is None or not hasattr(shell, "set_custom_exc"):
        return False
    shell.set_custom_exc((Exception, KeyboardInterrupt), _handler)
    return True


def last_error(file=None) -> None:
    """Print the full traceback behind the last one-line message (for a bug report)."""
    if _last[0] is None:
        print("No error from helpers has been shown in this session.", file=file)
        return
    print("".join(traceback.format_exception(*_last[0])), file=file)
