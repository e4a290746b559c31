"""One compile server per Python process, started on first use, and a cache of its answers.

The server is a child process (see server.py for why it must be one) that stays up, so only the
first check pays for importing Numba and NVVM. Answers are cached by the exact request (every
source text, global and argument type), so re-checking an unchanged kernel never leaves this
process. A reader thread feeds a queue so that a timeout works on every platform.
"""

from __future__ import annotations

import atexit
import concurrent.futures
import io
import json
import os
import queue
import subprocess
import sys
import threading
from pathlib import Path

SERVER = Path(__file__).with_name("server.py")
START_TIMEOUT = 120.0  # importing numba + NVVM on a busy laptop
COMPILE_TIMEOUT = 60.0


class Unavailable(Exception):
    """The server could not answer (did not start, died, or took too long)."""


def server_env(env: dict | None = None) -> dict:
    """The server's environment from ``env`` (default: this process's)."""
    env = dict(os.environ if env is None else env)
    env["NUMBA_ENABLE_CUDASIM"] = "0"  # the real compiler, never the simulator
    # The server must import the same Numba and NumPy as this process (a GPU host's shadowing
    # site folder included): pass this process's path on, but never the course itself, so
    # `helpers` (which switches the simulator on) cannot be imported there by accident.
    course = os.path.realpath(Path(__file__).resolve().parents[2])
    env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p and os.path.isdir(p) and os.path.realpath(p) != course)
    env["NUMBA_OPT"] = "0"  # optimising never changes whether a kernel compiles; it only costs time
    return env


def template_argv(fd: int) -> list:
    """A template of servers (the batch grader's, grading/template.py): Numba and NVVM loaded and warmed
    once, each server forked from it."""
    return [sys.executable, "-u", str(SERVER), "--template", str(fd)]


class Server:
    """``wrap(argv, env) -> (argv, env)`` starts it elsewhere (the batch grader's sandbox), from
    the environment ``env`` (default: this process's); ``fork(env)``, where given, forks it from a
    template instead (a ``Popen``-like object, or None to start it after all)."""

    def __init__(self, env: dict | None = None, wrap=None, fork=None):
        env = server_env(env)
        forked = fork(env) if fork is not None else None
        if forked is not None:
            forked.stdin = io.TextIOWrapper(forked.stdin, encoding="utf-8", write_through=True)
            forked.stdout = io.TextIOWrapper(forked.stdout, encoding="utf-8")
            self.proc = forked
        else:
            argv = [sys.executable, "-u", str(SERVER)]
            if wrap is not None:
                argv, env = wrap(argv, env)
            self.proc = subprocess.Popen(
                argv,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                text=True,
                env=env,
            )
        self.answers = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()
        hello = self._next(START_TIMEOUT)
        self.pid, self.cc = hello.get("pid"), tuple(hello.get("cc", ()))

    def _read(self):
        for line in self.proc.stdout:
            try:
                self.answers.put(json.loads(line))
            except ValueError:  # stray output from a library: not an answer
                continue
        self.answers.put(None)

    def _next(self, timeout):
        try:
            answer = self.answers.get(timeout=timeout)
        except queue.Empty:
            self.close()
            raise Unavailable(f"took longer than {timeout:.0f} s") from None
        if answer is None:
            raise Unavailable("the compile process stopped")
        return answer

    def ask(self, request, timeout=COMPILE_TIMEOUT):
        try:
            self.proc.stdin.write(json.dumps(request) + "\n")
            self.proc.stdin.flush()
        except (BrokenPipeError, OSError):
            raise Unavailable("the compile process stopped") from None
        return self._next(timeout)

    def alive(self):
        return self.proc.poll() is None

    def close(self):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


class _State:
    """The server and the answers, held in one object that is never replaced: the grader's
    tamper check compares module entries by identity, and starting the server lazily must not
    look like a student swapping it."""

    def __init__(self):
        self.lock = threading.Lock()
        self.server: Server | None = None
        self.cache: dict[str, dict] = {}

    def get(self) -> Server:
        """The running server, started if needed (a dead one is replaced)."""
        if self.server is None or not self.server.alive():
            self.server = Server()
        return self.server


_STATE = _State()


def server() -> Server:
    """This process's shared server, started if needed."""
    return _STATE.get()


def compile_request(request: dict, timeout=COMPILE_TIMEOUT, state=None) -> dict:
    """The server's answer to `request`, from the cache when the same request was answered.
    ``state``: a ``Private`` server and cache instead of this process's shared one."""
    state = _STATE if state is None else state
    key = json.dumps(request, sort_keys=True)
    with state.lock:
        if key in state.cache:
            return state.cache[key]
        answer = state.get().ask(request, timeout)
        state.cache[key] = answer
        return answer


class Private(_State):
    """A server of one's own, started on first use by ``start()`` (the batch grader's judge starts
    one per submission, in that submission's sandbox), with its own cache."""

    def __init__(self, start, answers: dict | None = None):
        super().__init__()
        self._start = start
        if answers is not None:  # answers shared with other submissions' servers (the same request, the same answer)
            self.cache = answers
        # its own waiting thread: one submission's slow compile never holds up another's
        self.waiter = concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix="compile-check")

    def get(self) -> Server:
        if self.server is None or not self.server.alive():
            self.server = self._start()
        return self.server

    def close(self):
        if self.server is not None:
            self.server.close()
            self.server = None
        self.waiter.shutdown(wait=False, cancel_futures=True)


# One thread waits on the server while the caller goes on tracing: the compile (in another
# process) overlaps the traced run instead of adding to it.
_waiter = concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix="compile-check")


def submit(request: dict, timeout=COMPILE_TIMEOUT, state=None) -> concurrent.futures.Future:
    """`compile_request` in the background; the future's result is the answer or raises Unavailable."""
    return getattr(state, "waiter", _waiter).submit(compile_request, request, timeout, state)


def clear_cache():
    _STATE.cache.clear()


@atexit.register
def shutdown():
    if _STATE.server is not None:
        _STATE.server.close()
        _STATE.server = None
