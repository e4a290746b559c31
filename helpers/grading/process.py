"""One child process of the grader's: started in its sandbox and its own session, its output
kept (head and tail only), watched against the timers of what it says it is doing, and killed
with its whole process group; Ctrl-C stops every running child and starts no new one.

``execute.py`` decides what a child runs and with which environment; this module only runs it.
"""

from __future__ import annotations

import collections
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

from .records import HEAD_BYTES, TAIL_BYTES

ROOT = Path(__file__).resolve().parents[2]
# -I ignores PYTHONPATH, so the child gets the grader's own import path explicitly: where the
# course's packages come from PYTHONPATH (offline GPU nodes, COURSE_ENV=current) the child must
# import the same numpy and numba as the grader, not whatever the base interpreter ships.
_BOOT = "import sys; sys.path[:0] = {paths!r}; from helpers.grading.child import main; main()"

STOP = threading.Event()  # set on Ctrl-C: no further child starts
_RUNNING: set = set()
_LOCK = threading.Lock()


class Interrupted(Exception):
    """The grader was told to stop (Ctrl-C): no new child process is started."""


def stop_all() -> None:
    """Ctrl-C: start nothing new and kill every running child's process group."""
    STOP.set()
    with _LOCK:
        running = list(_RUNNING)
    for proc in running:
        kill_group(proc)


def check_stop() -> None:
    if STOP.is_set():
        raise Interrupted("the grader was interrupted")


def child_argv() -> list:
    return [
        sys.executable,
        "-I",
        "-u",
        "-c",
        _BOOT.format(paths=[str(ROOT)] + [p for p in sys.path if p and os.path.isabs(p)]),
    ]


def start(workdir, env: dict, sandbox, attempt, hide_problems=False, pass_fds=(), template=None):
    """The child process with ``env``, in ``sandbox`` where there is one, registered for Ctrl-C, its
    output pumped into ``attempt``: (process, output reader, start time). With a ``template``
    (template.py) it is forked from there, else started."""
    started = time.monotonic()
    proc = forked(template, ["child"], env, workdir, hide_problems, pass_fds)
    if proc is None:
        argv = child_argv()
        if sandbox is not None:  # the same paths inside: the workdir is bound at its own name, writable
            argv, env = sandbox.wrap(argv, workdir, hide_problems=hide_problems), sandbox.env(env, workdir)
        proc = subprocess.Popen(
            argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            cwd=workdir,
            env=env,
            start_new_session=True,
            pass_fds=pass_fds,
        )
    with _LOCK:
        _RUNNING.add(proc)
    if STOP.is_set():
        kill_group(proc)
    reader = threading.Thread(target=_pump, args=(proc.stdout, attempt), daemon=True)
    reader.start()
    return proc, reader, started


def forked(template, target, env, workdir, hide_problems=True, pass_fds=(), stderr=True):
    """``target`` forked from ``template`` (a ``template.Forked``), or None: no template, or it stopped
    serving (the caller then starts a process, as without one)."""
    from .template import TemplateGone

    if template is None:
        return None
    try:
        return template.spawn(target, env, workdir, hide_problems, pass_fds, stderr)
    except TemplateGone:
        return None


def finish(proc, reader, started, sandbox, attempt) -> None:
    """After the child is gone: its exit status as the sandbox reports it, unregistered, output read."""
    if sandbox is not None:
        attempt.returncode = sandbox.returncode(attempt.returncode)
    with _LOCK:
        _RUNNING.discard(proc)
    check_stop()
    reader.join(timeout=5)  # a grandchild that left the session could hold the pipe: do not wait for it
    attempt.seconds = time.monotonic() - started


def kill_group(proc) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError, OSError):
        pass


def _pump(stream, attempt):
    tail = collections.deque()
    size = 0
    head = bytearray()
    while True:
        chunk = stream.read1(65536) if hasattr(stream, "read1") else stream.read(65536)
        if not chunk:
            break
        attempt.output_bytes += len(chunk)
        if len(head) < HEAD_BYTES:
            head += chunk[: HEAD_BYTES - len(head)]
        tail.append(chunk)
        size += len(chunk)
        while size - len(tail[0]) >= TAIL_BYTES:
            size -= len(tail.popleft())
    attempt.head, attempt.tail = bytes(head), b"".join(tail)[-TAIL_BYTES:]
