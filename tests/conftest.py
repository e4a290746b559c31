"""Fixtures shared by several test files (the simulator flag is set once, in the root conftest.py)."""

import pytest


@pytest.fixture
def progress_file(tmp_path, monkeypatch):
    """A fresh, empty progress file for one test; files that grade exercises use it for every test
    (`pytestmark = pytest.mark.usefixtures("progress_file")`)."""
    path = tmp_path / "progress.json"
    monkeypatch.setenv("COURSE_PROGRESS_FILE", str(path))
    return path
