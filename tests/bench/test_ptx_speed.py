"""bench/ptx_speed.py's kernels compute the right numbers at small sizes, and say how their blocks ran.

No duration is asserted here (tools/lint_tests.py): the figures are the README's, from running the script.
"""

import pytest

pytest.importorskip("cuda.bindings.nvrtc")

from bench import ptx_speed  # noqa: E402


@pytest.mark.parametrize(
    "row,together",
    [
        (lambda: ptx_speed.saxpy(5000, 1, True), True),
        (lambda: ptx_speed.saxpy(5000, 1, False), False),
        (lambda: ptx_speed.matmul(32, 1, True), False),  # shared memory and barriers: one block at a time
        (lambda: ptx_speed.atomics(700, 1, True), True),
        (lambda: ptx_speed.numba_saxpy(5000, 1, True), True),  # Numba's own PTX, its argument structs in local memory
    ],
)
def test_bench_kernels_are_right(row, together):
    r = row()
    assert r.correct, r
    assert r.whole_grid is together and r.threads > 0
