"""CPU mode's template process (helpers/grading/template.py, issue 29 item 8): each grading child and
judge worker is forked from one process that imported the course and Numba's simulator once, and
enters its own sandbox before anything of its submission reaches it. Forked, it holds no exercise,
sees only its own PID space and not the checkout, and gets fresh random state; a worker that died is
forked again; a template that stopped leaves the grader starting processes as before."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from helpers.grading import execute, process, sandbox
from helpers.grading.course import load_course
from helpers.grading.submissions import Submission
from helpers.grading.template import Template, templates
from helpers.grading.workers import Worker

ROOT = Path(__file__).resolve().parents[2]
BOX = sandbox.detect(bwrap="/nonexistent/bwrap")  # the unshare mechanism: the one a fork enters
needs_unshare = pytest.mark.skipif(BOX.kind != "unshare", reason=f"unshare does not work here: {BOX.describe()}")


@pytest.fixture
def template(tmp_path):
    made = []

    def make(box):
        t = Template(execute.child_env(execute.Settings(), tmp_path, None), box)
        made.append(t)
        return t

    yield make
    for t in made:
        t.close()


def _probe(t, tmp_path, name):
    work = tmp_path / name
    work.mkdir()
    proc = t.spawn(["probe"], execute.child_env(execute.Settings(), work, None), work)
    line = proc.stdout.readline()
    assert proc.wait(timeout=60) == 0, line
    return json.loads(line)


@needs_unshare
def test_a_fork_enters_its_own_sandbox_holds_no_exercise_and_draws_fresh_random_numbers(template, tmp_path):
    t = template(BOX)
    first, second = _probe(t, tmp_path, "a"), _probe(t, tmp_path, "b")
    assert not t.broken and t.spawned == 3  # the template's own check, then these two
    for facts in (first, second):
        assert facts["pid"] < 10 and not facts["checkout"]  # its own PID space; solutions/ not in its tree
        assert facts["problems"] == [] and facts["numba_cuda"]  # Numba imported before; no exercise ever
        assert len(facts["fds"]) == 4  # stdin, stdout, stderr and the listing's own: none of the template's
    assert first["random"] != second["random"]


def test_without_a_sandbox_the_fork_is_the_template_s_own_child(template, tmp_path):
    facts = _probe(template(None), tmp_path, "a")
    assert facts["pid"] > 1 and facts["checkout"] and facts["problems"] == []


def _solution(tmp_path):
    nb = load_course(ROOT / "notebooks")["02_first_kernels"]
    path = tmp_path / "alice.ipynb"
    path.write_text((ROOT / "solutions" / "02_first_kernels.ipynb").read_text())
    sub = Submission(student="alice", name="alice", path=path, notebook=nb.stem)
    return sub, nb, {e.id: 1 for e in nb.exercises}


def _started_pythons(monkeypatch):
    """argv of every Python the grader starts from here on (the compile server is one)."""
    started, real = [], subprocess.Popen.__init__

    def spy(self, argv, *a, **kw):
        if any("python" in Path(str(x)).name for x in argv):  # not ldconfig, which ctypes runs
            started.append([str(x) for x in argv])
        real(self, argv, *a, **kw)

    monkeypatch.setattr(subprocess.Popen, "__init__", spy)
    return started


def test_the_child_the_tracer_and_the_compile_server_of_a_submission_are_forked_not_started(tmp_path, monkeypatch):
    box = BOX if BOX.kind == "unshare" else None
    settings = execute.Settings(timeout=600, sandbox=box)
    settings.template, settings.compile_template = templates(settings, execute.child_env(settings, tmp_path))
    started = _started_pythons(monkeypatch)
    try:
        record = execute.grade_submission(*_solution(tmp_path), settings, tmp_path / "scratch")
    finally:
        settings.template.close()
        settings.compile_template.close()
    assert {r["status"] for r in record["exercises"]} == {"passed"}, json.dumps(record, default=str)[:2000]
    assert settings.template.spawned == 3  # its own check, the student's process, the judge's tracer
    assert settings.compile_template.spawned == 2  # its own check, the judge's compile server
    # Only the two templates were started: no process per submission imported Numba itself.
    assert len(started) == 2 and "helpers.grading.template" in " ".join(started[0]), started
    assert "--template" in started[1] and any(a.endswith("compile_check/server.py") for a in started[1])


def test_a_dead_worker_is_forked_again(template, tmp_path):
    t = template(None)
    env = execute.child_env(execute.Settings(), tmp_path, None)
    w = Worker("tracer", env, timeout=30, fork=lambda e: process.forked(t, ["worker", "tracer", 30], e, tmp_path))
    try:
        assert w.request("show", trace=None, block=0) == {"png": None}
        first = w.proc.pid
        w.proc.kill()
        assert w.proc.wait(timeout=10) == -9
        assert w.request("show", trace=None, block=0) == {"png": None}
        assert w.proc.pid != first and t.spawned == 3
    finally:
        w.close()


def test_a_template_that_stopped_leaves_the_grader_starting_processes(template, tmp_path, monkeypatch):
    t = template(None)
    _probe(t, tmp_path, "a")
    t.proc.kill()
    t.proc.wait()
    assert process.forked(t, ["probe"], {}, tmp_path) is None and t.broken
    settings = execute.Settings(timeout=600, template=t)
    started = _started_pythons(monkeypatch)
    record = execute.grade_submission(*_solution(tmp_path), settings, tmp_path / "scratch")
    assert {r["status"] for r in record["exercises"]} == {"passed"}
    assert any("helpers.grading.child" in x for a in started for x in a)  # started, as without a template


def test_a_template_that_imported_an_exercise_refuses_to_serve(template, tmp_path):
    def boot(fd):  # as the template's own command line, with the course's exercises imported first
        code = f"import sys; sys.path[:0] = [{str(ROOT)!r}]; import helpers.problems.nb02; "
        code += f"from helpers.grading.template import serve; serve({fd})"
        return [sys.executable, "-I", "-u", "-c", code]

    t = template(None)
    t.boot = boot
    assert process.forked(t, ["probe"], {}, tmp_path) is None and t.broken
