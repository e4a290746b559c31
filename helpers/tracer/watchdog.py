"""A time budget for learner code: a trace or a check that runs too long stops with one sentence.

``with watchdog(seconds, describe):`` arms ``SIGALRM`` (``signal.setitimer``); when it fires,
the handler runs in the interrupted frame, which is the learner's code, so ``describe(frame,
seconds)`` can name the block, thread and line that was running, and the handler raises
``TookTooLong`` (as a BaseException that a learner's ``except Exception`` cannot swallow, turned
into ``TookTooLong`` on the way out). Watchdogs nest (a check around the traces it runs): the innermost
description that recognises the frame wins, and the earliest deadline holds. Outside the main
thread (or where there is no SIGALRM) the code simply runs without a budget.
"""

from __future__ import annotations

import linecache
import math
import numbers
import os
import signal
import sysconfig
import threading
import time
from contextlib import contextmanager
from pathlib import Path

from ..errors import LearnerValueError, TookTooLong, shown

DEFAULT_SECONDS = 20.0
ENV = "COURSE_WATCHDOG_S"
HELPERS = str(Path(__file__).resolve().parent.parent)  # frames under here are the course's, not the learner's
LIBRARIES = tuple({sysconfig.get_paths()[k] for k in ("stdlib", "purelib", "platlib")})


class _Stop(BaseException):
    """Raised in the learner's frame: a BaseException, so their `except Exception:` cannot swallow it.
    The watchdog turns it into ``TookTooLong`` once it is back in the course's code."""


_stack = []  # (describe, started, seconds) of the active watchdogs, outermost first
_fired = [False]
_progress = [0.0]  # when the course last saw progress (a traced thread started or resumed)


def touch() -> None:
    """Progress: the tracer calls this as each thread starts or resumes, so the budget is the time
    one piece of learner code has run without returning control, not the length of a whole check
    (a correct tiled matmul on a loaded 2-core machine may take longer than the budget)."""
    _progress[0] = time.monotonic()


def budget(seconds=None) -> float:
    """Seconds allowed: ``seconds`` if given, else $COURSE_WATCHDOG_S, else 20; 0 or less disables."""
    if seconds is None:
        try:
            seconds = float(os.environ.get(ENV, DEFAULT_SECONDS))
        except ValueError:
            seconds = DEFAULT_SECONDS
    elif isinstance(seconds, bool) or not isinstance(seconds, numbers.Real) or math.isnan(seconds):
        raise LearnerValueError(
            f"watchdog is a time in seconds, such as watchdog=60 (0 turns it off), not {shown(seconds)}."
        )
    return float(seconds)


def learner_frame(frame, codes=None):
    """The innermost frame of the learner's code at or above ``frame``: one of ``codes`` when given,
    else the first frame outside libraries met before any frame of ``helpers`` (the caller's)."""
    while frame is not None:
        name = frame.f_code.co_filename
        if codes is not None:
            if frame.f_code in codes:
                return frame
        elif name.startswith(HELPERS):
            return None
        elif not name.startswith(LIBRARIES):
            return frame
        frame = frame.f_back
    return None


def line_text(frame, lineno=None) -> str:
    lineno = frame.f_lineno if lineno is None else lineno
    src = linecache.getline(frame.f_code.co_filename, lineno).strip()
    return f"line {lineno}" + (f" (`{src}`)" if src else "")


def describe_function(what="your function"):
    """A describer for plain learner code (function answers, a check as a whole)."""

    def describe(frame, seconds):
        f = learner_frame(frame)
        if f is None:
            return None
        return f"{what} has run {line_text(f)} for {seconds:.0f} s: is a loop missing its exit?"

    return describe


def _on_alarm(signum, frame):
    now = time.monotonic()
    seconds = now - _progress[0]
    allowed = min(b for _, _, b in _stack) if _stack else 0.0
    if not _fired[0] and seconds < allowed:  # progress was made since the alarm was set: wait on
        signal.setitimer(signal.ITIMER_REAL, allowed - seconds, 0.5)
        return
    first = not _fired[0]
    _fired[0] = True
    for describe, _, _ in reversed(_stack):
        message = describe(frame, seconds)
        if message:
            raise _Stop(message)
    if first:  # nobody recognised the frame: stop anyway, once; later alarms wait for learner code
        raise _Stop(f"the check has run for {seconds:.0f} s and was stopped: is a loop missing its exit?")


def _usable() -> bool:
    return hasattr(signal, "setitimer") and threading.current_thread() is threading.main_thread()


@contextmanager
def watchdog(seconds=None, describe=None):
    """Run the body with a budget of ``seconds`` (see ``budget``); raise ``TookTooLong`` past it."""
    seconds = budget(seconds)
    if seconds <= 0 or not _usable():
        yield
        return
    describe = describe or describe_function()
    started = time.monotonic()
    old_delay, old_interval = signal.getitimer(signal.ITIMER_REAL)
    delay = min(seconds, old_delay) if old_delay > 0 else seconds
    try:
        old_handler = signal.signal(signal.SIGALRM, _on_alarm)
    except ValueError:  # not the main thread after all
        yield
        return
    if not _stack:
        _fired[0] = False
    _stack.append((describe, started, seconds))
    touch()
    # After the first alarm, repeat every half second so a learner's `except:` cannot swallow it for good.
    signal.setitimer(signal.ITIMER_REAL, delay, 0.5)
    try:
        yield
    except _Stop as stop:
        raise TookTooLong(str(stop)) from None
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        _stack.pop()
        signal.signal(signal.SIGALRM, old_handler)
        if old_delay > 0:
            left = old_delay - (time.monotonic() - started)
            signal.setitimer(signal.ITIMER_REAL, max(left, 0.001), old_interval)
