"""Notebook 12's exercises beyond the catalogue (tests/wrong_solutions/nb12.py): what a learner may also write."""

import numpy as np
from numba import njit, prange

from helpers.problems import nb12


def test_an_njit_placeholder_is_not_attempted():
    @njit(parallel=True)
    def sum_of_squares(x):
        pass  # YOUR CODE HERE

    r = nb12.sum_of_squares.grade(sum_of_squares)
    assert r.status == "not_attempted", r.line()


def test_a_parallel_array_expression_also_uses_the_cores_and_passes():
    """parallel=True splits whole-array expressions too; the check counts parallel loops, not the word prange."""

    @njit(parallel=True)
    def sum_of_squares(x):
        return (x * x).sum()

    r = nb12.sum_of_squares.grade(sum_of_squares, seed=1)
    assert r.status == "passed", r.line()


def test_a_prange_loop_with_a_wrong_sum_names_the_size():
    @njit(parallel=True)
    def sum_of_squares(x):
        total = 0.0
        for i in prange(x.size):
            total += x[i] * x[i] + 1.0
        return total

    r = nb12.sum_of_squares.grade(sum_of_squares, seed=1)
    assert r.status == "failed" and "for an array of 0 elements" not in r.message and "elements" in r.message


def test_crossover_reference_on_a_table_like_the_benchmark_json():
    rows = [
        {"n": 1 << k, "cpu_ms": 0.01 * 2**j, "gpu_kernel_ms": 0.01, "gpu_total_ms": 0.08 + 0.004 * 2**j}
        for j, k in enumerate(range(10, 20))
    ]
    assert nb12._gpu_wins_from(rows) == 1 << 14  # CPU 0.16 ms > GPU 0.144 ms at 2^14, and the gap only grows
    want = min(r["n"] for r in rows if all(s["gpu_total_ms"] < s["cpu_ms"] for s in rows if s["n"] >= r["n"]))
    assert nb12._gpu_wins_from(rows) == want


def test_leaky_relu_reference_keeps_types():
    for dtype in (np.float32, np.float64):
        out = nb12.leaky_relu.reference(np.array([-2, 0, 3], dtype), dtype(0.5))
        assert out.dtype == dtype and out.tolist() == [-1.0, 0.0, 3.0]


def test_a_vectorize_on_the_default_cpu_target_is_not_the_parallel_ufunc_asked_for():
    """@vectorize without target="parallel" gives the right numbers on one core: the exercise is about
    target="parallel", so it fails, with the fix named."""
    from numba import vectorize

    from helpers.problems import nb12

    def leaky_relu(x, alpha):
        return x if x > 0 else alpha * x

    one_core = vectorize(["float32(float32, float32)", "float64(float64, float64)"])(leaky_relu)
    r = nb12.leaky_relu.grade(one_core, seed=1)
    assert r.status == "failed" and "target='cpu'" in r.message and 'target="parallel"' in r.message, r.line()


def test_a_prange_loop_adding_into_one_array_cell_is_a_race_even_when_the_sum_comes_out_right():
    from numba import njit, prange

    from helpers.problems import nb12

    @njit(parallel=True)
    def sum_of_squares(x):
        acc = np.zeros(1)
        for i in prange(x.size):
            acc[0] += x[i] * x[i]
        return acc[0]

    r = nb12.sum_of_squares.grade(sum_of_squares, seed=1)
    assert r.status == "failed" and "`acc[0] += x[i] * x[i]` inside the prange loop is a race" in r.message, r.line()
