"""Where a check's work on a student's code runs while the batch grader judges.

Why: in the grader's judged mode the checks run in the grader's process, but compiling a
student's CUDA C (an ``#include`` of any file, a preprocessor bomb) and launching it on a GPU must
happen in the student's sandboxed process. While ``judging(channel)`` is active, the few
low-level entry points that do such work (``cuda_c.compile``, the CUDA C exercises' GPU runners)
send it there through ``channel.request``. Outside the grader nothing is set and everything runs
here, as always. Standard library only: the lowest layer may use it.
"""

from __future__ import annotations

import contextlib
import contextvars

_CHANNEL = contextvars.ContextVar("course_judging_channel", default=None)


def is_remote(obj) -> bool:
    """True for a stand-in for an answer that lives in the student's process (exercises/remote.py)."""
    return bool(getattr(type(obj), "_course_remote", False))


def channel():
    """The student's process to send work to, or None (run it here)."""
    return _CHANNEL.get()


@contextlib.contextmanager
def judging(chan):
    token = _CHANNEL.set(chan)
    try:
        yield
    finally:
        _CHANNEL.reset(token)
