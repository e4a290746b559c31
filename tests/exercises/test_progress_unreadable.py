"""A progress file that cannot be read as text is damaged like bad JSON (issue 27, fuzz leftovers): a
file with bytes that are not UTF-8 was 'starting empty' and the next check wrote over it, losing
three earlier passes. It is moved aside, bytes intact, and said once; where it cannot be moved,
nothing is saved over it."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from helpers.exercises import progress
from helpers.exercises.results import Result

EARLIER = {"version": 1, "exercises": {f"nb0{k}.x": {"status": "passed", "passed": True} for k in (1, 2, 3)}}


@pytest.fixture
def pfile(tmp_path, monkeypatch):
    path = tmp_path / "progress.json"
    monkeypatch.setenv("COURSE_PROGRESS_FILE", str(path))
    progress._said.clear()
    monkeypatch.setattr(progress, "_kept", set(), raising=False)  # files left in place, this test's only
    return path


def _pass(ex="nb05.y"):
    return Result(ex, "passed", "msg", 1, points=1.0)


def _aside(pfile):
    return [p for p in pfile.parent.iterdir() if ".damaged-" in p.name]


def test_bytes_that_are_not_utf8_are_moved_aside_not_written_over(pfile, capsys):
    damaged = json.dumps(EARLIER).encode().replace(b"nb01", b"nb\xff1")
    pfile.write_bytes(damaged)
    progress.record_result("nb05.y", _pass())
    progress.record_result("nb05.z", _pass("nb05.z"))
    out = capsys.readouterr().out
    assert out.count("could not be read (not UTF-8 text") == 1 and "moved to" in out
    (aside,) = _aside(pfile)
    assert aside.read_bytes() == damaged  # the three earlier passes are all still there
    assert set(json.loads(pfile.read_text())["exercises"]) == {"nb05.y", "nb05.z"}


def test_a_file_that_cannot_be_read_is_moved_aside_too(pfile, capsys, monkeypatch):
    pfile.write_text(json.dumps(EARLIER))

    def unreadable(self, *args, **kwargs):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(Path, "read_text", unreadable)
    assert progress.load() == {}
    monkeypatch.undo()
    assert "could not be read (Permission denied)" in capsys.readouterr().out
    (aside,) = _aside(pfile)
    assert json.loads(aside.read_text()) == EARLIER


def test_a_damaged_file_that_cannot_be_moved_is_never_saved_over(pfile, capsys, monkeypatch):
    damaged = b"\xff\xfe" + json.dumps(EARLIER).encode()
    pfile.write_bytes(damaged)

    def refused(src, dst):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(os, "replace", refused)
    progress.record_result("nb05.y", _pass())
    monkeypatch.undo()
    assert pfile.read_bytes() == damaged and not _aside(pfile)
    assert "is left as it is, and this session's results are not saved over it" in capsys.readouterr().out
