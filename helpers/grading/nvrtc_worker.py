"""The judge's own CUDA C compiler for one submission: NVRTC in a process of its own.

Why: a CUDA C answer's PTX decides its grade (the grader interprets it), so it must not come from
the student's process, where a submission could replace NVRTC's output. Nor can NVRTC run in the
grader itself: the source is the student's, and an ``#include`` of any file or a preprocessor
bomb would run there. So the judge starts this worker, lazily, in the submission's sandbox (it
never runs the student's notebook; CUDA C is data to NVRTC), with a memory cap, and sends it
each compile. One wire-encoded request per stdin line, one reply per stdout line.
"""

from __future__ import annotations

import os
import queue
import subprocess
import sys
import threading
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
BOOT = "import sys; sys.path[:0] = {paths!r}; from helpers.grading.nvrtc_worker import main; main()"
START_TIMEOUT = 120.0
COMPILE_TIMEOUT = 60.0
MEMORY = 4096 << 20  # NVRTC needs a few hundred MB; a macro bomb stops here


class Worker:
    """The worker process, started on first use by ``compile``; ``wrap(argv, env)`` puts it in
    the sandbox."""

    def __init__(self, env: dict, wrap=None, timeout: float = COMPILE_TIMEOUT):
        self.env, self.wrap, self.timeout = dict(env), wrap, timeout
        self.proc = None
        self.replies: queue.Queue = queue.Queue()
        self.lock = threading.Lock()

    def _start(self):
        argv = [sys.executable, "-I", "-u", "-c", BOOT.format(paths=[str(ROOT)] + [p for p in sys.path if p])]
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

    def compile(self, **request) -> dict:
        """The worker's reply: ``{"out": bytes}`` or ``{"compile_error": ..., "log": ...}``; a worker
        that dies or takes too long gives a compile error that says so."""
        from .. import _wire

        with self.lock:
            if self.proc is None or self.proc.poll() is not None:
                self._start()
            try:
                self.proc.stdin.write(_wire.dumps(_wire.encode(request)))
                self.proc.stdin.flush()
                line = self.replies.get(timeout=self.timeout)
            except (OSError, ValueError):
                line = None
            except queue.Empty:
                self.close()
                return {
                    "compile_error": f"NVRTC took longer than {self.timeout:.0f} s (a macro that expands without end?)"
                }
            if line is None:
                self.close()
                return {"compile_error": "NVRTC stopped while compiling it (out of memory?)"}
            try:
                reply = _wire.decode(_wire.loads(line))
            except _wire.WireError:
                reply = None
            if not isinstance(reply, dict):
                return {"compile_error": "NVRTC's process answered with something else"}
            return reply

    def close(self):
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        self.proc = None


def main():
    """The worker's loop (run inside the sandbox by ``Worker``)."""
    import resource

    try:
        resource.setrlimit(resource.RLIMIT_AS, (MEMORY, MEMORY))
    except (ValueError, OSError):  # a lower hard limit is already set: keep it
        pass
    from .. import _wire, cuda_c

    out = os.fdopen(os.dup(1), "wb")
    sys.stdout = sys.stderr  # a library's chatter never lands on the reply stream
    for line in sys.stdin.buffer:
        try:
            req = _wire.decode(_wire.loads(line))
            result = cuda_c.compile(
                req["src"],
                target=req["target"],
                arch=req["arch"],
                name=req["name"],
                options=tuple(req["options"]),
                extern_c=bool(req["extern_c"]),
            )
            reply = {"out": bytes(result)}
        except cuda_c.CompileError as e:
            reply = {"compile_error": str(e), "log": e.log}
        except Exception as e:  # noqa: BLE001 - every failure is an answer, never a dead worker
            reply = {"compile_error": f"{type(e).__name__}: {e}"[:1000]}
        out.write(_wire.dumps(_wire.encode(reply)))
        out.flush()
