"""Notebook 04 (2D grids and images): the bug it demonstrates is caught, and its image exercises
describe a learner's unwritten pixels plainly. The references and every wrong answer in
tests/wrong_solutions/nb04.py run in tests/problems/test_catalogue.py; its kernels are traced in
tests/notebooks/test_kernels_trace_clean.py.
"""

import numpy as np
import pytest

from helpers.tracer import trace
from support import f32, nan32, notebook_kernels

pytestmark = pytest.mark.usefixtures("progress_file")


def test_nb04_floor_division_grid_leaves_unwritten_output():
    k = notebook_kernels("04_2d_grids_images.ipynb")["matrix_add"]
    small = (20, 37)
    out = nan32(*small)
    t = trace(k, (small[1] // 8, small[0] // 8), (8, 8), f32(*small), f32(*small), out, outputs=("out",))
    assert {v.kind for v in t.verdicts} == {"unwritten_output"}, t.summary()
    assert np.isnan(out[:, 32:]).all() and np.isnan(out[16:, :]).all() and not np.isnan(out[:16, :32]).any()


def test_image_exercise_describes_unwritten_pixels_with_a_picture():
    from helpers.problems import nb04
    from wrong_solutions.nb04 import gray_first_block_only

    r = nb04.grayscale.grade(gray_first_block_only, seed=7)
    assert r.status == "failed" and "only the first block" in r.message and r.picture is not None
