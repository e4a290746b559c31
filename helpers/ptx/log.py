"""The access log of running threads: one run of rows per logged access, built into the table at a flush.

Why runs: an instruction logs the same array, kind and line for all its threads, so a run keeps
those once and the element, thread and epoch as arrays; the (6, n) table of helpers.accesses is
built once per barrier interval, in thread order (stable: one thread's accesses keep their order),
which is the order the Numba tracer, one thread after another, produces. grid.py reads the runs
to see whether blocks that ran together touched each other's elements.
"""

from __future__ import annotations

import mmap
import sys
from typing import NamedTuple

import numpy as np

BIG_TABLE = 1 << 26  # bytes from which the table gets plain pages (see _table)
SORT_BELOW = 1 << 16  # runs with different threads: fewer rows, one stable argsort; more, placed by counting


class Run(NamedTuple):
    """Rows logged by one access of a group of threads: `tids` are the running object's thread numbers."""

    aid: int
    elems: np.ndarray
    kind: int
    tids: np.ndarray
    epochs: np.ndarray  # or one number for every row
    loc: int
    wide: bool  # a thread may have several consecutive rows (an access wider than one element)


class AccessLog:
    def __init__(self):
        self.runs = []

    def record(self, win, off, w, tids, epochs, kind, loc, elems=None):
        """Log one access per element of `win` that the w bytes at offsets `off` touch (`elems`: known already)."""
        if elems is not None:
            self.runs.append(Run(win.aid, elems, kind, tids, epochs, loc, False))
            return
        isz = win.itemsize
        first = off // isz
        if w <= isz and not (off % isz).any():
            self.runs.append(Run(win.aid, first, kind, tids, epochs, loc, False))
            return
        last = (off + w - 1) // isz
        if np.array_equal(first, last):
            self.runs.append(Run(win.aid, first, kind, tids, epochs, loc, False))
            return
        span = int((last - first).max()) + 1  # a wide access covers several elements: one row each, in address order
        e = first[:, None] + np.arange(span)
        keep = e <= last[:, None]
        per = keep.sum(1)
        epochs = np.repeat(epochs, per) if np.ndim(epochs) else epochs
        self.runs.append(Run(win.aid, e[keep], kind, np.repeat(tids, per), epochs, loc, True))

    def take(self, gbase, n):
        """The logged rows as a (6, rows) table in thread order (thread numbers + gbase), or None; the log empties."""
        runs, self.runs = self.runs, []
        if not runs:
            return None
        total = sum(len(r.elems) for r in runs)
        t = _table(total)
        first = runs[0].tids
        if all(not r.wide and (r.tids is first or np.array_equal(r.tids, first)) for r in runs):
            _interleave(t, runs)
        elif total < SORT_BELOW:
            _sort(t, runs)
        else:
            _place(t, runs, n)
        t[3] += gbase
        return t


def _interleave(t, runs):
    """Every run has the same threads, once each (a whole block or grid that did not branch apart): thread
    i's rows are row i of each run, in run order, so each column is one strided copy, no sort."""
    view = t.reshape(6, len(runs[0].tids), len(runs))
    view[0] = [r.aid for r in runs]
    np.stack([r.elems for r in runs], axis=1, out=view[1])
    view[2] = [r.kind for r in runs]
    view[3] = runs[0].tids[:, None]
    if all(np.ndim(r.epochs) for r in runs):
        np.stack([r.epochs for r in runs], axis=1, out=view[4])
    else:
        for k, r in enumerate(runs):
            view[4, :, k] = r.epochs
    view[5] = [r.loc for r in runs]


def _sort(t, runs):
    """A stable argsort by thread."""
    sizes = [len(r.elems) for r in runs]
    gt = np.concatenate([r.tids for r in runs])
    order = np.argsort(gt, kind="stable")
    t[0] = np.repeat([r.aid for r in runs], sizes)[order]
    t[1] = np.concatenate([r.elems for r in runs])[order]
    t[2] = np.repeat([r.kind for r in runs], sizes)[order]
    t[3] = gt[order]
    t[4] = np.concatenate([r.epochs if np.ndim(r.epochs) else np.full(n, r.epochs) for r, n in zip(runs, sizes)])[order]
    t[5] = np.repeat([r.loc for r in runs], sizes)[order]


def _table(rows):
    """An uninitialised (6, rows) int64 table. On Linux a large one is mapped in plain 4 KB pages, filled
    in one system call: NumPy asks Linux for huge pages for anything over 4 MB, and on a busy machine the
    kernel then compacts memory first, which cost 0.3-0.6 s of system time for SAXPY's 144 MB table on
    this repo's 2-core machine, where these pages cost 0.1 s every time."""
    if rows * 48 < BIG_TABLE or not sys.platform.startswith("linux"):
        return np.empty((6, rows), np.int64)
    flags = mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS | getattr(mmap, "MAP_POPULATE", 0)
    return np.frombuffer(mmap.mmap(-1, rows * 48, flags=flags), np.int64).reshape(6, rows)


def _place(t, runs, n):
    """Each row straight to its place in thread order: a thread's rows start after every lower thread's rows,
    and follow one another in the order they were logged (what a stable sort by thread gives)."""
    counts = np.zeros(n, np.int64)
    for r in runs:
        if r.wide:
            np.add.at(counts, r.tids, 1)
        else:
            counts[r.tids] += 1  # a thread appears once in a run that is not wide
    nxt = np.cumsum(counts) - counts
    for r in runs:
        dest = nxt[r.tids]
        if r.wide:
            dest += np.arange(len(r.tids)) - np.searchsorted(r.tids, r.tids)
            np.add.at(nxt, r.tids, 1)
        else:
            nxt[r.tids] += 1
        t[0, dest] = r.aid
        t[1, dest] = r.elems
        t[2, dest] = r.kind
        t[3, dest] = r.tids
        t[4, dest] = r.epochs
        t[5, dest] = r.loc
