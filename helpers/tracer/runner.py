"""Running the threads of a traced launch, and `trace()`, the public entry point.

Every simulated thread runs to completion or to its next `syncthreads()` in a fixed order
(block by block, thread 0, 1, 2, ...). Threads are greenlets, so a barrier is a switch back
to the block scheduler, and a fixed order makes every verdict reproducible. Kernels that
never mention syncthreads skip greenlets and run threads as plain calls.
"""

import inspect
import linecache
import numbers
import types as pytypes

import numpy as np

from .. import _numba
from .. import compile_check as _compile_check
from ..errors import CourseError, KernelError, LearnerError
from ..limits import RETURN_VALUE, block_problem, grid_problem, trace_size_problem
from .arrays import TracedArray
from .fakecuda import FakeCuda
from .instrument import Instrumenter
from .records import MAX_ACCESSES, ArrayInfo, Dim3, Recorder, unlinear
from .result import Trace
from .watchdog import learner_frame, line_text, watchdog


class Runner:
    def __init__(self, fn, args, griddim, blockdim, rec, fake, instr, budget=None):
        self.fn, self.args, self.budget = fn, args, budget
        self.griddim, self.blockdim = griddim, blockdim
        self.rec, self.fake, self.instr = rec, fake, instr
        self.tpb = blockdim[0] * blockdim[1] * blockdim[2]
        self.tids = [Dim3(*unlinear(t, blockdim)) for t in range(self.tpb)]

    def run(self):
        with watchdog(self.budget, self._describe_running):
            self._run()

    def _describe_running(self, frame, seconds):
        """The watchdog's sentence: which thread of which block was on which line."""
        f = learner_frame(frame, self.instr.codes)
        if f is None:
            return None
        thread = _coord(self.fake.threadIdx, self.blockdim)
        block = _coord(self.fake.blockIdx, self.griddim)
        return (
            f"thread {thread} of block {block} has run {line_text(f)} for {seconds:.0f} s: is a loop missing its exit?"
        )

    def _run(self):
        nblocks = self.griddim[0] * self.griddim[1] * self.griddim[2]
        run_block = self._block_greenlets if self.instr.uses_barrier else self._block_plain
        self.fake._greenlets = self.instr.uses_barrier
        for b in range(nblocks):
            self.fake.blockIdx = Dim3(*unlinear(b, self.griddim))
            self.rec.block_shared = {}
            run_block(b)
        self.rec.flush()

    def _block_plain(self, b):
        fn, args, fake, rec, tids = self.fn, self.args, self.fake, self.rec, self.tids
        base = b * self.tpb
        for t in range(self.tpb):
            fake.threadIdx = tids[t]
            rec.cur = (base + t, 0)
            try:
                if fn(*args) is not None:
                    raise LearnerError(RETURN_VALUE)
            except CourseError:
                raise
            except Exception as exc:
                raise self._kernel_error(exc, b, t) from None

    def _block_greenlets(self, b):
        from greenlet import getcurrent, greenlet

        fn, args, fake, rec, tids, tpb = self.fn, self.args, self.fake, self.rec, self.tids, self.tpb
        base = b * tpb
        rec.sched = getcurrent()

        def body(*_):
            if fn(*args) is not None:
                raise LearnerError(RETURN_VALUE)

        threads = [greenlet(body) for _ in range(tpb)]
        epoch = [0] * tpb
        resume = [None] * tpb
        live = list(range(tpb))
        while live:
            waiting = {}  # thread -> (barrier site, value)
            for t in live:
                fake.threadIdx = tids[t]
                rec.cur = (base + t, epoch[t])
                try:
                    got = threads[t].switch(resume[t])
                except CourseError:
                    raise
                except Exception as exc:
                    raise self._kernel_error(exc, b, t) from None
                if not threads[t].dead:
                    waiting[t] = got
            if not waiting:
                break
            self._barrier(b, waiting, epoch, resume)
            live = sorted(waiting)

    def _barrier(self, b, waiting, epoch, resume):
        """Release every waiting thread; a barrier some threads of the block missed is a verdict."""
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
                    "epoch": epoch[by_site[main_site][0]],
                }
            )
        for site, ts in by_site.items():
            count = sum(waiting[t][1] for t in ts)
            for t in ts:
                epoch[t] += 1
                resume[t] = (count, len(ts))

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


def _coord(d, dims):
    """A thread or block index as the learner wrote the launch: 5 for 1-D, (5, 2) for 2-D..."""
    ndim = 3 if dims[2] > 1 else 2 if dims[1] > 1 else 1
    return d.x if ndim == 1 else tuple(d)[:ndim]


def launch_limits(griddim, blockdim):
    """A LearnerError for a launch a GPU refuses, or one too big to trace; nothing runs before this."""
    problem = block_problem(blockdim) or grid_problem(griddim)
    if problem is None:
        nthreads = griddim[0] * griddim[1] * griddim[2] * blockdim[0] * blockdim[1] * blockdim[2]
        problem = trace_size_problem(nthreads)
    if problem:
        raise LearnerError(problem[0].upper() + problem[1:])


# ----------------------------------------------------------------------------------------------
# Public entry point
# ----------------------------------------------------------------------------------------------


def _dims(value, what):
    if isinstance(value, numbers.Integral):
        value = (int(value),)
    try:
        dims = tuple(int(v) for v in value)
    except TypeError:
        raise LearnerError(f"{what} must be an int or a tuple of 1 to 3 ints, not {value!r}.") from None
    if not 1 <= len(dims) <= 3 or any(d < 1 for d in dims):
        raise LearnerError(f"{what} must be 1 to 3 positive ints, not {value!r}.")
    return dims + (1,) * (3 - len(dims))


def _split_launch(kernel, args):
    """(python function, griddim, blockdim, sharedmem, kernel args) from either call style."""
    config = _numba.launch_configuration(kernel)
    func = _numba.python_function(kernel)
    if func is None:
        if isinstance(kernel, pytypes.FunctionType):
            func = kernel
        else:
            raise LearnerError(f"trace() needs a @cuda.jit kernel, not {type(kernel).__name__}.")
    if _numba.is_device_function(kernel):
        raise LearnerError(
            f"{func.__name__} is a device function (device=True); trace the kernel that calls it instead."
        )
    nparams = len(inspect.signature(func).parameters)
    if config is not None and (len(args) == nparams or type(kernel).__name__ != "FakeCUDAKernel"):
        _, griddim, blockdim, sharedmem = config
        return func, griddim, blockdim, sharedmem, args
    if len(args) < 2:
        raise LearnerError(
            "Give the launch: trace(kernel, griddim, blockdim, *args) or trace(kernel[griddim, blockdim], *args)."
        )
    return func, args[0], args[1], 0, args[2:]


def trace(kernel, *args, outputs=(), sharedmem=None, max_accesses=MAX_ACCESSES, watchdog=None, compile_check=False):
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
    func, griddim, blockdim, dyn, kargs = _split_launch(kernel, args)
    griddim, blockdim = _dims(griddim, "griddim"), _dims(blockdim, "blockdim")
    if sharedmem is not None:
        dyn = int(sharedmem)
    launch_limits(griddim, blockdim)
    params = list(inspect.signature(func).parameters)
    if len(kargs) != len(params):
        raise LearnerError(
            f"{func.__name__} takes {len(params)} argument(s) ({', '.join(params)}) but {len(kargs)} were given."
        )

    rec = Recorder(max_accesses)
    traced_args, write_back = [], []
    seen = {}
    for pos, (name, value) in enumerate(zip(params, kargs)):
        host = value
        if not isinstance(value, np.ndarray) and hasattr(value, "copy_to_host"):
            host = value.copy_to_host()
            if hasattr(value, "copy_to_device"):
                write_back.append((value, host))
        if isinstance(host, np.ndarray) and host.ndim > 0:
            if id(host) in seen:  # the same array passed twice: one array, both names
                traced_args.append(seen[id(host)])
                rec.arrays[seen[id(host)]._aid].name += f"/{name}"
                continue
            aid = rec.add_array(ArrayInfo(name, "global", host.shape, host.dtype, host.strides, pos))
            seen[id(host)] = proxy = TracedArray(host, aid, rec)
            traced_args.append(proxy)
        else:
            traced_args.append(value)

    compiling = None
    if compile_check and _numba.simulator_active() is not False:
        compiling = _compile_check.start(kernel, kargs)  # compiles in another process while we trace
    fake = FakeCuda(rec, griddim, blockdim, dyn)
    instr = Instrumenter(fake)
    fn = instr.function(func)
    Runner(fn, traced_args, griddim, blockdim, rec, fake, instr, watchdog).run()
    for device_array, host in write_back:
        device_array.copy_to_device(host)

    out_ids = []
    for o in outputs if isinstance(outputs, (tuple, list)) else (outputs,):
        pos = o if isinstance(o, numbers.Integral) else (params.index(o) if o in params else None)
        if pos is None or not 0 <= pos < len(params) or not isinstance(traced_args[pos], TracedArray):
            raise LearnerError(
                f"outputs: {o!r} is not an array parameter of {func.__name__} (parameters: {', '.join(params)})."
            )
        out_ids.append(traced_args[pos]._aid)
    t = Trace(func, griddim, blockdim, rec, out_ids)
    t.compiled = compiling.result() if compiling is not None else None
    return t
