"""Barrier loops that never end: a block whose threads come back to a barrier (or a warp call)
with nothing changed since the round before.

The watchdog counts a thread resuming from a barrier as progress (a correct tiled matmul passes
thousands of barriers), so a loop around ``cuda.syncthreads()`` whose exit is never reached
(``while s >= 0: ...; s //= 2`` once s is 0) would run forever. The scheduler is deterministic:
when every waiting thread is on the same line with the same variables, and shared memory, the
kernel's arrays and which threads have finished are all as they were one round earlier, every
later round repeats it. That is a proof, not a guess, so it is said at once. Looking costs a pass
over the block's frames and arrays, so it is done at most every ``EVERY_S`` seconds: two
consecutive rounds are compared, then the check rests.
"""

from __future__ import annotations

import hashlib
import numbers
import time

import numpy as np

from ..errors import TookTooLong
from .watchdog import line_text

EVERY_S = 0.5


def _digest(h, value) -> None:
    if isinstance(value, np.ndarray):
        h.update(repr((value.dtype.str, value.shape)).encode())
        h.update(np.ascontiguousarray(value).view(np.uint8).tobytes())
    elif isinstance(value, (numbers.Number, np.generic)):
        h.update(repr(value).encode())
    h.update(b"|")


def _frames(greenlet, codes):
    """The learner's frames a suspended thread is in (kernel and device functions), innermost first."""
    frame = getattr(greenlet, "gr_frame", None)
    while frame is not None:
        if frame.f_code in codes:
            yield frame
        frame = frame.f_back


def _raw(value):
    """The NumPy array behind a traced array, or the value itself."""
    try:
        inner = getattr(value, "_data", None)
    except Exception:  # the fake `cuda` (a closure's free variable) refuses names it does not know
        return value
    return inner if isinstance(inner, np.ndarray) else value


class SpinCheck:
    """Compares a round of the scheduler with the one before, every ``EVERY_S`` seconds."""

    def __init__(self, fn_name: str, codes, every: float | None = None):
        self.fn_name, self.codes = fn_name, codes
        self.every = EVERY_S if every is None else every
        self.due = time.monotonic() + self.every
        self.before = None

    def round(self, threads, waiting, finished, shared, args) -> None:
        """After a round: raise TookTooLong if this round's state is the last one's."""
        if self.before is None and time.monotonic() < self.due:
            return
        state = self._state(threads, waiting, finished, shared, args)
        if self.before is None:
            self.before = state
            return
        if state == self.before:
            raise TookTooLong(self._sentence(threads, waiting))
        self.before = None
        self.due = time.monotonic() + self.every

    def _state(self, threads, waiting, finished, shared, args) -> str:
        h = hashlib.blake2b(digest_size=16)
        h.update(repr(sorted(finished)).encode())
        for g in sorted(waiting):
            kind, site, payload = waiting[g]
            h.update(repr((g, kind, site[1], payload)).encode())
            for frame in _frames(threads[g], self.codes):
                h.update(repr((frame.f_code.co_name, frame.f_lineno)).encode())
                for name, value in sorted(frame.f_locals.items(), key=lambda kv: kv[0]):
                    h.update(name.encode())
                    _digest(h, _raw(value))
        for block in sorted(shared):
            for name, value in sorted(shared[block].items(), key=lambda kv: str(kv[0])):
                h.update(str(name).encode())
                _digest(h, _raw(value))
        for value in args:
            _digest(h, _raw(value))
        return h.hexdigest()

    def _sentence(self, threads, waiting) -> str:
        g = min(waiting)
        frame = next(_frames(threads[g], self.codes), None)
        where = line_text(frame) if frame is not None else "a barrier"
        return (
            f"{self.fn_name}'s threads keep coming back to {where} with every variable and every array unchanged "
            "since the last time: the loop around it can never reach its exit, so check its condition."
        )
