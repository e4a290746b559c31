"""A verdict, and how verdict sentences name threads, blocks, lines and elements.

Shared by the analyses in ``verdicts`` and ``races`` (and the grouping by ``metrics``).
"""

import linecache
from dataclasses import dataclass, field

import numpy as np

from ..accesses import ATOMIC, READ, WRITE

VERB = {READ: "read", WRITE: "wrote", ATOMIC: "atomically updated"}

CHUNK = 1 << 19  # log rows analysed at a time: the temporaries stay this size, whatever the log's


def block_chunks(t):
    """Row ranges (start, stop) that split the log between blocks, about CHUNK rows each: a warp
    never spans blocks, so each range's warp-wide accesses are whole. One range when blocks
    interleave in the log (a grid sync runs them side by side)."""
    a = t.accesses
    n = len(a)
    if n <= CHUNK:
        return [(0, n)]
    block = np.empty(n, np.int32 if t.nblocks < 2**31 else np.int64)
    for s in range(0, n, CHUNK):
        block[s : s + CHUNK] = a.gtid[s : s + CHUNK] // a.tpb
    if np.any(block[1:] < block[:-1]):
        return [(0, n)]
    cuts = np.searchsorted(block, block[CHUNK::CHUNK])  # back to the first row of the block at each cut
    edges = [0] + [int(c) for c in np.unique(cuts) if c > 0] + [n]
    return list(zip(edges[:-1], edges[1:]))


@dataclass
class Verdict:
    """One kind of mistake on one array, with its first example and how many more there are."""

    kind: str
    message: str
    array: object = None  # array name, or None (divergent barrier)
    index: object = None  # multi-dimensional element index of the example
    block: object = None  # (x, y, z) of the example
    thread: object = None  # (x, y, z) within its block
    line: object = None
    count: int = 1  # offending elements (or events) in all
    accesses: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    # ^ positions in Trace.accesses of every offending access, for highlighting in pictures
    details: dict = field(default_factory=dict)

    def __str__(self):
        return self.message


def packed(*cols):
    """One int64 key per row that orders rows as the tuple of `cols` does, or None if none fits.

    Mixed radix: each column is shifted to start at 0 and multiplied by the spans of the columns
    after it, so sorting the keys sorts the rows lexicographically (first column first). One
    sort of int64 keys is many times faster than np.lexsort over several columns or np.unique
    over a (k, n) table (which sorts rows as raw bytes); when the spans multiply past 2**62 (huge
    arrays and many groups at once) the caller falls back to lexsort.
    """
    spans, lows = [], []
    for c in cols:
        lo, hi = int(c.min()), int(c.max())
        lows.append(lo)
        spans.append(hi - lo + 1)
    total = 1
    for s in spans:
        total *= s
    if total >= 1 << 62:
        return None
    key = np.zeros(len(cols[0]), np.int64)
    for c, lo, s in zip(cols, lows, spans):
        key *= s
        key += c  # into the int64 key first: c - lo could overflow a narrow column (int8 kinds, int32 ids)
        if lo:
            key -= lo
    return key


def group_ids(*cols):
    """Dense group id per row for the combination of `cols` (and the number of groups); ids
    follow the lexicographic order of the rows' values."""
    n = len(cols[0])
    if n == 0:
        return np.zeros(0, np.int64), 0
    key = packed(*cols)
    change = np.zeros(n, bool)
    change[0] = True
    if key is not None:
        # a stable sort (timsort) is quick on logs, which come nearly sorted; np.unique's inverse is not
        order = np.argsort(key, kind="stable")
        key = key[order]  # sorted in place of the original: one key array alive, not two
        np.not_equal(key[1:], key[:-1], out=change[1:])
        del key
    else:
        order = np.lexsort(cols[::-1])
        for c in cols:
            s = c[order]
            change[1:] |= s[1:] != s[:-1]
    gid_sorted = np.cumsum(change, dtype=np.int64)
    del change
    gid_sorted -= 1
    gid = np.empty(n, np.int64)
    gid[order] = gid_sorted
    return gid, int(gid_sorted[-1]) + 1


def distinct(*cols, counts=False):
    """The distinct rows of `cols` as a list of columns (lexicographic order), as
    np.unique(np.stack(cols), axis=1) gives them; with `counts`, also how often each occurs."""
    n = len(cols[0])
    key = packed(*cols) if n else None
    if key is not None:
        key.sort(kind="stable")
        change = np.r_[True, key[1:] != key[:-1]]
        starts = np.flatnonzero(change)
        out = _unpack(key[starts], cols)
    else:  # empty, or too wide to pack: sort the rows column by column
        order = np.lexsort(cols[::-1]) if n else np.zeros(0, np.int64)
        change = np.zeros(n, bool)
        change[:1] = True
        for c in cols:
            s = c[order]
            change[1:] |= s[1:] != s[:-1]
        starts = np.flatnonzero(change)
        out = [np.asarray(c)[order[starts]] for c in cols]
    if counts:
        return out, np.diff(np.r_[starts, n])
    return out


def distinct_first(*cols):
    """The first column of `distinct(*cols)` alone: one division per distinct row, not one per column."""
    n = len(cols[0])
    key = packed(*cols) if n else None
    if key is None:
        return distinct(*cols)[0]
    key.sort()
    keep = np.r_[True, key[1:] != key[:-1]]
    rest = 1
    for c in cols[1:]:
        rest *= int(c.max()) - int(c.min()) + 1
    return key[keep] // rest + int(cols[0].min())


def _unpack(keys, cols):
    """The columns back from `packed` keys (the same columns' lows and spans)."""
    lows = [int(c.min()) for c in cols]
    spans = [int(c.max()) - lo + 1 for c, lo in zip(cols, lows)]
    out = []
    for lo, s in zip(lows[::-1], spans[::-1]):
        out.append(keys % s + lo)
        keys = keys // s
    return out[::-1]


def ranges(values):
    """[0,1,2,5,7,8] -> '0–2, 5, 7–8' (sorted, unique)."""
    values = np.unique(np.asarray(values, dtype=np.int64))
    if len(values) == 0:
        return ""
    breaks = np.flatnonzero(np.diff(values) != 1)
    starts = np.r_[values[0], values[breaks + 1]]
    ends = np.r_[values[breaks], values[-1]]
    parts = [f"{s}" if s == e else f"{s}–{e}" for s, e in zip(starts, ends)]
    if len(parts) > 6:
        parts = parts[:6] + [f"… ({len(parts) - 6} more ranges)"]
    return ", ".join(parts)


def fmt3(xyz, dims):
    """(3, 0, 0) -> '3' for 1-D launches, '(3, 0)' for 2-D, '(3, 0, 1)' for 3-D."""
    n = 3 if dims[2] > 1 else 2 if dims[1] > 1 else 1
    return str(xyz[0]) if n == 1 else "(" + ", ".join(str(v) for v in xyz[:n]) + ")"


def idx(index):
    return ", ".join(str(int(i)) for i in index) or "()"  # a 0-d array's one element is x[()]


def who(t, gtid):
    return f"thread {fmt3(t.thread_of(gtid), t.blockdim)} of block {fmt3(t.block_of(gtid), t.griddim)}"


def where(t, loc):
    where = t.locations[loc]
    src = where.source
    return f"line {where.line}" + (f" (`{src}`)" if src else "")


def more(count, one, many):
    """' …and 3 more elements of x.' (count includes the example already described)."""
    if count <= 1:
        return ""
    return f" …and {count - 1} more {one if count == 2 else many}."


def source_line(code, line):

    s = linecache.getline(code.co_filename, line).strip()
    return f" (`{s}`)" if s else ""
