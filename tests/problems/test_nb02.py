"""Notebook 02 (first kernels): the bugs it demonstrates are really caught, as its text says.

Its correct kernels are traced in tests/notebooks/test_kernels_trace_clean.py; its exercises run in
tests/problems/test_catalogue.py.
"""

import numpy as np

from helpers.tracer import trace
from support import f32, nan32, notebook_kernels


def test_nb02_unguarded_add_is_out_of_bounds():
    k = notebook_kernels("02_first_kernels.ipynb")["add_unguarded"]
    t = trace(k, 3, 8, f32(20), f32(20), nan32(20), outputs=("out",))
    kinds = {v.kind for v in t.verdicts}
    assert kinds == {"out_of_bounds"}, t.summary()
    assert t.show(block=2) is not None


def test_nb02_racy_histogram_is_a_race_with_right_counts():
    k = notebook_kernels("02_first_kernels.ipynb")["histogram_racy"]
    data = np.random.default_rng(1).integers(0, 4, size=64).astype(np.int32)
    hist = np.zeros(4, np.int32)
    t = trace(k, 2, 32, data, hist)
    assert np.array_equal(hist, np.bincount(data, minlength=4)), "the notebook says the counts come out right"
    assert {v.kind for v in t.verdicts} == {"race"}, t.summary()
