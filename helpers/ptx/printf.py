"""`printf` in a kernel: NVRTC turns it into `vprintf(format, argument buffer)`.

Why: learners debug with printf. Each thread's line is formatted here, in thread order,
and appended to `PtxRun.printed` instead of going to a terminal. The argument buffer is
laid out as C varargs are: each value aligned to its size, floats promoted to double.
"""

from __future__ import annotations

import re

import numpy as np

_SPEC = re.compile(r"%([-+ #0]*)(\d+|\*)?(?:\.(\d+|\*))?(hh|h|ll|l|z|j|t|L)?([diouxXeEfFgGcspa%])")


def format_c(fmt, raw, read_string):
    """Format like C printf from the packed argument bytes `raw`."""
    out, pos, last = [], 0, 0
    for m in _SPEC.finditer(fmt):
        out.append(fmt[last : m.start()])
        last = m.end()
        flags, width, prec, length, conv = m.groups()
        if conv == "%":
            out.append("%")
            continue
        size = 8 if conv in "eEfFgGaspd" and (conv in "eEfFgGasp" or length in ("l", "ll", "z", "j", "t")) else 4
        if conv in "diouxXc" and length not in ("l", "ll", "z", "j", "t"):
            size = 4
        pos = -(-pos // size) * size
        chunk = raw[pos : pos + size].ljust(size, b"\0")
        pos += size
        spec = "%" + (flags or "") + (width or "") + (f".{prec}" if prec else "")
        if conv in "eEfFgGa":
            v = np.frombuffer(chunk, np.float64)[0]
            out.append((spec + ("e" if conv == "a" else conv)) % v)
        elif conv == "s":
            out.append((spec + "s") % read_string(int(np.frombuffer(chunk, np.uint64)[0])))
        elif conv == "p":
            out.append(hex(int(np.frombuffer(chunk, np.uint64)[0])))
        elif conv == "c":
            out.append((spec + "c") % chr(int(np.frombuffer(chunk, np.uint32)[0]) & 0xFF))
        else:
            dt = {4: np.int32, 8: np.int64}[size] if conv in "di" else {4: np.uint32, 8: np.uint64}[size]
            v = int(np.frombuffer(chunk, dt)[0])
            out.append((spec + ("d" if conv in "diu" else conv)) % v)
    out.append(fmt[last:])
    return "".join(out)


def make_vprintf(prog, fn, argnames, rets):
    from .machine import _split

    fkey, akey = (fn.name, argnames[0]), (fn.name, argnames[1]) if len(argnames) > 1 else None

    def vprintf(S, idx, p, guard):
        t = _split(S, idx, p, guard)
        fbuf = S.fparam_buf(fkey, 8)
        abuf = S.fparam_buf(akey, 8) if akey else None
        for tid in t:
            fmt = prog.read_bytes(S, tid, fbuf[tid, :8].view(np.uint64)[0]).decode(errors="replace")
            raw = prog.read_bytes(S, tid, abuf[tid, :8].view(np.uint64)[0], 512) if abuf is not None else b""
            S.printed.append(
                (int(tid), format_c(fmt, raw, lambda a, tid=tid: prog.read_bytes(S, tid, a).decode(errors="replace")))
            )
        S.pc[t] = p + 1

    return vprintf
