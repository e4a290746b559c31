"""Running the threads of a traced launch, and `trace()`, the public entry point.

Every simulated thread runs to completion or to its next `syncthreads()` in a fixed order
(block by block, thread 0, 1, 2, ...). Threads are greenlets, so a barrier is a switch back
to the block scheduler, and a fixed order makes every verdict reproducible. Kernels that
never mention syncthreads skip greenlets and run threads as plain calls. Blocks whose threads
all take one path through the kernel run once as NumPy lanes instead (helpers.tracer.vector),
leaving the log this order would; where that cannot be shown, they run thread by thread.
"""

import collections
import inspect
import linecache
import numbers

import numpy as np

from .. import _numba
from .. import compile_check as _compile_check
from ..accesses import BLOCK_EPOCH, GRID_SHIFT, WARP_EPOCH, unlinear
from ..errors import CourseError, KernelError, LearnerError, shown
from ..limits import RETURN_VALUE, launch_dims, launch_limits
from .arguments import bind as bind_arguments
from .arguments import signature_refusal
from .arrays import TracedArray
from .fakecuda import FakeCuda, Word32
from .instrument import Instrumenter
from .lanes import first
from .launch import split as split_launch
from .records import Dim3, Recorder, access_limit
from .result import Trace
from .spin import SpinCheck
from .vector import Vectorizer
from .vector import eligible as vector_eligible
from .watchdog import armed, learner_frame, line_text, touch, watchdog


class Runner:
    def __init__(self, fn, args, griddim, blockdim, rec, fake, instr, budget=None):
        self.fn, self.args, self.budget = fn, args, budget
        self.griddim, self.blockdim = griddim, blockdim
        self.rec, self.fake, self.instr = rec, fake, instr
        self.tpb = blockdim[0] * blockdim[1] * blockdim[2]
        self.tids = [Dim3(*unlinear(t, blockdim)) for t in range(self.tpb)]

    def run(self):
        with (
            watchdog(self.budget, self._describe_running, self._still_running),
            np.errstate(all="ignore"),  # a GPU does not warn
        ):
            # progress is only a watchdog's business (this trace's, or a check's around it): none armed, no cost
            self.progress = touch if armed() else _nothing
            self._run()

    def _describe_running(self, frame, seconds, advancing=False):
        """The watchdog's sentence: which thread of which block was on which line, and whether that
        line's loop was moving on (too much work per thread for the tracer) or spinning in place."""
        f = learner_frame(frame, self.instr.codes)
        if f is None:
            return None
        thread = _coord(self.fake.threadIdx, self.blockdim)
        block = _coord(self.fake.blockIdx, self.griddim)
        ran = f"thread {thread} of block {block} has run {line_text(f)} for {seconds:.0f} s"
        if advancing:
            return (
                f"{ran} and its variables keep changing: more work per thread than the CPU tracer can run at "
                "this size (or a loop that never reaches its exit): trace a smaller problem, with fewer "
                "iterations per thread, or allow it longer with trace(..., watchdog=120)."
            )
        return f"{ran}: is a loop missing its exit?"

    def _still_running(self, frame, seconds):
        """Said once when a trace outlasts its budget while its threads keep finishing: where it is."""
        nblocks = self.griddim[0] * self.griddim[1] * self.griddim[2]
        b = self.fake.blockIdx
        done = first(b.x) + self.griddim[0] * (first(b.y) + self.griddim[1] * first(b.z))
        where = f" (at block {done + 1} of {nblocks})" if nblocks > 1 and not self.instr.uses_grid_sync else ""
        return (
            f"The CPU tracer has run {self.fn.__name__} for {seconds:.0f} s{where} and carries on: each of its "
            f"{nblocks * self.tpb:,} threads runs as Python here, so a smaller problem traces much sooner."
        )

    def _run(self):
        nblocks = self.griddim[0] * self.griddim[1] * self.griddim[2]
        self.fake._greenlets = self.instr.uses_barrier
        if self.instr.uses_grid_sync:  # a grid-wide barrier: every block's threads run side by side
            self._greenlets(range(nblocks))
        else:
            # blocks whose threads all take one path run as NumPy lanes, the rest thread by thread
            vector = Vectorizer(self) if vector_eligible(self.instr) else None
            b = 0
            while b < nblocks:
                ran = vector.run(b) if vector is not None and vector.on else 0
                if ran:
                    b += ran
                    continue
                self.fake.blockIdx = Dim3(*unlinear(b, self.griddim))
                self.rec.block_shared = {}
                (self._greenlets if self.instr.uses_barrier else self._block_plain)((b,))
                b += 1
        self.rec.flush()

    def _block_plain(self, blocks):
        fn, args, fake, rec, tids = self.fn, self.args, self.fake, self.rec, self.tids
        progress, buf = self.progress, rec.buf
        # rec.begin(base + t, 0) inlined: a method call per thread is a tenth of a SAXPY thread's time
        pos, gtid, epoch = rec.seg_pos.append, rec.seg_gtid.append, rec.seg_epoch.append
        (b,) = blocks
        base = b * self.tpb
        for t in range(self.tpb):
            fake.threadIdx = tids[t]
            pos(rec.total + len(buf))
            gtid(base + t)
            epoch(0)
            progress()
            try:
                if fn(*args) is not None:
                    raise LearnerError(RETURN_VALUE)
            except CourseError:
                raise
            except Exception as exc:
                raise self._kernel_error(exc, b, t) from None

    def _greenlets(self, blocks):
        """Run the threads of `blocks` as greenlets, each until it finishes or waits at a barrier
        (warp call, syncthreads or grid sync); then release the finest barrier everyone waits at."""
        from greenlet import getcurrent, greenlet

        fn, args, fake, rec, tids, tpb = self.fn, self.args, self.fake, self.rec, self.tids, self.tpb
        rec.sched = getcurrent()

        def body(*_):
            if fn(*args) is not None:
                raise LearnerError(RETURN_VALUE)

        gtids = [b * tpb + t for b in blocks for t in range(tpb)]
        threads = {g: greenlet(body) for g in gtids}
        shared = {b: {} for b in blocks}
        bidx = {b: Dim3(*unlinear(b, self.griddim)) for b in blocks}
        self.epoch = dict.fromkeys(gtids, 0)
        self.resume = dict.fromkeys(gtids)
        self.finished = set()
        waiting = {}  # gtid -> Arrival
        runnable = gtids
        spin = SpinCheck(self.fn.__name__, self.instr.codes)
        while True:
            for g in runnable:
                b, t = divmod(g, tpb)
                fake.threadIdx, fake.blockIdx = tids[t], bidx[b]
                rec.block_shared = shared[b]
                rec.begin(g, self.epoch[g])
                self.progress()
                try:
                    got = threads[g].switch(self.resume[g])
                except CourseError:
                    raise
                except Exception as exc:
                    raise self._kernel_error(exc, b, t) from None
                if threads[g].dead:
                    self.finished.add(g)
                else:
                    waiting[g] = got
            if not waiting:
                break
            spin.round(threads, waiting, self.finished, shared, args)
            runnable = self._release(waiting)
            for g in runnable:
                del waiting[g]

    def _release(self, waiting):
        """The threads to run next: warp calls first, then block barriers, then the grid barrier."""
        tpb = self.tpb
        warp = {}
        for g, (kind, site, payload) in waiting.items():
            if kind == "warp":
                b, t = divmod(g, tpb)
                warp.setdefault((b, t // 32, site), {})[t % 32] = payload
        if warp:
            released = []
            for (b, w, site), lanes in warp.items():
                base = b * tpb + w * 32
                results = self._warp_call(b, w, site, lanes, waiting)
                for lane, value in results.items():
                    self.resume[base + lane] = value
                    released.append(base + lane)
                    if lanes[lane].op == "syncwarp":  # orders the memory of the lanes that met here
                        self.epoch[base + lane] += WARP_EPOCH
            return sorted(released)
        by_block = {}
        for g, (kind, site, payload) in waiting.items():
            if kind == "block":
                b, t = divmod(g, tpb)
                by_block.setdefault(b, {})[t] = (site, payload)
        if by_block:
            released = []
            for b, local in by_block.items():
                released += self._barrier(b, local)
            return sorted(released)
        return self._grid_barrier(waiting)

    def _barrier(self, b, waiting):
        """Release every waiting thread; a barrier some threads of the block missed is a verdict."""
        base = b * self.tpb
        epoch = self.epoch
        by_site = {}
        for t, (site, _) in waiting.items():
            by_site.setdefault(site, []).append(t)
        if len(waiting) != self.tpb or len(by_site) > 1:
            main_site = max(by_site, key=lambda s: len(by_site[s]))
            self.rec.divergent.append(
                {
                    "block": b,
                    "line": main_site[1],
                    "code": main_site[0],
                    "arrived": by_site[main_site],
                    "elsewhere": {s[1]: ts for s, ts in by_site.items() if s != main_site},
                    "finished": [t for t in range(self.tpb) if t not in waiting],
                    "epoch": epoch[base + by_site[main_site][0]] & BLOCK_EPOCH,
                }
            )
        released = []
        for site, ts in by_site.items():
            count = sum(waiting[t][1] for t in ts)
            for t in ts:
                epoch[base + t] += 1
                self.resume[base + t] = (count, len(ts))
                released.append(base + t)
        return released

    def _grid_barrier(self, waiting):
        """cuda.cg.this_grid().sync(): everyone left is waiting here; threads that finished missed it."""
        sites = {w.site for w in waiting.values()}
        site = min(sites, key=lambda s: s[1])
        if self.finished or len(sites) > 1:
            self.rec.grid_divergent.append(
                {
                    "line": site[1],
                    "code": site[0],
                    "arrived": sorted(g for g, w in waiting.items() if w.site == site),
                    "missing": sorted(self.finished | {g for g, w in waiting.items() if w.site != site}),
                    "why": "had already finished" if self.finished else "were waiting at another grid.sync()",
                }
            )
        for g in waiting:
            self.epoch[g] = ((self.epoch[g] >> GRID_SHIFT) + 1) << GRID_SHIFT  # keeps syncwarps, clears syncthreads
            self.resume[g] = None
        return sorted(waiting)

    def _warp_call(self, b, w, site, lanes, waiting):
        """Compute every lane's result of one warp call; misuse (a mask naming a lane that is not
        here, a shuffle from a finished lane) is logged and the GPU's 'undefined' is its own value."""
        tpb = self.tpb
        base = b * tpb + w * 32
        exists = min(32, tpb - w * 32)
        here = set(lanes)
        code, line = site
        results = {}

        def absent_reason(lane):
            g = base + lane
            if lane >= exists:
                return f"lane {lane} does not exist (the block has {tpb} threads)"
            if g in self.finished:
                return f"lane {lane} had already finished (returned early)"
            if g in waiting and waiting[g].kind != "warp":
                return f"lane {lane} was waiting at a barrier on line {waiting[g].site[1]}"
            return f"lane {lane} was at another warp call (diverged)"

        def misuse(lane, op, mask, why):
            self.rec.warp_misuse.append(
                {"block": b, "warp": w, "lane": lane, "what": op, "line": line, "code": code, "mask": mask, "why": why}
            )

        for lane, (op, mask, value, arg) in lanes.items():
            mask = int(mask) & 0xFFFFFFFF
            if op == "activemask":
                results[lane] = Word32(sum(1 << ln for ln in here))  # Numba types it uint32
                continue
            named = {ln for ln in range(32) if mask >> ln & 1}
            if lane not in named:
                misuse(lane, op, mask, f"the mask leaves out lane {lane} itself")
            absent = sorted(named - here)
            if absent:
                misuse(lane, op, mask, absent_reason(absent[0]) + _others(len(absent) - 1))
            group = sorted(named & here) or [lane]
            if op == "syncwarp":
                results[lane] = None
            elif op.startswith("shfl"):
                src = _shfl_source(op, lane, int(arg))
                if src is None:
                    results[lane] = value
                elif src in here:
                    results[lane] = _same_type(lanes[src].value, value)
                else:
                    misuse(lane, op, mask, f"it reads lane {src}, and {absent_reason(src)}")
                    results[lane] = value
            elif op == "ballot_sync":
                results[lane] = _int32(sum(1 << ln for ln in group if lanes[ln].value))
            elif op == "all_sync":
                results[lane] = all(lanes[ln].value for ln in group)
            elif op == "any_sync":
                results[lane] = any(lanes[ln].value for ln in group)
            elif op == "eq_sync":
                results[lane] = len({bool(lanes[ln].value) for ln in group}) == 1
            elif op == "match_any_sync":
                results[lane] = _int32(sum(1 << ln for ln in group if lanes[ln].value == value))
            elif op == "match_all_sync":
                same = all(lanes[ln].value == value for ln in group)
                results[lane] = (_int32(sum(1 << ln for ln in group) if same else 0), same)
            else:
                raise AssertionError(op)
        return results

    def _kernel_error(self, exc, b, t):
        frame_line = None
        tb = exc.__traceback__
        while tb is not None:
            if tb.tb_frame.f_code in self.instr.codes:
                frame_line = (tb.tb_frame.f_code, tb.tb_lineno)
            tb = tb.tb_next
        where = ""
        if frame_line is not None:
            code, line = frame_line
            src = linecache.getline(code.co_filename, line).strip()
            where = f", at line {line} (in {code.co_name}): `{src}`"
        what = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
        return KernelError(
            f"Your kernel raised {what} in block {unlinear(b, self.griddim)}, "
            f"thread {unlinear(t, self.blockdim)}{where}. Fix that line and trace again."
        )


def _nothing():
    pass


def _int32(bits):
    """A lane mask as Numba types ballot_sync and the match calls: an int32, so lane 31 makes it
    negative where it is read as a number, as on a GPU; storing it into a uint32 array gives the
    mask itself (0xFFFFFFF0), not the OverflowError a negative Python int would raise."""
    return Word32(bits - (1 << 32) if bits >= 1 << 31 else bits)


def _others(n):
    return f" (and {n} more lane{'s' if n > 1 else ''})" if n else ""


def _shfl_source(op, lane, arg):
    """The lane a shuffle reads, or None where the GPU hands back the caller's own value (width 32)."""
    if op == "shfl_sync":
        return arg & 31
    if op == "shfl_up_sync":
        src = lane - arg
        return src if src >= 0 else None
    if op == "shfl_down_sync":
        src = lane + arg
        return src if src < 32 else None
    src = lane ^ arg  # shfl_xor_sync
    return src if src < 32 else None


def _same_type(got, like):
    """A shuffle returns the caller's type (a float32 stays float32), as the GPU's does."""
    if isinstance(like, np.generic):
        return like.dtype.type(got)
    return type(like)(got) if isinstance(like, (int, float, bool)) else got


def _coord(d, dims):
    """A thread or block index as the learner wrote the launch: 5 for 1-D, (5, 2) for 2-D..."""
    ndim = 3 if dims[2] > 1 else 2 if dims[1] > 1 else 1
    xyz = tuple(first(v) for v in d)  # threads running as lanes: the first of them
    return xyz[0] if ndim == 1 else xyz[:ndim]


# ----------------------------------------------------------------------------------------------
# Public entry point
# ----------------------------------------------------------------------------------------------


def trace(kernel, *args, outputs=(), sharedmem=None, max_accesses=None, watchdog=None, compile_check=False):
    """Run `kernel` on the CPU, one thread at a time, and record every memory access.

    `trace(kernel, griddim, blockdim, *args)` or `trace(kernel[griddim, blockdim], *args)`.
    NumPy arrays are updated in place, as a launch would; device arrays (anything with
    `copy_to_host`) are copied in and, where possible, copied back.  `outputs` names the
    arrays every element of which the kernel should write (parameter names or positions).
    Returns a `Trace`; look at `.verdicts`, `.summary()` and `.show()`.  `watchdog` is the time
    budget in seconds (default $COURSE_WATCHDOG_S or 20; 0 turns it off).
    `compile_check=True` also asks the real GPU compiler (CPU mode only; a GPU launch compiles
    anyway) and puts its refusal in `.compiled`, `.ok` and `.summary()`. Off by default: it costs
    up to a second per new kernel, and exercise checks already do it themselves.
    """
    func, griddim, blockdim, dyn, kargs = split_launch(kernel, args)
    griddim, blockdim = launch_dims(griddim, "griddim"), launch_dims(blockdim, "blockdim")
    if sharedmem is not None:
        if isinstance(sharedmem, bool) or not isinstance(sharedmem, numbers.Integral) or sharedmem < 0:
            raise LearnerError(f"sharedmem is a number of bytes such as sharedmem=4096, not {shown(sharedmem)}.")
        dyn = int(sharedmem)
    launch_limits(griddim, blockdim, dyn)
    params = list(inspect.signature(func).parameters)
    if len(kargs) != len(params):
        raise LearnerError(
            f"{func.__name__} takes {len(params)} argument(s) ({', '.join(params)}) but {len(kargs)} were given."
        )

    refusal = signature_refusal(kernel, params, kargs)
    if refusal:
        raise LearnerError(refusal)
    nthreads = int(np.prod(griddim)) * int(np.prod(blockdim))
    rec = Recorder(access_limit(nthreads) if max_accesses is None else max_accesses, blockdim)
    traced_args, write_back, covers = bind_arguments(params, kargs, rec)

    compiling = None
    if compile_check and _numba.simulator_active() is not False:
        compiling = _compile_check.start(kernel, kargs)  # compiles in another process while we trace
    fake = FakeCuda(rec, griddim, blockdim, dyn)
    instr = Instrumenter(fake)
    fn = instr.function(func)
    rec.kernel_code = fn.__code__
    Runner(fn, traced_args, griddim, blockdim, rec, fake, instr, watchdog).run()
    for device_array, host in write_back:
        device_array.copy_to_device(host)

    out_ids, elements = [], collections.defaultdict(list)
    for o in outputs if isinstance(outputs, (tuple, list)) else (outputs,):
        if isinstance(o, bool) or not isinstance(o, (str, numbers.Integral)):
            raise LearnerError(
                f"outputs names the output arrays by parameter name or position, such as outputs=({params[-1]!r},), "
                f"not {shown(o)}."
            )
        pos = o if isinstance(o, numbers.Integral) else (params.index(o) if o in params else None)
        if pos is None or not 0 <= pos < len(params) or not isinstance(traced_args[pos], TracedArray):
            raise LearnerError(
                f"outputs: {shown(o)} is not an array parameter of {func.__name__} (parameters: {', '.join(params)})."
            )
        if traced_args[pos]._aid not in out_ids:  # two names of one memory: one output
            out_ids.append(traced_args[pos]._aid)
        elements[traced_args[pos]._aid].append(covers.get(pos))  # None: every element of its array
    t = Trace(func, griddim, blockdim, rec, out_ids)
    # an output that is a view of part of another argument's memory: only its own elements must be written
    t.output_elements = {
        aid: np.unique(np.concatenate(parts))
        for aid, parts in elements.items()
        if all(part is not None for part in parts)
    }
    t.compiled = compiling.result() if compiling is not None else None
    return t
