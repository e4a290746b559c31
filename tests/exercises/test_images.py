"""ImageExercise's 2-D descriptions (helpers/exercises/images.py): pixels never written because the kernel
computed a 1-D index are described on the image, with the 1-D formula recognised and the 2-D one given."""

import pytest
from numba import cuda

from helpers.problems import nb04

pytestmark = pytest.mark.usefixtures("progress_file")  # tests/conftest.py


@cuda.jit
def mirror_grid_1d(img, out):
    col = cuda.grid(1)  # the 1-D index; the row from the thread alone
    row = cuda.threadIdx.y
    rows, cols = out.shape
    if row < rows and col < cols:
        out[row, col] = img[row, cols - 1 - col]


def test_a_1d_index_is_described_on_the_image_with_the_2d_formula():
    r = nb04.mirror.grade(mirror_grid_1d, seed=3)
    assert r.status == "failed" and r.picture is not None, r.line()
    assert "pixels of out were never written on the" in r.message
    assert "`cuda.grid(1)` is the 1-D index, but this launch is a 2-D grid" in r.message
    assert "col, row = cuda.grid(2)" in r.message and "cuda.blockIdx.y * cuda.blockDim.y" in r.message
