"""Wrong answers for helpers/problems/nb12.py (Numba on the CPU, the crossover)."""

import numpy as np
from numba import njit, prange, vectorize

from . import Wrong


# -- sum_of_squares: every way of not using the cores, and a wrong sum
def plain_sum_of_squares(x):
    total = 0.0
    for i in range(x.size):
        total += x[i] * x[i]
    return total


serial_sum_of_squares = njit(plain_sum_of_squares)  # the myth: @njit alone is one core
range_sum_of_squares = njit(parallel=True)(plain_sum_of_squares)  # parallel=True but a range loop


@njit(parallel=True)
def unsquared_sum(x):
    total = 0.0
    for i in prange(x.size):
        total += x[i]
    return total


@njit(parallel=True)
def float32_sum_of_squares(x):
    total = np.float32(0.0)  # a float32 accumulator: x is float64, so is the answer
    for i in prange(x.size):
        total += np.float32(x[i] * x[i])
    return total


# -- leaky_relu
def _leaky(x, alpha):
    return x if x > 0 else alpha * x


def _relu(x, alpha):
    return x if x > 0 else 0.0 * alpha


def _gpu_only_rows(rows):
    """Compares the kernel alone with the CPU (forgets the transfers)."""
    answer = None
    for row in sorted(rows, key=lambda r: r["n"], reverse=True):
        if row["gpu_kernel_ms"] >= row["cpu_ms"]:
            break
        answer = row["n"]
    return answer


def _first_win(rows):
    for row in sorted(rows, key=lambda r: r["n"]):
        if row["gpu_total_ms"] < row["cpu_ms"]:
            return row["n"]
    return None


def _last_cpu_win(rows):
    """Off by one row: the largest size the CPU still wins."""
    answer = None
    for row in sorted(rows, key=lambda r: r["n"]):
        if row["gpu_total_ms"] >= row["cpu_ms"]:
            answer = row["n"]
    return answer


WRONG = {
    "parallel_loops": [
        Wrong("thinks parallel=True is enough", 1, "range"),
        Wrong("counts cores", 2, "not of cores"),
        Wrong("unknown", 5, "not right"),
        Wrong("a float for a count", 0.0, "a whole number (int): write 0"),
    ],
    "leaky_relu": [
        Wrong("np.vectorize", np.vectorize(_leaky), "Python loop in disguise"),
        Wrong("not a ufunc", _leaky, "not a ufunc"),
        Wrong("plain relu", vectorize(["float32(float32, float32)", "float64(float64, float64)"])(_relu), "plain ReLU"),
        Wrong("float64 only", vectorize(["float64(float64, float64)"], target="parallel")(_leaky), "float32(float32"),
        Wrong("one input", vectorize(["float64(float64)"])(lambda x: x), "takes two"),
    ],
    "sum_of_squares": [
        Wrong("plain Python", plain_sum_of_squares, "plain Python function"),
        Wrong("serial @njit", serial_sum_of_squares, "one core"),
        Wrong("parallel=True with range", range_sum_of_squares, "parfor count 0"),
        Wrong("not squared", unsquared_sum, "square each element"),
        Wrong("float32 accumulator", float32_sum_of_squares, "the difference is float32 rounding"),
    ],
    "gpu_wins_from": [
        Wrong("kernel only", _gpu_only_rows, "kernel alone"),
        Wrong("first win", _first_win, "loses again"),
        Wrong("last CPU win", _last_cpu_win, "returned"),
        Wrong("hard-coded", lambda rows: 65536, "hard-coded"),
    ],
}
WRONG_GPU = {}
