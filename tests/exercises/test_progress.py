"""The progress file keeps every attempt and never loses an earlier pass: damaged files are moved
aside and said once, entries are validated, read-modify-write is locked, links and modes are kept,
and a file that cannot be written is said in one line with no temporary files left behind."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from helpers.exercises import progress
from helpers.exercises.results import Result

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def pfile(tmp_path, monkeypatch):
    path = tmp_path / "progress.json"
    monkeypatch.setenv("COURSE_PROGRESS_FILE", str(path))
    progress._said.clear()
    return path


def _result(status="passed", ex="nb01.x"):
    return Result(ex, status, "msg", 1, points=1.0 if status == "passed" else 0.0)


def test_damaged_file_is_moved_aside_said_once_and_not_lost(pfile, capsys):
    pfile.write_text('{"version": 1, "exercises": {"nb01.x": {"passed": true')  # cut short
    assert progress.load() == {}
    assert progress.load() == {}
    out = capsys.readouterr().out
    assert out.count("could not be read (not valid JSON)") == 1 and "moved to" in out
    aside = [p for p in pfile.parent.iterdir() if ".damaged-" in p.name]
    assert len(aside) == 1 and aside[0].read_text().startswith('{"version": 1')
    progress.record_result("nb01.y", _result())
    assert json.loads(pfile.read_text())["exercises"]["nb01.y"]["passed"] is True


def test_deeply_nested_json_is_damaged_not_a_crash(pfile, capsys):
    pfile.write_text("[" * 100_000 + "]" * 100_000)
    assert progress.load() == {}
    assert "could not be read" in capsys.readouterr().out


def test_entries_with_wrong_types_are_validated(pfile):
    pfile.write_text(
        json.dumps(
            {
                "version": 1,
                "exercises": {
                    "nb01.a": {"status": 7, "attempts": "many", "passed": "yes", "points": [1], "last_result": "ok"},
                    "nb01.b": "not an entry",
                    "nb01.c": {"status": "passed", "attempts": -3, "passed": True, "points": 1.0},
                },
            }
        )
    )
    entries = progress.load()
    assert entries["nb01.a"] == {"status": "not_attempted", "attempts": 0, "last_result": "ok"}
    assert "nb01.b" not in entries
    assert entries["nb01.c"]["attempts"] == 0 and entries["nb01.c"]["passed"] is True
    rows = progress.rows()  # the table copes with whatever survived
    assert {r["exercise"] for r in rows} == {"nb01.a", "nb01.c"}


def test_two_processes_recording_at_once_lose_no_attempt(pfile):
    code = (
        "import sys\n"
        "from helpers.exercises import progress\n"
        "from helpers.exercises.results import Result\n"
        "for i in range(20):\n"
        "    progress.record_result('nb01.x', Result('nb01.x', 'failed', 'm', i))\n"
    )
    env = {**os.environ, "COURSE_PROGRESS_FILE": str(pfile), "PYTHONPATH": str(ROOT)}
    procs = [subprocess.Popen([sys.executable, "-c", code], env=env, cwd=ROOT) for _ in range(2)]
    assert [p.wait(timeout=120) for p in procs] == [0, 0]
    assert json.loads(pfile.read_text())["exercises"]["nb01.x"]["attempts"] == 40


def test_a_symlink_stays_a_link_and_modes_are_kept(pfile, tmp_path):
    real = tmp_path / "real.json"
    real.write_text(json.dumps({"version": 1, "exercises": {}}))
    os.chmod(real, 0o640)
    pfile.symlink_to(real)
    progress.record_result("nb01.x", _result())
    assert pfile.is_symlink() and os.readlink(pfile) == str(real)
    assert json.loads(real.read_text())["exercises"]["nb01.x"]["passed"] is True
    assert stat.S_IMODE(os.stat(real).st_mode) == 0o640


def test_an_unwritable_place_is_said_once_and_leaves_no_temp_files(tmp_path, monkeypatch, capsys):
    # /proc refuses new files even to root (CI runs as root, where a chmod'ed folder would not)
    monkeypatch.setenv("COURSE_PROGRESS_FILE", "/proc/course-progress.json")
    progress._said.clear()
    before = set(os.listdir("/proc"))
    progress.record_result("nb01.x", _result())
    progress.record_result("nb01.x", _result())
    assert capsys.readouterr().out.count("could not be saved") == 1
    assert not [p for p in set(os.listdir("/proc")) - before if "course-progress" in p]


def test_a_folder_where_the_file_should_be_is_said_in_one_line(pfile, capsys):
    pfile.mkdir()
    progress.record_result("nb01.x", _result())
    progress.record_result("nb01.x", _result())
    out = capsys.readouterr().out
    assert out.count("is a folder") == 1 and out.count("could not be saved") == 1
    assert [p.name for p in pfile.parent.iterdir() if p.name.endswith(".tmp")] == []
