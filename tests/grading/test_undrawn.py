"""helpers.grading.undrawn: in the grading child the course's pictures are not drawn, yet a notebook's cells
run on as in Jupyter (the same argument errors, a figure object they can keep, save or style), and the judge's
own feedback pictures are drawn for real."""

from __future__ import annotations

import numpy as np
import pytest

import helpers  # noqa: F401  - the course rule: helpers before numba.cuda
from helpers import geometry
from helpers.errors import LearnerError
from helpers.grading import serve, undrawn
from helpers.tracer import trace


@pytest.fixture
def installed():
    undrawn.install()
    yield
    for (module, name), fn in undrawn._REAL.items():  # the real functions back, for the other tests
        setattr(__import__(module, fromlist=[name]), name, fn)


def _trace():
    from numba import cuda

    @cuda.jit
    def add(x, out):
        i = cuda.grid(1)
        if i < x.size:
            out[i] = x[i] + 1

    x = np.arange(20, dtype=np.float32)
    return trace(add, 3, 8, x, np.zeros_like(x))


def test_the_notebooks_pictures_are_not_drawn_but_cells_can_use_them(installed, tmp_path):
    fig = geometry.draw_launch(geometry.launch_1d(n=20, threads_per_block=8))
    assert fig is undrawn.UNDRAWN and repr(fig) == "(a picture, not drawn while grading)"
    t = _trace()
    assert t.show() is undrawn.UNDRAWN and t.show_coalescing() is undrawn.UNDRAWN
    fig.savefig(tmp_path / "launch.png")  # a cell that saves or styles its figure runs on
    fig.axes[0].set_title("mine")
    assert list(fig.axes) == [] and not (tmp_path / "launch.png").exists()
    with pytest.raises(LearnerError):  # the arguments are checked as in Jupyter
        t.show(block=99)


def test_the_judges_feedback_picture_is_drawn_for_real(installed):
    t = _trace()
    png = serve.picture(t, 0)["png"]
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 1000
    assert t.show() is undrawn.UNDRAWN  # and the notebook's own stay undrawn afterwards


def test_without_install_pictures_are_figures():
    fig = geometry.draw_launch(geometry.launch_1d(n=20, threads_per_block=8))
    assert type(fig).__name__ == "Figure"
