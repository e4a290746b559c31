"""Run one block of a decoded kernel, or several consecutive blocks together: SIMT groups,
divergence, barriers, calls, step budget.

Why SIMT: executing one instruction for every thread that is at the same place as one NumPy
operation is what makes a pure-Python interpreter fast enough, and it is how a warp runs.
Scheduling is deterministic: the threads at the lowest program counter run together until
they branch apart, wait at a barrier or exit (the "min-PC" rule, which reconverges them
after an `if` and after a loop). When every live thread waits at a barrier they are
released (barrier epoch + 1); a barrier that not every thread of the block reached at the
same place is recorded in the dict shape of the Numba tracer's `Runner._barrier`.

Several blocks at once (grid.py decides when): the min-PC rule restricted to one block's
threads picks the same groups in the same order as running that block alone, so each block
does what it does alone; only the interleaving between blocks changes. Thread t of this
object is thread t % tpb of block b0 + t // tpb.

The access log is kept per barrier interval and stably sorted by thread before it is
stored, which is the order the tracer (one thread after another) produces.
"""

from __future__ import annotations

from functools import cached_property

import numpy as np

from ..accesses import BadAccess, unlinear
from ..errors import KernelError
from .decode import uniform
from .log import AccessLog
from .memory import unravel

RUN, WAIT, DONE = 0, 1, 2
MAX_DEPTH = 16


def width(idx):
    """How many threads group idx holds: an array of thread numbers, or a slice of consecutive ones."""
    return idx.stop - idx.start if isinstance(idx, slice) else len(idx)


class Warps:
    """Per-thread lane, warp number and first lane of each thread's warp (warps never cross blocks)."""

    def __init__(self, n, tpb):
        t = np.arange(n)
        local = t % tpb
        self.lane = local % 32
        self.wid = (t // tpb) * ((tpb + 31) // 32) + local // 32
        self.first = t - self.lane  # this object's thread number of lane 0
        self.first_local = local - self.lane  # the same within the block
        self.count = (n // tpb) * ((tpb + 31) // 32)


class Block:
    """The state of the running block(s): registers, memories, program counters, the log."""

    def __init__(self, prog, b, nblk=1):
        self.prog, self.b, self.nblk = prog, b, nblk
        self.tpb = prog.tpb
        n = self.n = prog.tpb * nblk
        self.all = np.arange(n)
        self.R = [uniform(0, dt, n) for dt in prog.slot_types]  # registers get memory when first written
        for slot, values in prog.special_values(b, nblk).items():
            self.R[slot] = values
        self.pc = np.full(n, prog.start, np.int64)
        self.state = np.zeros(n, np.int8)
        self.epoch = np.zeros(n, np.int64)
        if prog.has_barrier:
            self.bar_site = np.zeros(n, np.int64)
            self.bar_val = np.zeros(n, bool)
        self.tsteps = np.zeros(n, np.int64)
        if prog.calls:  # (n, 16) call stacks: 384 MB for a million threads, so only where a call needs them
            self.depth = np.zeros(n, np.int64)
            self.ret_pc = np.zeros((n, MAX_DEPTH), np.int64)
            self.ret_site = np.zeros((n, MAX_DEPTH), np.int64)
            self.ret_fn = np.full((n, MAX_DEPTH), -1, np.int64)
        self.shared = prog.new_shared()
        self.local = prog.new_local(n)
        self.fparams = {}
        self.log = AccessLog()
        self.printed = []
        self.quiet = False
        self.clock = 0
        self.gbase = b * prog.tpb
        self.kparam = prog.kparam
        self.atomics = {}  # several blocks: per array, the order atomics reached each element (atomics.py)
        self.atomic_disorder = False

    @cached_property
    def warps(self):
        return Warps(self.n, self.tpb)

    def block_of(self, t):
        """The block (linear id) of this object's thread t."""
        return self.b + t // self.tpb

    def width(self, idx):
        return self.n if idx is None else width(idx)

    def fparam_buf(self, key, size):
        buf = self.fparams.get(key)
        if buf is None:
            buf = self.fparams[key] = np.zeros((self.n, max(size, 8)), np.uint8)
        return buf

    # -- the access log ------------------------------------------------------------------------
    def record(self, win, off, w, tids, kind, loc, elems=None):
        if not self.quiet:  # without barriers every epoch stays 0: no per-thread copy
            self.log.record(win, off, w, tids, self.epoch[tids] if self.prog.has_barrier else 0, kind, loc, elems)

    def flush(self):
        if not self.prog.keep_log:  # a launch that only wants its results (launch.py): grid.py has read the runs
            self.log.runs.clear()
            return
        t = self.log.take(self.gbase, self.n)
        if t is not None:
            self.prog.chunks.append(t)
            self.prog.naccess += t.shape[1]

    def out_of_bounds(self, win, space, off, addrs, tids, kind, loc):
        if self.quiet:
            return
        prog = self.prog
        for i, t in enumerate(tids):
            if win is None:
                aid, index = -1, (int(addrs[i]),)
            else:
                aid = prog.array_for(win)
                index = unravel(int(off[i]) // win.itemsize, win.shape)
            if len(prog.oob) < prog.max_oob:
                where = prog.locations[loc]
                thread = (self.gbase + int(t), int(self.epoch[t]))
                prog.oob.append(BadAccess(aid, index, kind, thread, where.code, where.line))

    # -- running -----------------------------------------------------------------------------
    def run(self):
        self.execute()
        self.finish()

    def execute(self):
        """Run every thread to its end (the log is still in runs: grid.py reads them before finish())."""
        with np.errstate(all="ignore"):
            while True:
                live = self.state == RUN
                if not live.any():
                    if (self.state == WAIT).any():
                        self.release()
                        continue
                    break
                pcs = np.where(live, self.pc, np.iinfo(np.int64).max)
                p = int(pcs.min())
                grp = np.flatnonzero(pcs == p)
                rest = pcs[pcs > p]
                stop = int(rest.min()) if len(rest) else np.iinfo(np.int64).max
                if len(grp) == self.n:
                    grp = None
                elif grp[-1] - grp[0] + 1 == len(grp):  # consecutive threads: registers are read as views, not copies
                    grp = slice(int(grp[0]), int(grp[-1]) + 1)
                self.group(grp, p, stop)

    def finish(self):
        """The log, printf lines and step count go to the launch's records."""
        prog = self.prog
        self.flush()
        prog.printed.extend(text for _, text in sorted(self.printed, key=lambda x: x[0]))
        prog.steps += int(self.tsteps.sum())

    def group(self, idx, p, stop):
        """Run the threads idx from p until they split, wait, exit, or reach `stop`, the lowest
        place other threads are parked at: there they merge again (reconvergence)."""
        code, limit = self.prog.code, self.prog.max_steps
        done = int(self.tsteps.max() if idx is None else self.tsteps[idx].max())
        if done > limit:
            self.runaway(idx, p, done)
        k = 0
        while True:
            if p >= stop:
                self.pc[self.tids(idx)] = p
                break
            fn, guard, ctl = code[p]
            k += 1
            if ctl:
                q = fn(self, idx, p, guard)
                if q is None:
                    break
                if q <= p and k + done > limit:  # only a backward jump can loop for ever
                    self.runaway(idx, p, k + done)
                p = q
                continue
            if guard is None:
                fn(self, idx)
            else:
                m = guard(self, idx)
                if m.all():
                    fn(self, idx)
                elif m.any():
                    fn(self, np.flatnonzero(m) if idx is None else self.tids(idx)[m])
            p += 1
        if idx is None:
            self.tsteps += k
        else:
            self.tsteps[idx] += k

    def runaway(self, idx, p, steps):
        t = 0 if idx is None else int(self.tids(idx)[0])
        b, t = self.block_of(t), t % self.tpb
        prog = self.prog
        loc = prog.locations[prog.line_of[p]] if prog.line_of[p] is not None else None
        line = f"line {loc.line}" + (f" (`{loc.source}`)" if loc and loc.source else "") if loc else "its code"
        raise KernelError(
            f"The CPU runner stopped your kernel: thread {unlinear(t, prog.blockdim)} of block "
            f"{unlinear(b, prog.griddim)} has run {line} for {steps:,} steps: is a loop missing its exit? "
            f"If not, run a smaller problem or raise max_steps."
        )

    def tids(self, idx):
        """The thread numbers of group idx (a slice gives a view: no copy)."""
        return self.all if idx is None else self.all[idx] if isinstance(idx, slice) else idx

    def release(self):
        """Every live thread waits: check the barrier was the same for all, then let them go."""
        prog = self.prog
        waiting = np.flatnonzero(self.state == WAIT)
        sites = self.bar_site[waiting]
        by_site = {int(s): waiting[sites == s] for s in np.unique(sites)}
        expected = prog.bar_count.get(int(sites[0]))
        if len(by_site) > 1 or len(waiting) != (expected or self.n):
            main = max(by_site, key=lambda s: len(by_site[s]))
            loc = prog.locations[prog.line_of[main]]
            prog.divergent.append(
                {
                    "block": self.b,
                    "line": loc.line,
                    "code": loc.code,
                    "arrived": [int(t) for t in by_site[main]],
                    "elsewhere": {
                        prog.locations[prog.line_of[s]].line: [int(t) for t in ts]
                        for s, ts in by_site.items()
                        if s != main
                    },
                    "finished": [int(t) for t in np.flatnonzero(self.state == DONE)],
                    "epoch": int(self.epoch[by_site[main][0]]),
                }
            )
        self.flush()
        for s, ts in by_site.items():
            hook = prog.bar_hooks.get(s)
            if hook is not None:
                hook(self, ts, self.bar_val[ts])
            self.epoch[ts] += 1
        self.state[waiting] = RUN


# ----------------------------------------------------------------------------- control flow
def make_bra(target):
    def bra(S, idx, p, guard):
        if guard is None:
            return target
        m = guard(S, idx)
        if m.all():
            return target
        if not m.any():
            return p + 1
        t = S.tids(idx)
        S.pc[t[m]] = target
        S.pc[t[~m]] = p + 1
        return None

    return bra


def _split(S, idx, p, guard):
    """Threads of the group for which the guard holds; the others move on to p + 1."""
    t = S.tids(idx)
    if guard is None:
        return t
    m = guard(S, idx)
    S.pc[t[~m]] = p + 1
    S.state[t[~m]] = RUN
    return t[m]


def make_exit():
    def exit_(S, idx, p, guard):
        t = _split(S, idx, p, guard)
        S.state[t] = DONE

    return exit_


def make_ret(prog, fn_id):
    def ret(S, idx, p, guard):
        t = _split(S, idx, p, guard)
        if fn_id == 0:
            S.state[t] = DONE
            return
        S.depth[t] -= 1
        d = S.depth[t]
        for site in np.unique(S.ret_site[t, d]):
            prog.copy_returns(S, int(site), t[S.ret_site[t, d] == site])
        S.pc[t] = S.ret_pc[t, d]
        S.ret_fn[t, d] = -1
        return

    return ret


def make_bar(pred_get):
    def bar(S, idx, p, guard):
        t = _split(S, idx, p, guard)
        S.state[t] = WAIT
        S.pc[t] = p + 1
        S.bar_site[t] = p
        if pred_get is not None:
            S.bar_val[t] = np.broadcast_to(pred_get(S, None if len(t) == S.n else t), (len(t),))

    return bar


def make_call(prog, site, callee, callee_id, start):
    def call(S, idx, p, guard):
        t = _split(S, idx, p, guard)
        if len(t) == 0:
            return
        d = S.depth[t]
        if np.any(d >= MAX_DEPTH) or np.any(S.ret_fn[t, :MAX_DEPTH] == callee_id):
            from ..errors import UnsupportedByTracer

            raise UnsupportedByTracer(
                f"Your kernel calls {callee} recursively (line {prog.line_at(p)}); the CPU "
                "runner of CUDA C does not run recursion: run this kernel on a GPU to test it."
            )
        prog.copy_args(S, site, t)
        S.ret_pc[t, d] = p + 1
        S.ret_site[t, d] = site
        S.ret_fn[t, d] = callee_id
        S.depth[t] += 1
        S.pc[t] = start
        return

    return call
