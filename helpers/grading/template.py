"""The grader's template process (CPU mode): Python, NumPy, the course and Numba's CUDA simulator
imported once per run, then forked for every grading child and every judge worker, each of which
enters its own sandbox before it reads anything of its submission.

Why: each of those processes used to start Python and import the same libraries (Numba's
simulator alone is about 0.5 s of CPU), two or three times per submission; forking a process that
already did costs a few milliseconds.

What a forked process shares with the others is only what the template did before any
submission existed: it is started from the children's environment (none of the instructor's
variables), imports the course and the libraries (never ``helpers.problems``: it refuses to serve
if anything imported them), and then only forks. It never reads a job, a notebook or an answer:
the grader sends it a target (``child``, ``worker KIND``, ``compile``), the environment, the sandbox's tree and
the pipes (``SCM_RIGHTS``), and sends the job itself to the forked process, as it did to a started
one. The forked process becomes a new session, makes the namespaces ``unshare`` made
(``prelude.unshare_now``), and its PID 1 builds the same tree (``prelude.enter``) before the
target runs in a child of it: its own mount, PID, network, IPC and user namespaces, as before.
Memory is copied on write, so nothing a student does reaches the template or another submission.
The judge's compile servers have a template of their own, the real Numba compiler with NVVM set up
(``compile_check/server.py --template``), forked by the same loop (``prelude.serve``).
"""

from __future__ import annotations

import json
import os
import select
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
BOOT = "import sys; sys.path[:0] = {paths!r}; from helpers.grading.template import serve; serve({fd!r})"
START_TIMEOUT = 120.0  # the template's imports on a busy machine


class TemplateGone(Exception):
    """The template could not fork (not started, or it died): the caller starts a process instead."""


class Forked:
    """A forked process as ``subprocess.Popen`` offers it to the grader: pid, stdin, stdout, poll,
    wait, kill. The template reaps it and writes its exit status into ``status``."""

    def __init__(self, pid: int, pidfd: int, stdin, stdout, status: int):
        self.pid, self.pidfd, self.stdin, self.stdout, self.status = pid, pidfd, stdin, stdout, status
        self.returncode = None

    def _ended(self, timeout) -> bool:
        if self.returncode is not None:
            return True
        if not select.select([self.status], [], [], timeout)[0]:
            return False
        data = os.read(self.status, 64)
        self.returncode = int(data) if data.strip() else -signal.SIGKILL  # the template died: gone with it
        for fd in (self.status, self.pidfd):
            os.close(fd)
        return True

    def poll(self):
        self._ended(0)
        return self.returncode

    def wait(self, timeout=None):
        if not self._ended(timeout):
            raise subprocess.TimeoutExpired("forked child", timeout)
        return self.returncode

    def kill(self):
        if self.returncode is None:  # through its pidfd: never another process that reused the pid
            try:
                signal.pidfd_send_signal(self.pidfd, signal.SIGKILL)
            except ProcessLookupError:
                pass


def templates(settings, env: dict) -> tuple:
    """CPU mode's templates for one run: the children's and workers', the compile servers', where a fork
    can enter the sandbox (``unshare`` or none; bubblewrap only starts programs; on a GPU, CUDA wants a
    fresh process). Else (None, None): every process is started. ``env``: the children's."""
    from ..compile_check import client

    box = settings.sandbox
    if settings.mode != "cpu" or (box is not None and box.kind != "unshare"):
        return None, None
    return Template(env, box), Template(client.server_env(env), box, client.template_argv)


class Template:
    """One per grader run, shared by its threads; started on the first ``spawn``. ``sandbox``: the
    run's ``sandbox.Sandbox`` (its ``unshare`` kind, or none); ``env``: the forks' environment;
    ``boot(fd)``: the template's command line (default: this module's ``serve``; the compile server's
    is ``compile_check.client.template_argv``)."""

    def __init__(self, env: dict, sandbox=None, boot=None):
        self.env, self.sandbox, self.boot = dict(env), sandbox, boot
        self.proc = self.sock = None
        self.broken = ""  # why it does not serve: every spawn then falls back to starting a process
        self.spawned = 0
        self.lock = threading.Lock()

    def _start(self):
        mine, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        paths = [str(ROOT)] + [p for p in sys.path if p and os.path.isabs(p)]
        argv = [sys.executable, "-I", "-u", "-c", BOOT.format(paths=paths, fd=theirs.fileno())]
        if self.boot is not None:
            argv = self.boot(theirs.fileno())
        self.proc = subprocess.Popen(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            env=self.env,
            cwd="/",
            pass_fds=(theirs.fileno(),),
            start_new_session=True,  # Ctrl-C reaches the grader, which stops the children itself
        )
        theirs.close()
        self.sock = mine
        self.sock.settimeout(START_TIMEOUT)

    def spawn(self, target: list, env: dict, workdir: Path, hide_problems=True, pass_fds=(), stderr=True) -> Forked:
        """``target`` (``["child"]``, ``["worker", kind, seconds]``, ``["probe"]``) forked, with ``env``,
        in ``workdir``, inside the run's sandbox; stdout (and stderr unless ``stderr`` is false) into
        one pipe; ``pass_fds`` at the same numbers. Raises TemplateGone when it cannot."""
        with self.lock:
            if self.broken:
                raise TemplateGone(self.broken)
            if self.proc is None:
                self._start()
                self._check()
                if self.broken:
                    raise TemplateGone(self.broken)
            return self._fork(target, env, Path(workdir), hide_problems, pass_fds, stderr)

    def _fork(self, target, env, workdir, hide_problems, pass_fds, stderr) -> Forked:
        box = self.sandbox
        request = {
            "target": list(target),
            "env": box.env(env, workdir) if box is not None else env,
            "cwd": str(workdir),
            "spec": box.spec(workdir, hide_problems) if box is not None else None,
            "unshare": list(box.args) if box is not None else None,
            "fds": list(pass_fds),
        }
        in_r, in_w = os.pipe()
        out_r, out_w = os.pipe()
        status_r, status_w = os.pipe()
        err = out_w if stderr else os.open(os.devnull, os.O_WRONLY)
        try:
            socket.send_fds(self.sock, [json.dumps(request).encode()], [in_r, out_w, err, status_w, *pass_fds])
            reply, fds, _, _ = socket.recv_fds(self.sock, 4096, 1)
            if not reply or not fds:
                raise EOFError
        except (OSError, EOFError) as e:
            for fd in (in_w, out_r, status_r):
                os.close(fd)
            self.broken = f"the template process stopped ({type(e).__name__})"
            raise TemplateGone(self.broken) from None
        finally:
            for fd in {in_r, out_w, err, status_w}:
                os.close(fd)
        self.spawned += 1
        pid = json.loads(reply)["pid"]
        return Forked(pid, fds[0], os.fdopen(in_w, "wb"), os.fdopen(out_r, "rb"), status_r)

    def _check(self):
        """A first fork, probed as sandbox.detect probes a mechanism: its own PID space, no checkout, no
        exercise; otherwise the template is not used (``broken`` says why)."""
        work = Path(tempfile.mkdtemp(prefix="grade-template-")) / "work"
        work.mkdir()
        try:
            proc = self._fork(["probe"], dict(self.env), work, True, (), True)
            line = proc.stdout.readline()
            proc.wait(timeout=START_TIMEOUT)
            facts = json.loads(line) if line.strip() else {}
        except (TemplateGone, ValueError, subprocess.TimeoutExpired) as e:
            facts = {"error": str(e) or type(e).__name__}
        finally:
            shutil.rmtree(work.parent, ignore_errors=True)
        if not facts or facts.get("error") or facts.get("problems") or not facts.get("numba_cuda"):
            self.broken = f"the template's first fork failed ({facts})"
        elif self.sandbox is not None and (facts["pid"] >= 10 or facts["checkout"]):
            self.broken = "the template's first fork was not sandboxed"
        if self.broken:
            self.close()

    def close(self):
        if self.proc is not None:
            self.sock.close()  # the template exits when its socket closes; kill it if it does not
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
            self.proc = None


# ----------------------------------------------------------------------------- inside the template


def preload():
    """What every forked process would import first anyway; never an exercise."""
    import importlib

    import numpy  # noqa: F401
    import numpy.random  # noqa: F401

    import helpers  # noqa: F401 - decides the mode before Numba is imported
    from helpers import geometry, tracer  # noqa: F401 - every notebook's first cell

    importlib.import_module("numba.cuda")  # the simulator, in CPU mode
    from ..compile_check import rebuild, trust  # noqa: F401 - the tracer worker's
    from ..tracer import watchdog  # noqa: F401
    from . import child, integrity, prelude, serve, undrawn, workers  # noqa: F401
    from .judged_runner import JudgedRunner  # noqa: F401

    leaked = [m for m in sys.modules if m == "helpers.problems" or m.startswith("helpers.problems.")]
    if leaked:  # a forked child would hold the exercises: serve nothing
        raise SystemExit(f"the template imported {leaked[0]}")


def serve(fd: int):
    """The template's loop (prelude.serve), after the imports every fork shares."""
    from . import prelude

    preload()
    prelude.serve(fd, _run)


def _fresh():
    """What a started process would not share with its siblings: random state, caches of the old tree,
    settings read from the environment at import."""
    import importlib
    import tempfile

    import numpy
    from numba.core import config

    importlib.invalidate_caches()
    numpy.random.seed()  # fresh entropy, as a new process gets
    tempfile.tempdir = None
    config.reload_config()  # NUMBA_CACHE_DIR and friends of this process's environment


def _run(target):
    """In a fork, inside its sandbox: ``target`` run with this process's state made fresh."""
    _fresh()
    if target[0] == "child":
        from .child import main

        main()
    elif target[0] == "worker":
        from .workers import main

        main(str(target[1]), float(target[2]))
    elif target[0] == "probe":  # what the template's own check and the tests read
        import numpy

        from . import prelude

        prelude.say({**prelude.facts(), "random": int(numpy.random.randint(1 << 30))})
