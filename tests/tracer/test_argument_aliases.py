"""Arguments that are views of one memory are one traced array (issue 27, fuzz leftovers): a write
through `x[:]` or `a[1:]` passed as a second argument races with other threads' accesses to `x`,
as on a GPU, where both names point at the same bytes."""

import numpy as np
from numba import cuda

import helpers  # noqa: F401  - the course rule: helpers before numba.cuda
from helpers.tracer import trace


@cuda.jit
def shift(x, y):
    i = cuda.grid(1)
    if i < x.size - 1:
        x[i] = y[i + 1]


@cuda.jit
def copy(x, y):
    i = cuda.grid(1)
    if i < x.size:
        x[i] = y[i]


@cuda.jit
def scale(inp, out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = inp[i] * 2


@cuda.jit
def unguarded(x, y):
    i = cuda.grid(1)
    y[i] = x[i]


def _kinds(t):
    return [v.kind for v in t.verdicts]


def test_the_same_array_under_another_name_races():
    x = np.arange(32, dtype=np.float32)
    t = trace(shift, 1, 32, x, x[:])
    assert _kinds(t) == ["race"]
    assert "(x and y are views of the same memory)" in t.verdicts[0].message


def test_shifted_views_of_one_array_race():
    x = np.arange(33, dtype=np.float32)
    t = trace(copy, 1, 32, x[:-1], x[1:])
    assert _kinds(t) == ["race"]
    assert list(x[:3]) == [1, 2, 3]  # NumPy views are still written in place


def test_views_that_overlap_without_holding_each_other_race():
    a = np.arange(10, dtype=np.float32)
    t = trace(copy, 1, 32, a[:6], a[4:])
    assert _kinds(t) == ["race"]


def test_device_views_of_one_array_race_and_are_copied_back_once():
    d = cuda.to_device(np.arange(10, dtype=np.float32))
    t = trace(copy, 1, 32, d[:-1], d[1:])
    assert _kinds(t) == ["race"]
    assert list(d.copy_to_host()) == [1, 2, 3, 4, 5, 6, 7, 8, 9, 9]  # each thread's copy, as in order


def test_disjoint_views_of_one_array_do_not_race():
    d = cuda.to_device(np.arange(10, dtype=np.float32))
    t = trace(scale, 1, 32, d[:5], d[5:], outputs="out")
    assert t.ok, t.summary()
    assert list(d.copy_to_host()) == [0, 1, 2, 3, 4, 0, 2, 4, 6, 8]


def test_an_output_that_is_part_of_the_memory_is_judged_on_its_own_elements():
    a = np.arange(10, dtype=np.float32)
    t = trace(scale, 1, 32, a[1:], a[1:-1], outputs="out")  # each thread reads and writes its own element
    assert t.ok, t.summary()


def test_out_of_bounds_through_a_view_is_said_in_the_views_shape():
    a = np.arange(8, dtype=np.float32)
    t = trace(unguarded, 1, 8, a, a[1:])
    oob = [v for v in t.verdicts if v.kind == "out_of_bounds"]
    assert oob and "wrote y[7]" in oob[0].message and "y has shape (7,)" in oob[0].message
