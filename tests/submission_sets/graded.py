"""The real grading CLI run on a folder of submissions, and the records it writes: shared by the
grading tests (tests/grading/). No time limit here: a grade that hangs is stopped by the suite's
per-test timeout (pytest-timeout, pyproject.toml), and a busy machine only makes it slower."""

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SALT = "test-salt"


def grade(*args):
    env = {**os.environ, "COURSE_MODE": "cpu"}
    return subprocess.run(
        [sys.executable, "-m", "helpers.grade", *map(str, args)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
    )


def records(out: Path) -> dict:
    return {json.loads(p.read_text())["student"]: json.loads(p.read_text()) for p in (out / "records").glob("*.json")}
