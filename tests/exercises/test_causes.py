"""What a learner's source shows (helpers/exercises/causes.py): floor division of values, a 1-D index,
a capped grid-stride loop, each quoted as written; index arithmetic and ordinary loops are left alone."""

from helpers.exercises.causes import capped_loop, floor_divisions, one_d_index

KERNEL = """
def k(x, out):
    i = cuda.grid(1)
    half = i // 2
    s = WARP // 2
    buf[lane] += buf[lane + s]
    s //= 2
    out[i] = x[half // 1]
"""


def test_floor_division_of_values_is_found_as_written():
    assert floor_divisions("def k(x, out):\n    out[i] = x[i] // 4\n") == ["x[i] // 4"]
    through_a_name = "def k(img, out):\n    avg = total // 9\n    out[r, c] = avg\n"
    assert floor_divisions(through_a_name) == ["total // 9"]
    assert floor_divisions("def f(nbytes, ms):\n    return nbytes // (ms * 1e-3) // 1e9\n", kernel=False) == [
        "nbytes // (ms * 1e-3) // 1e9"  # the learner's 1e-3, not ast's 0.001
    ]


def test_index_arithmetic_is_not_floor_division_of_values():
    assert floor_divisions(KERNEL) == []
    assert floor_divisions("def k(x, out):\n    row = i // cols\n    out[row, i % cols] = x[i]\n") == []


def test_in_a_function_every_floor_division_outside_an_index_counts():
    assert floor_divisions("def f(a, b):\n    return a // b\n", kernel=False) == ["a // b"]
    assert floor_divisions("def f(x):\n    return x[len(x) // 2]\n", kernel=False) == []


def test_a_1d_index_is_recognised_as_written():
    assert one_d_index("def k(img, out):\n    i = cuda.grid(1)\n") == "cuda.grid(1)"
    row_from_x = (
        "def k(img, out):\n"
        "    col = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x\n"
        "    row = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.y\n"
    )
    assert one_d_index(row_from_x) == "row = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.y"


def test_2d_indices_are_not_a_1d_index():
    assert one_d_index("def k(img, out):\n    col, row = cuda.grid(2)\n") is None
    both = "def k(A):\n    row = cuda.blockIdx.y * T + ty\n    col = cuda.blockIdx.x * T + tx\n"
    assert one_d_index(both) is None
    assert one_d_index("def k(A):\n    tx = cuda.threadIdx.x\n") is None  # no block index at all
    assert one_d_index("not python (") is None


def test_a_capped_grid_stride_loop_is_found_as_written():
    capped = "def k(x, out):\n    for i in range(s, min(x.size, 4 * cuda.blockDim.x), g):\n        out[i] = x[i]\n"
    assert capped_loop(capped) == "min(x.size, 4 * cuda.blockDim.x)"
    assert capped_loop("for i in range(s, 4 * cuda.blockDim.x * cuda.gridDim.x, g): pass") == (
        "4 * cuda.blockDim.x * cuda.gridDim.x"
    )


def test_loops_to_the_end_and_neighbourhood_loops_are_not_capped():
    assert capped_loop("for i in range(s, x.size, g): pass") is None
    assert capped_loop("for j in range(lane, A.shape[1], WARP): pass") is None  # the 1 is an index
    assert capped_loop("for dr in range(-1, 2): pass") is None
    assert capped_loop("for k in range(0, 9, 3): pass") is None  # a constant step: not grid-stride
