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
from helpers.grading import cli, execute, report
calls = []
if {mode!r} == "interrupt":
    def interrupt(self, label, outcome):
        raise KeyboardInterrupt
    report.Progress.update = interrupt
elif {mode!r} == "restart":
    real = execute.run_child
    def flaky(job, workdir, settings, gpu):
        calls.append(str(workdir))
        if len(calls) == 1:
            return execute.Attempt(skip=[], returncode=0)  # exited, said nothing: never started
        return real(job, workdir, settings, gpu)
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
elif {mode!r} == "never":
    def never(job, workdir, settings, gpu):
        calls.append(str(workdir))
        return execute.Attempt(skip=[], returncode=1)
    execute.run_child = never
rc = cli.main(json.loads(sys.argv[1]))
print("CALLS", len(calls))
sys.exit(rc)
"""


def run_cli(mode: str, argv: list, timeout: float = 400, cwd=None, env=None, stdout=False):
    """(exit code, how many times run_child was called under the patch, stderr[, stdout])."""
    code = DRIVER.format(root=str(ROOT), tests=str(ROOT / "tests"), mode=mode)
    env = {**os.environ, **(env or {}), "COURSE_MODE": "cpu", "NUMBA_ENABLE_CUDASIM": "1"}
    r = subprocess.run(
        [sys.executable, "-c", code, json.dumps([str(a) for a in argv])],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
        cwd=cwd,
    )
    calls = next((int(line.split()[1]) for line in r.stdout.splitlines() if line.startswith("CALLS ")), -1)
    return (r.returncode, calls, r.stderr, r.stdout) if stdout else (r.returncode, calls, r.stderr)
