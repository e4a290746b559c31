"""helpers.ptx.records: what the source says of the kernel's parameters, where PTX says only ".u64"."""

import numpy as np
import pytest

from helpers import ptx
from helpers.errors import LearnerError
from helpers.ptx.records import pointee_problem, pointee_types

CLAMP = """
extern "C" __global__ void clamp(const float* __restrict__ x, float *y, float lo, float hi, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = fminf(fmaxf(x[i], lo), hi);
}
"""


def test_pointees_are_read_from_the_declaration():
    assert pointee_types(CLAMP, "clamp") == [("float", 4), ("float", 4), None, None, None]
    assert pointee_types("__global__ void k(const unsigned int* a, long long *b, T* c)", "k") == [
        ("unsigned int", 4),
        ("long long", 8),
        None,  # a template parameter: nothing to compare
    ]


def test_only_a_different_element_size_is_a_problem():
    assert pointee_problem(0, "x", np.zeros(3, np.float32), CLAMP, "clamp") is None
    assert "float64 array" in pointee_problem(0, "x", np.zeros(3), CLAMP, "clamp")
    assert pointee_problem(2, "lo", np.zeros(3), CLAMP, "clamp") is None  # not a pointer: the scalar check's job
    assert "integer" not in pointee_problem(0, "x", np.zeros(3, np.int32), CLAMP, "clamp")  # same size, other kind
    unsigned = "__global__ void k(unsigned int* c, int n) {}"
    assert pointee_problem(0, "c", np.zeros(3, np.int32), unsigned, "k") is None


def test_a_float64_array_for_float_star_is_named_not_called_a_race():
    args = (np.linspace(-2, 2, 300), np.zeros(300), np.float32(-0.5), np.float32(0.5), np.int32(300))
    with pytest.raises(
        LearnerError, match=r"\(x\) is a float64 array, but the kernel's x points to float .*astype\(np\.float32\)"
    ):
        ptx.trace(CLAMP, "clamp", 3, 128, *args)
    good = (np.linspace(-2, 2, 300, dtype=np.float32), np.zeros(300, np.float32), *args[2:])
    assert not ptx.trace(CLAMP, "clamp", 3, 128, *good).verdicts
