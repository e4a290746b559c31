"""Warp-level instructions: shfl.sync, vote.sync, match.sync, redux.sync, activemask, bar.warp.sync.

Why a simple model: the lanes of a warp exchange values only when they execute the same
instruction together. Here the threads that run an instruction together are exactly the
threads at the same program counter (see machine.py), so a lane "arrives" at a warp
instruction if it is in that group. Every lane named in `membermask` must arrive and the
executing lane must be in its own mask; when not (the lane exited, is elsewhere in the
code, or the mask leaves it out), a `warp_misuse` entry is recorded (the GPU result is
undefined) and the value is taken from the source lane's register as it stands.
"""

from __future__ import annotations

import numpy as np

from ..accesses import WARP_EPOCH
from .parser import Vec
from .values import DTYPES

U32, PRED = DTYPES["u32"], DTYPES["pred"]


def _lanes(S, idx):
    """Threads, their lanes and the thread number of their warp's lane 0 (warps never cross blocks)."""
    t = S.tids(idx)
    if S.nblk == 1:
        return t, t % 32, t - t % 32
    return t, S.warps.lane[t], S.warps.first[t]


def _warp_ids(S, t):
    """A number per warp of the running block(s), and how many there are."""
    if S.nblk == 1:
        return t // 32, (S.n + 31) // 32
    return S.warps.wid[t], S.warps.count


def _first_per_block(S, t, sel, k):
    """The first k of `sel` in each block: what one block alone would look at."""
    if S.nblk == 1:
        return sel[:k]
    blk = t[sel] // S.tpb
    return sel[np.arange(len(sel)) - np.searchsorted(blk, blk) < k]


def check(S, idx, mask, loc, what):
    """Record lanes that break the mask rules; returns the bitmask of arrived lanes per thread."""
    t, lane, base = _lanes(S, idx)
    warp, nw = _warp_ids(S, t)
    present = np.zeros(nw, np.uint64)
    np.bitwise_or.at(present, warp, np.uint64(1) << lane.astype(np.uint64))
    arrived = present[warp].astype(np.uint32)
    mask = np.broadcast_to(np.asarray(mask).astype(np.uint32), t.shape)
    own = (mask >> lane.astype(np.uint32)) & 1
    missing = mask & ~arrived
    bad = (own == 0) | (missing != 0)
    if bad.any():
        prog = S.prog
        for i in _first_per_block(S, t, np.flatnonzero(bad), 32):
            block, local = S.block_of(int(t[i])), int(t[i]) % S.tpb
            first = local - int(lane[i])  # lane 0 within the block
            key = (block, local // 32, loc, S.clock)
            if key in prog.misuse_seen or len(prog.warp_misuse) > 1000:
                continue
            prog.misuse_seen.add(key)
            where = prog.locations[loc]
            gone = [int(x) for x in range(32) if missing[i] >> x & 1]
            prog.warp_misuse.append(
                {
                    "block": block,
                    "warp": local // 32,
                    "lane": int(lane[i]),
                    "mask": int(mask[i]),
                    "line": where.line,
                    "code": where.code,
                    "what": what,
                    "missing": gone,
                    "exited": [x for x in gone if first + x >= S.tpb or S.state[base[i] + x] == 2],
                    "why": (
                        "its own lane is not in the mask"
                        if own[i] == 0
                        else f"lanes {gone} named in the mask did not arrive (they exited or are elsewhere)"
                    ),
                }
            )
    return arrived & mask


def decode_shfl(ins, cx):
    mode = next(p for p in ins.parts if p in ("up", "down", "bfly", "idx"))
    T = DTYPES.get(ins.parts[-1], U32)
    dst = ins.operands[0]
    dd, dp = dst.items if isinstance(dst, Vec) else (dst, None)
    d = cx.dst(dd, T)
    p = cx.dst(dp, PRED) if dp is not None else None
    a, b, c = cx.src(ins.operands[1], T), cx.src(ins.operands[2], U32), cx.src(ins.operands[3], U32)
    mk = cx.src(ins.operands[4], U32) if len(ins.operands) > 4 else (lambda S, idx: np.uint32(0xFFFFFFFF))
    loc = cx.prog.loc_id(cx.fn, ins)
    slot = cx.slot(ins.operands[1].name)[0] if hasattr(ins.operands[1], "name") else None

    def run(S, idx):
        t, lane, base = _lanes(S, idx)
        check(S, idx, mk(S, idx), loc, "shfl.sync")
        bval = np.asarray(b(S, idx)).astype(np.int64) & 31
        cv = np.asarray(c(S, idx)).astype(np.int64)
        cval, seg = cv & 31, (cv >> 8) & 31
        maxl = (lane & seg) | (cval & ~seg)
        minl = lane & seg
        if mode == "up":
            j = lane - bval
            ok = j >= maxl
        elif mode == "down":
            j = lane + bval
            ok = j <= maxl
        elif mode == "bfly":
            j = lane ^ bval
            ok = j <= maxl
        else:
            j = minl | (bval & ~seg)
            ok = j <= maxl
        j = np.where(ok, j, lane)
        src = base + j
        first = base if S.nblk == 1 else S.warps.first_local[t]  # lane 0's number within the block
        src = np.where(first + j < S.tpb, src, t)
        mine = np.broadcast_to(np.asarray(a(S, idx)), t.shape)
        if slot is not None and cx.prog.slot_types[slot] == T:
            allv = S.R[slot].copy()
            allv[t] = mine  # the same value for lanes of the group; others keep what they hold
            val = allv[src]
        else:
            pos = {int(x): i for i, x in enumerate(t)}
            val = np.array([mine[pos.get(int(s), i)] for i, s in enumerate(src)], T)
        d(S, idx, val)
        if p is not None:
            p(S, idx, ok)

    return run


def decode_vote(ins, cx):
    mode = next(x for x in ins.parts if x in ("all", "any", "uni", "ballot"))
    d = cx.dst(ins.operands[0], U32 if mode == "ballot" else PRED)
    a = cx.src(ins.operands[1], PRED)
    mk = cx.src(ins.operands[2], U32) if len(ins.operands) > 2 else (lambda S, idx: np.uint32(0xFFFFFFFF))
    loc = cx.prog.loc_id(cx.fn, ins)

    def run(S, idx):
        t, lane, _ = _lanes(S, idx)
        part = check(S, idx, mk(S, idx), loc, "vote.sync")
        v = np.broadcast_to(np.asarray(a(S, idx)), t.shape)
        warp, nw = _warp_ids(S, t)
        bal = np.zeros(nw, np.uint64)
        np.bitwise_or.at(bal, warp[v], np.uint64(1) << lane[v].astype(np.uint64))
        ballot = bal[warp].astype(np.uint32) & part
        if mode == "ballot":
            d(S, idx, ballot)
        elif mode == "any":
            d(S, idx, ballot != 0)
        elif mode == "all":
            d(S, idx, ballot == part)
        else:
            d(S, idx, (ballot == 0) | (ballot == part))

    return run


def decode_match(ins, cx):
    mode = "all" if "all" in ins.parts else "any"
    T = DTYPES[ins.parts[-1]]
    dst = ins.operands[0]
    dd, dp = dst.items if isinstance(dst, Vec) else (dst, None)
    d = cx.dst(dd, U32)
    p = cx.dst(dp, PRED) if dp is not None else None
    a, mk = cx.src(ins.operands[1], T), cx.src(ins.operands[2], U32)
    loc = cx.prog.loc_id(cx.fn, ins)

    def run(S, idx):
        t, lane, _ = _lanes(S, idx)
        part = check(S, idx, mk(S, idx), loc, "match.sync")
        v = np.broadcast_to(np.asarray(a(S, idx)), t.shape)
        out = np.zeros(len(t), np.uint32)
        allsame = np.zeros(len(t), bool)
        warp = _warp_ids(S, t)[0]
        for w in np.unique(warp):
            sel = np.flatnonzero(warp == w)
            same = v[sel][:, None] == v[sel][None, :]
            bits = np.uint64(1) << lane[sel].astype(np.uint64)
            m = (same * bits[None, :]).sum(1).astype(np.uint32) & part[sel]
            if mode == "any":
                out[sel] = m
            else:
                ok = m == part[sel]
                out[sel] = np.where(ok, part[sel], 0)
                allsame[sel] = ok
        d(S, idx, out)
        if p is not None:
            p(S, idx, allsame)

    return run


def decode_redux(ins, cx):
    opname = next(x for x in ins.parts if x in ("add", "min", "max", "and", "or", "xor"))
    T = DTYPES[ins.parts[-1]]
    if T.kind == "f":
        raise cx.refuse(ins)
    d, a, mk = cx.dst(ins.operands[0], T), cx.src(ins.operands[1], T), cx.src(ins.operands[2], U32)
    loc = cx.prog.loc_id(cx.fn, ins)
    f = {
        "add": np.add,
        "min": np.minimum,
        "max": np.maximum,
        "and": np.bitwise_and,
        "or": np.bitwise_or,
        "xor": np.bitwise_xor,
    }[opname]

    def run(S, idx):
        t, lane, _ = _lanes(S, idx)
        part = check(S, idx, mk(S, idx), loc, "redux.sync")
        v = np.broadcast_to(np.asarray(a(S, idx)), t.shape)
        out = np.zeros(len(t), T)
        warp = _warp_ids(S, t)[0]
        for w in np.unique(warp):
            sel = np.flatnonzero(warp == w)
            inm = ((part[sel] >> lane[sel].astype(np.uint32)) & 1).astype(bool)
            out[sel] = f.reduce(v[sel][inm]) if inm.any() else 0
        d(S, idx, out)

    return run


def decode_activemask(ins, cx):
    d = cx.dst(ins.operands[0], U32)

    def run(S, idx):
        t, lane, _ = _lanes(S, idx)
        warp, nw = _warp_ids(S, t)
        present = np.zeros(nw, np.uint64)
        np.bitwise_or.at(present, warp, np.uint64(1) << lane.astype(np.uint64))
        d(S, idx, present[warp].astype(np.uint32))

    return run


def decode_warp_bar(ins, cx):
    cx.prog.has_barrier = True  # it flushes the log of its block: blocks run one at a time (grid.py)
    mk = cx.src(ins.operands[0], U32)
    loc = cx.prog.loc_id(cx.fn, ins)

    def run(S, idx):
        check(S, idx, mk(S, idx), loc, "__syncwarp")
        S.flush()  # the log is kept in thread order between barriers: what came before stays before
        S.epoch[S.tids(idx)] += WARP_EPOCH  # a barrier and a fence for these lanes: races.py reads it

    return run
