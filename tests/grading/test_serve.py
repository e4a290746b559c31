"""helpers.grading.serve: the student's side of a judged notebook."""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

_CHILD = """
import helpers
from helpers.grading.serve import install_stubs
install_stubs({"nb01": {"exercises": {"global_index": {"prompt": "p"}}, "constants": {}}}, lambda *a: None)
from helpers.problems import nb01
assert nb01.global_index.id == "nb01.global_index"
rows = helpers.progress(show=False)  # notebook 01's last cell, in a graded copy
assert isinstance(rows, list), rows
print("ok")
"""


def test_the_progress_cell_runs_in_a_judged_child():
    # a fresh process: the stand-ins replace helpers.problems for the rest of the process
    env = {"PYTHONPATH": str(ROOT), "COURSE_MODE": "cpu", "PATH": "/usr/bin:/bin"}
    run = subprocess.run([sys.executable, "-c", _CHILD], cwd=ROOT, env=env, capture_output=True, text=True)
    assert run.returncode == 0 and run.stdout.strip().endswith("ok"), run.stderr[-2000:]
