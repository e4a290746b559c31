"""Run the grader's CLI in a fresh Python process with one patch applied, for tests that need a
patch (a Ctrl-C, a child that never starts): in the pytest process, state left by earlier tests
in the same worker made every child's results unreadable (see the session notes)."""

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

DRIVER = """
import json, sys
sys.path[:0] = [{root!r}, {tests!r}]
import helpers
from helpers.grading import cli, execute, progress
calls = []
if {mode!r} == "interrupt":
    def interrupt(self, label, outcome, gpu=None):
        raise KeyboardInterrupt
    progress.Progress.update = interrupt
elif {mode!r} == "restart":
    real = execute.run_child
    def flaky(job, workdir, settings, gpu, judge=None):
        calls.append(str(workdir))
        if len(calls) == 1:
            return execute.Attempt(skip=[], returncode=0)  # exited, said nothing: never started
        return real(job, workdir, settings, gpu, judge)
    execute.run_child = flaky
elif {mode!r} in ("unsandboxed", "unshare"):  # as on a machine without bwrap (and without unshare)
    from helpers.grading import sandbox
    real_detect = sandbox.detect
    missing = {{"bwrap": "/nonexistent/bwrap", "unshare": "/nonexistent/unshare"}}
    if {mode!r} == "unshare":
        missing.pop("unshare")
    def detect(*a, **k):
        return real_detect(*a, **{{**k, **missing}})
    sandbox.detect = detect
elif {mode!r} == "gpus":
    # Two fake GPUs: the grader places its workers as on a 2-GPU machine; each child's environment
    # is logged as the grader made it, then the child runs on the simulator with that
    # CUDA_VISIBLE_DEVICES still set, so its own device report says what it saw.
    import os
    cli.decide_mode = lambda wanted: ("gpu", ["0", "1"])
    real_env = execute.child_env
    def fake_env(settings, workdir, gpu):
        env = real_env(settings, workdir, gpu)
        with open(os.environ["FAKE_GPU_LOG"], "a") as f:
            f.write(json.dumps({{"workdir": str(workdir), "visible": env.get("CUDA_VISIBLE_DEVICES")}}) + "\\n")
        env.update(COURSE_MODE="cpu", NUMBA_ENABLE_CUDASIM="1")
        return env
    execute.child_env = fake_env
elif {mode!r} == "never":
    def never(job, workdir, settings, gpu, judge=None):
        calls.append(str(workdir))
        return execute.Attempt(skip=[], returncode=1)
    execute.run_child = never
rc = cli.main(json.loads(sys.argv[1]))
print("CALLS", len(calls))
sys.exit(rc)
"""


def run(mode: str, argv: list, timeout: float = 400, env: dict | None = None, cwd=None) -> subprocess.CompletedProcess:
    """The grader's CLI in a fresh process under the patch named by ``mode``: its exit code, stdout, stderr."""
    code = DRIVER.format(root=str(ROOT), tests=str(ROOT / "tests"), mode=mode)
    env = {**os.environ, "COURSE_MODE": "cpu", "NUMBA_ENABLE_CUDASIM": "1", **(env or {})}
    return subprocess.run(
        [sys.executable, "-c", code, json.dumps([str(a) for a in argv])],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
        cwd=cwd,
    )


def run_cli(mode: str, argv: list, timeout: float = 400, cwd=None, env=None, stdout=False):
    """(exit code, how many times run_child was called under the patch, stderr[, stdout])."""
    r = run(mode, argv, timeout, env=env, cwd=cwd)
    calls = next((int(line.split()[1]) for line in r.stdout.splitlines() if line.startswith("CALLS ")), -1)
    return (r.returncode, calls, r.stderr, r.stdout) if stdout else (r.returncode, calls, r.stderr)
