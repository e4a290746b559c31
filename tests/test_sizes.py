"""helpers.sizes: the text's size on a GPU and in CPU mode, a smaller one where a cell would be slow (said in a
line), and the small one in the grader's children."""

from __future__ import annotations

import helpers
from helpers import sizes


def test_size_picks_the_cpu_value_and_says_which_size_ran(capsys):
    assert helpers.size(gpu=10_000_000, cpu=2_000) == 2_000
    assert capsys.readouterr().out == "CPU mode runs 2,000 here instead of the text's 10,000,000.\n"
    assert helpers.size(gpu=(1200, 1800), cpu=(96, 144), why="256 steps a pixel") == (96, 144)
    assert (
        capsys.readouterr().out
        == "CPU mode runs 96 x 144 here instead of the text's 1,200 x 1,800: 256 steps a pixel.\n"
    )


def test_size_runs_the_small_size_for_the_grader_and_says_nothing(capsys, monkeypatch):
    """The grader's children (COURSE_SIZES=small, helpers/grading/execute.py) run every cell of every submission."""
    monkeypatch.setattr(sizes, "SMALL_SIZES", True)
    assert helpers.size(1_000_000, small=1_000) == 1_000
    assert helpers.size(gpu=(1200, 1800), cpu=(96, 144), why="256 steps a pixel", small=(48, 72)) == (48, 72)
    assert helpers.size(256) == 256  # no small size given: the text's
    assert capsys.readouterr().out == ""
    monkeypatch.setattr(sizes, "SMALL_SIZES", False)
    assert helpers.size(1_000_000, small=1_000) == 1_000_000 and capsys.readouterr().out == ""


def test_size_is_silent_when_the_cpu_runs_the_texts_size(capsys):
    assert helpers.size(gpu=1 << 20, cpu=1 << 20) == 1 << 20
    assert capsys.readouterr().out == ""
