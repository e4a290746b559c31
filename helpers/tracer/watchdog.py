"""A time budget for learner code: a trace or a check that runs too long stops with one sentence.

``with watchdog(seconds, describe):`` arms ``SIGALRM`` (``signal.setitimer``); when it fires,
the handler runs in the interrupted frame, which is the learner's code, so ``describe(frame,
seconds, advancing)`` can name the block, thread and line that was running, and the handler raises
``TookTooLong`` (as a BaseException that a learner's ``except Exception`` cannot swallow, turned
into ``TookTooLong`` on the way out). Watchdogs nest (a check around the traces it runs): the innermost
description that recognises the frame wins, and the earliest deadline holds. Outside the main
thread (or where there is no SIGALRM) the code simply runs without a budget.

Time spent in the course's own code alone (drawing a picture, awaiting a compile) counts as
progress: a loaded machine slows the course, and the budget is the learner code's. Before it stops
anything the watchdog looks twice, half a second apart, at the learner's innermost frame:
``advancing`` is whether its variables changed in between (a loop doing real work, too much of it
for the budget) or not (a loop spinning in place, missing its exit). A run that makes progress
is never stopped, but past its budget ``notice(frame, seconds)`` may say once that it is still going
(the tracer says how far it got: each thread runs as Python, and many of them take minutes).
"""

from __future__ import annotations

import linecache
import math
import numbers
import os
import signal
import sys
import sysconfig
import threading
import time
from contextlib import contextmanager
from pathlib import Path

import numpy as np

from ..errors import LearnerValueError, TookTooLong, shown
from .lanes import Lanes

DEFAULT_SECONDS = 20.0
ENV = "COURSE_WATCHDOG_S"
HELPERS = str(Path(__file__).resolve().parent.parent)  # frames under here are the course's, not the learner's
LIBRARIES = tuple({sysconfig.get_paths()[k] for k in ("stdlib", "purelib", "platlib")})


class _Stop(BaseException):
    """Raised in the learner's frame: a BaseException, so their `except Exception:` cannot swallow it.
    The watchdog turns it into ``TookTooLong`` once it is back in the course's code."""


_stack = []  # _Armed of the active watchdogs, outermost first
_fired = [False]
_progress = [0.0]  # when the course last saw progress (a traced thread started or resumed)
_look = [None]  # (progress stamp, frame, its numeric variables): the first look before a stop
LOOK_AGAIN_S = 0.5  # the second look, and every alarm after the first stop (the itimer's interval)
LOOKS = 3  # looks at most before a run seen in a new frame each time counts as moving on


class _Armed:
    """One active watchdog: its description, notice, start, budget, and whether its notice was said."""

    __slots__ = ("describe", "notice", "started", "seconds", "noticed", "armed_in")

    def __init__(self, describe, notice, started, seconds, armed_in=None):
        self.describe, self.notice, self.started, self.seconds = describe, notice, started, seconds
        self.noticed = False
        self.armed_in = armed_in  # the frame whose `with watchdog(...)` armed it


def touch() -> None:
    """Progress: the tracer calls this as each thread starts or resumes, so the budget is the time
    one piece of learner code has run without returning control, not the length of a whole check
    (a correct tiled matmul on a loaded 2-core machine may take longer than the budget)."""
    _progress[0] = time.monotonic()


def armed() -> bool:
    """Is any watchdog running (so `touch` matters)? Off (0 s), or outside the main thread, none is."""
    return bool(_stack)


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

    def describe(frame, seconds, advancing=False):
        f = learner_frame(frame)
        if f is None:
            return None
        if advancing:
            return (
                f"{what} has run {line_text(f)} for {seconds:.0f} s and its variables keep changing: a loop that "
                "never reaches its exit, or far more work than these inputs need?"
            )
        return f"{what} has run {line_text(f)} for {seconds:.0f} s: is a loop missing its exit?"

    return describe


def _innermost_learner(frame):
    """The innermost frame outside helpers and libraries (the learner's code, inside a tracer call too)."""
    while frame is not None:
        name = frame.f_code.co_filename
        if not name.startswith(HELPERS) and not name.startswith(LIBRARIES):
            return frame
        frame = frame.f_back
    return None


def _state(frame):
    """What changes when a loop advances: the learner frame and the numbers it holds."""
    f = _innermost_learner(frame)
    if f is None:
        return None
    try:
        held = {k: v for k, v in f.f_locals.items() if isinstance(v, (numbers.Number, np.generic))}
        # threads running as NumPy lanes (helpers.tracer.vector): every lane's value, as bytes
        held.update({k: v.v.tobytes() for k, v in f.f_locals.items() if isinstance(v, Lanes)})
    except Exception:  # a frame whose variables cannot be read: no evidence either way
        return None
    return f, held


def _advancing(before, after):
    """Did the learner's code move on between two looks (other variables, or another call)?"""
    if before is None or after is None:
        return False
    if before[0] is not after[0]:
        return True
    return any(k not in after[1] or not _same(v, after[1][k]) for k, v in before[1].items())


def _other_frame(before, after):
    return before is not None and after is not None and before[0] is not after[0]


def _same(a, b):
    try:
        return bool(a == b) or (a != a and b != b)  # nan stays nan
    except Exception:
        return a is b


def _course_code_only(frame, armed_in) -> bool:
    """Is only the course's own code running (a picture drawn, a compile awaited) between the alarm's
    frame and the frame that armed the watchdog? Any learner frame on the way means learner code runs
    (a kernel in the tracer, a function under test). A loaded machine makes the course slow, not the learner."""
    while frame is not None:
        name = frame.f_code.co_filename
        if not name.startswith(HELPERS) and not name.startswith(LIBRARIES):
            return False
        if frame is armed_in:
            return True
        frame = frame.f_back
    return True


def _on_alarm(signum, frame):
    now = time.monotonic()
    seconds = now - _progress[0]
    allowed = min(w.seconds for w in _stack) if _stack else 0.0
    if not _fired[0] and _stack and _course_code_only(frame, _stack[-1].armed_in):  # course time is progress
        touch()
        _look[0] = None
        signal.setitimer(signal.ITIMER_REAL, allowed, LOOK_AGAIN_S)
        return
    if not _fired[0] and seconds < allowed:  # progress was made since the alarm was set: wait on
        _notice(frame, now)
        signal.setitimer(signal.ITIMER_REAL, allowed - seconds, LOOK_AGAIN_S)
        return
    if not _fired[0] and (_look[0] is None or _look[0][0] != _progress[0]):  # look once, stop at the next alarm
        _look[0] = (_progress[0], _state(frame), 1)
        signal.setitimer(signal.ITIMER_REAL, LOOK_AGAIN_S, LOOK_AGAIN_S)
        return
    now_state = _state(frame)
    if not _fired[0] and _other_frame(_look[0][1], now_state) and _look[0][2] < LOOKS:
        # The first look may have caught code that ran before the loop (a slow start on a loaded
        # machine): look again at this frame before saying whether its variables move.
        _look[0] = (_progress[0], now_state, _look[0][2] + 1)
        return
    advancing = not _fired[0] and _advancing(_look[0][1], now_state)
    _look[0] = None
    first = not _fired[0]
    _fired[0] = True
    for armed in reversed(_stack):
        message = armed.describe(frame, seconds, advancing)
        if message:
            raise _Stop(message)
    if first:  # nobody recognised the frame: stop anyway, once; later alarms wait for learner code
        raise _Stop(f"the check has run for {seconds:.0f} s and was stopped: is a loop missing its exit?")


def _notice(frame, now):
    """Past its budget, a run that keeps making progress is said once to be still going (outermost only:
    a check prints its own results, and a trace inside it is one of many)."""
    if len(_stack) != 1:
        return
    armed = _stack[0]
    if armed.notice is None or armed.noticed or now - armed.started < armed.seconds:
        return
    armed.noticed = True
    text = armed.notice(frame, now - armed.started)
    if text:
        print(text, flush=True)


def _usable() -> bool:
    return hasattr(signal, "setitimer") and threading.current_thread() is threading.main_thread()


@contextmanager
def watchdog(seconds=None, describe=None, notice=None):
    """Run the body with a budget of ``seconds`` (see ``budget``); raise ``TookTooLong`` past it.
    ``notice(frame, seconds)``: a line said once when the body, still making progress, outlasts it."""
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
        _look[0] = None
    # 0: this generator, 1: contextlib's __enter__, 2: the frame of the `with` statement
    _stack.append(_Armed(describe, notice, started, seconds, sys._getframe(2)))
    touch()
    # After the first alarm, repeat every half second so a learner's `except:` cannot swallow it for good.
    signal.setitimer(signal.ITIMER_REAL, delay, LOOK_AGAIN_S)
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
