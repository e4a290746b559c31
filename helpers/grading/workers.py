"""The judge's own processes for one submission: NVRTC, and the CPU tracer.

Why: what decides a grade must not come from the student's process, where a submission can
replace anything. A CUDA C answer's PTX (the grader interprets it) and the tracer's verdicts and
counts on a Numba kernel (a race, a stray read, reads per thread) therefore come from processes
the judge starts itself. Nor can that work run in the grader: the CUDA C source and the kernel
are the student's, and an ``#include`` of any file, a macro bomb, or a kernel that never ends
would run there. So each worker starts on first use, in the submission's sandbox, with a memory
cap, and never runs the student's notebook:

- ``nvrtc``: CUDA C is data to NVRTC.
- ``tracer``: the kernel is rebuilt from its vetted description (``compile_check/trust.py``,
  ``compile_check/rebuild.py``), and the judge sends it here only after the judge's own Numba
  compile server accepted that description: a kernel Numba compiles can only do what a GPU
  kernel can, so running it on the tracer here cannot reach the tracer itself. On a GPU the same
  process also launches it (with guard bands), so the outputs the judge compares are its own.

One wire-encoded request per stdin line, one reply per stdout line.
"""

from __future__ import annotations

import io
import os
import queue
import subprocess
import sys
import threading
from pathlib import Path

from ..errors import CourseError

ROOT = Path(__file__).resolve().parents[2]
BOOT = "import sys; sys.path[:0] = {paths!r}; from helpers.grading.workers import main; main({kind!r}, {seconds!r})"
GRACE = 10.0  # past a request's time: the worker's own watchdog names the kernel's line first
COMPILE_TIMEOUT = 60.0
MEMORY = 4096 << 20  # NVRTC needs a few hundred MB, the tracer as much as the child; a bomb stops here


class WorkerGone(CourseError):
    """The worker died or took too long; the message says which, in the learner's terms."""


class Worker:
    """One worker process, started on first ``request``; ``wrap(argv, env)`` puts it in the sandbox;
    ``fork(env)``, where given, forks it from the grader's template (template.py) instead, or gives None."""

    def __init__(self, kind: str, env: dict, wrap=None, timeout: float = COMPILE_TIMEOUT, fork=None):
        self.kind, self.env, self.wrap, self.timeout, self.fork = kind, dict(env), wrap, timeout, fork
        self.proc = None
        self.replies: queue.Queue = queue.Queue()
        self.lock = threading.Lock()
        self.requests = 0

    def _start(self):
        self.proc = self.fork(self.env) if self.fork is not None else None
        if self.proc is None:
            paths = [str(ROOT)] + [p for p in sys.path if p and os.path.isabs(p)]
            argv = [sys.executable, "-I", "-u", "-c", BOOT.format(paths=paths, kind=self.kind, seconds=self.timeout)]
            env = self.env
            if self.wrap is not None:
                argv, env = self.wrap(argv, env)
            self.proc = subprocess.Popen(
                argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env
            )
        self.replies = queue.Queue()
        threading.Thread(target=self._read, args=(self.proc, self.replies), daemon=True).start()

    @staticmethod
    def _read(proc, replies):
        for line in proc.stdout:
            replies.put(line)
        replies.put(None)

    def request(self, op: str, **fields):
        """The reply to ``op``; an error there is raised here as the student's code's error
        (``executor.raised``), a dead or stuck worker as WorkerGone."""
        from .. import _wire
        from ..exercises.executor import raised

        with self.lock:
            if self.proc is None or self.proc.poll() is not None:
                self._start()
            self.requests += 1
            try:
                self.proc.stdin.write(_wire.dumps({"op": op, "body": _wire.encode(fields)}))
                self.proc.stdin.flush()
                line = self.replies.get(timeout=self.timeout + (GRACE if self.kind == "tracer" else 0))
            except (OSError, ValueError):
                line = None
            except queue.Empty:
                self.close()
                raise WorkerGone(self._said(f"took longer than {self.timeout:.0f} s")) from None
            if line is None:
                self.close()
                raise WorkerGone(self._said("stopped (out of memory?)"))
            try:
                msg = _wire.loads(line)
                reply = _wire.decode(msg.get("reply")) if "reply" in msg else None
            except (_wire.WireError, AttributeError):
                raise WorkerGone(self._said("answered with something else")) from None
            if msg.get("restart") is True:  # it exits after this reply: never write to it again
                self.close()
            if isinstance(msg.get("error"), dict):
                raise raised(msg["error"])
            if not isinstance(reply, dict):
                raise WorkerGone(self._said("answered with something else"))
            return reply

    def _said(self, what: str) -> str:
        """One sentence for the student when the worker failed them (NVRTC's is built in compile)."""
        if self.kind == "nvrtc":
            return what
        return f"the grader's tracer {what} while running your kernel: is a loop missing its exit, or an array too big?"

    def compile(self, **request) -> dict:
        """NVRTC's reply: ``{"out": bytes}`` or ``{"compile_error": ..., "log": ...}``."""
        try:
            return self.request("nvrtc", **request)
        except WorkerGone as e:
            hint = " (a macro that expands without end?)" if "longer" in str(e) else ""
            return {"compile_error": f"NVRTC {e}{hint}"}

    def close(self):
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        self.proc = None


# ----------------------------------------------------------------------------- inside the worker


def _nvrtc(body: dict, state: dict) -> dict:
    from .. import cuda_c

    try:
        out = cuda_c.compile(
            body["src"],
            target=body["target"],
            arch=body["arch"],
            name=body["name"],
            options=tuple(body["options"]),
            extern_c=bool(body["extern_c"]),
        )
    except cuda_c.CompileError as e:
        return {"compile_error": str(e), "log": e.log}
    return {"out": bytes(out)}


def rebuilt_kernel(description: dict):
    """The kernel a vetted description describes, as a ``@cuda.jit`` object of this process."""
    import numba
    from numba import cuda

    from ..compile_check.rebuild import build
    from ..compile_check.trust import vet

    ns = build(vet(description), cuda, numba)
    return cuda.jit(ns[description["kernel"]])


def _trace(body: dict, state: dict) -> dict:
    from .serve import trace_op

    return trace_op(rebuilt_kernel(body["request"]), body, state.setdefault("traces", {}))


def _gpu(body: dict, state: dict) -> dict:
    """The rebuilt kernel launched on this process's GPU with guard bands (exercises/kernels.py)."""
    from .serve import gpu_op

    kernel = rebuilt_kernel(body["request"])
    try:
        return gpu_op(kernel, body)
    except Exception:
        state["restart"] = True  # a failed launch can leave the CUDA context unusable: a fresh process next
        raise


def _show(body: dict, state: dict) -> dict:
    from .serve import picture

    return picture(state.get("traces", {}).get(body.get("trace")), int(body.get("block") or 0))


def _rebuilt(body: dict, watching: str, uses: str):
    """The learner's host function rebuilt from its vetted description (host.py), or one sentence."""
    from ..errors import LearnerError
    from .host import NotRebuildable, rebuild

    try:
        return rebuild(body["function"])
    except NotRebuildable as e:
        raise LearnerError(
            f"the grader runs your function itself to watch {watching}, and cannot run this one: {e}; "
            f"write it as one plain def that uses {uses} (no imports inside it, no names with underscores)."
        ) from None


def _library_call(body: dict, state: dict) -> dict:
    """The learner's host function rebuilt from its description (host.py) and called on device arrays
    here, its library calls counted and recorded here (exercises/library_calls.py)."""
    from ..exercises.library_calls import device_call

    fn = _rebuilt(body, "its library calls", "cp, cc and np")
    done = device_call(fn, list(body["args"]), list(body["count"]))
    return {**done._asdict(), "seen": [list(c) for c in done.seen]}


def _stream_run(body: dict, state: dict) -> dict:
    """Notebook 16: the learner's host function rebuilt (host.py) and run here with numba.cuda's calls
    recorded here, or its CuPy capture replayed here (exercises/stream_runs.py)."""
    from .. import env
    from ..exercises import stream_runs

    fn = _rebuilt(body, stream_runs.WATCHING, stream_runs.USES)
    try:
        done = stream_runs.run(str(body["task"]), fn, body, state.setdefault("kernels", {}))
    except Exception:
        state["restart"] = env.on_gpu()  # a failed launch or capture can leave the CUDA context unusable
        raise
    if env.on_gpu() and (done.get("failed") or done.get("replay")):
        state["restart"] = True
    return done


HANDLERS = {
    "nvrtc": {"nvrtc": _nvrtc},
    "tracer": {"trace": _trace, "show": _show, "gpu": _gpu, "library_call": _library_call, "stream_run": _stream_run},
}


def main(kind: str, seconds: float = COMPILE_TIMEOUT):
    """The worker's loop (run inside the sandbox by ``Worker``): each request under the tracer's
    watchdog, which stops an endless kernel and names its line, as in the student's process."""
    import resource
    import warnings

    if os.environ.get("COURSE_MODE") == "cpu":  # on a GPU, CUDA reserves far more address space than it uses
        try:
            resource.setrlimit(resource.RLIMIT_AS, (MEMORY, MEMORY))
        except (ValueError, OSError):  # a lower hard limit is already set: keep it
            pass
    import helpers  # noqa: F401 - decides CPU/GPU mode before Numba is imported

    from .. import _wire
    from ..tracer.watchdog import describe_function, watchdog
    from .serve import error_reply

    handlers, state = HANDLERS[kind], {}
    out = os.fdopen(os.dup(1), "wb")
    sys.stdout = sys.stderr = io.StringIO()  # a library's chatter (or a kernel's print) never lands on the replies
    for line in sys.stdin.buffer:
        sys.stdout.seek(0)
        sys.stdout.truncate()
        try:
            msg = _wire.loads(line)
            with warnings.catch_warnings(), watchdog(seconds, describe_function("your kernel")):
                warnings.simplefilter("ignore")
                done = handlers[msg["op"]](_wire.decode(msg["body"]), state)
            reply = {"reply": _wire.encode(done)}
        except Exception as e:  # every failure is an answer, never a dead worker
            reply = {"error": error_reply(e)}
        restart = state.pop("restart", False)
        if restart:
            reply["restart"] = True
        out.write(_wire.dumps(reply))
        out.flush()
        if restart:
            os._exit(0)  # the judge starts a fresh worker for the next request (Worker.request)
