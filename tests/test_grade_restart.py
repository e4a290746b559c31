"""A child that ends before any student code ran (no "ready" from it) is started once more:
a start-up hiccup of the machine must not cost a student their grade (seen on a loaded CI
machine: a correct notebook came out "not graded: the grader's process did not start")."""

import os

os.environ.setdefault("NUMBA_ENABLE_CUDASIM", "1")

import json  # noqa: E402

from test_grade import SALT  # noqa: E402
from test_grade import records as read_records  # noqa: E402

import helpers  # noqa: E402, F401
from grading import fixtures as fx  # noqa: E402
from helpers.grading import cli, execute  # noqa: E402


def test_a_child_that_never_started_is_started_again(tmp_path, monkeypatch):
    course = fx.make_course(tmp_path / "course")
    subs = tmp_path / "subs"
    (subs / "a").mkdir(parents=True)
    (subs / "a" / f"{fx.STEM}.ipynb").write_text(json.dumps(fx.notebook(fx.perfect_cells())))
    real, calls = execute.run_child, []

    def flaky(job, workdir, settings, gpu):
        calls.append(workdir)
        if len(calls) == 1:
            return execute.Attempt(skip=[], returncode=0)  # exited, nothing said: never started
        return real(job, workdir, settings, gpu)

    monkeypatch.setattr(execute, "run_child", flaky)
    argv = [str(subs), "--out", str(tmp_path / "out"), "--course", str(course), "-j1", "--mode", "cpu"]
    assert cli.main([*argv, "--retries", "0", "--salt", SALT]) == 0
    rec = read_records(tmp_path / "out")["a"]
    assert {e["status"] for e in rec["exercises"]} == {"passed"}, rec["exercises"]
    assert len(calls) == 2 and rec["runs"][0].get("restarted") is True


def test_a_notebook_that_kills_its_process_before_ready_is_not_restarted_forever(tmp_path, monkeypatch):
    calls = []
    monkeypatch.setattr(execute, "run_child", lambda *a: calls.append(a) or execute.Attempt(skip=[], returncode=1))
    course = fx.make_course(tmp_path / "course")
    subs = tmp_path / "subs"
    (subs / "a").mkdir(parents=True)
    (subs / "a" / f"{fx.STEM}.ipynb").write_text(json.dumps(fx.notebook(fx.perfect_cells())))
    argv = [str(subs), "--out", str(tmp_path / "out"), "--course", str(course), "-j1", "--mode", "cpu"]
    cli.main([*argv, "--retries", "0", "--salt", SALT])
    rec = read_records(tmp_path / "out")["a"]
    assert len(calls) == 2 and {e["status"] for e in rec["exercises"]} == {"not_graded"}
    assert "did not start" in rec["exercises"][0]["message"]
