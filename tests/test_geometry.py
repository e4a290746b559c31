"""Launch arithmetic behind notebook 01 and the grid explorer."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")
import numpy as np
import pytest

from helpers import geometry
from helpers.errors import LearnerError


@pytest.mark.parametrize("n, t, blocks", [(1, 32, 1), (32, 32, 1), (33, 32, 2), (70, 32, 3), (1000, 256, 4)])
def test_blocks_for_is_ceiling_division(n, t, blocks):
    assert geometry.blocks_for(n, t) == blocks


def test_five_elements_thirty_two_threads():
    launch = geometry.launch_1d(5, 32)
    assert (launch.threads, launch.idle(), launch.skipped()) == (32, 27, 0)
    assert "27 idle" in launch.describe()


def test_floor_division_skips_the_tail():
    launch = geometry.launch_1d(70, 32, blocks=70 // 32)
    assert launch.skipped() == 6 and launch.idle() == 0
    assert list(np.flatnonzero(launch.owner() == 0)) == [64, 65, 66, 67, 68, 69]
    assert "6 elements NOT handled" in launch.describe()


def test_2d_floor_recipe_skips_rows_and_columns():
    buggy = geometry.launch_2d((20, 37), (16, 16), (37 // 16, 20 // 16))
    owner = buggy.owner()
    assert owner[:16, :32].min() == 1 and owner[16:, :].max() == 0 and owner[:, 32:].max() == 0
    assert buggy.skipped() == 20 * 37 - 16 * 32
    fixed = geometry.launch_2d((20, 37), (16, 16))
    assert fixed.grid == (3, 2) and fixed.skipped() == 0 and fixed.idle() == 48 * 32 - 20 * 37


def test_every_element_has_exactly_one_thread_with_ceiling():
    for shape, block in (((7, 9), (4, 4)), ((1, 100), (32, 1)), ((33, 33), (8, 8))):
        assert geometry.launch_2d(shape, block).owner().max() == 1


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: geometry.launch_1d(0, 32), "n must be a positive whole number, got 0."),
        (lambda: geometry.launch_1d(10, 2048), "threads_per_block=2048 is more than the 1024 a CUDA block can hold."),
        (lambda: geometry.launch_1d(10, 3.5), "threads_per_block must be a positive whole number, got 3.5."),
        (lambda: geometry.launch_2d((4, 4), (64, 32)), "a 64x32 block has 2048 threads, more than the 1024 allowed."),
    ],
)
def test_bad_launches_get_one_sentence(call, message):
    with pytest.raises(LearnerError) as e:
        call()
    assert str(e.value) == message


def test_drawings_mark_idle_and_skipped():
    fig = geometry.draw_launch(geometry.launch_1d(70, 32, blocks=2))
    assert "6 element(s) never handled" in fig.axes[0].get_title()
    fig2 = geometry.draw_launch(geometry.launch_2d((20, 37), (16, 16)))
    assert "0 elements never handled" not in fig2.axes[0].get_title()
    assert "idle threads" in fig2.axes[0].get_title()


def test_explorer_redraws_when_a_control_moves():
    w = geometry.grid_explorer()
    mode, n, rows, cols, tpb, bxy, rule, manual, info, out = w.children
    # What a learner sees in 1D: the 1D sliders and the rule, not the 2D ones or the manual count.
    shown = {c.description for c in (n, rows, cols, tpb, bxy, rule, manual) if c.layout.display != "none"}
    assert shown == {"array length n", "threads per block", "blocks per grid"}
    before = info.value
    rule.value = "floor"
    n.value = 70
    assert info.value != before and "NOT handled" in info.value
    mode.value = 2
    assert "row = blockIdx.y" in info.value and n.layout.display == "none"
    shown = {c.description for c in (n, rows, cols, tpb, bxy, rule, manual) if c.layout.display != "none"}
    assert shown == {"rows", "cols", "block side (x = y)", "blocks per grid"}


def test_floor_division_to_zero_blocks_shows_the_gpus_refusal():
    """n // t is 0 when n < t: the explorer used to draw 1 block; a GPU refuses the launch (Numba raised
    ValueError on the H100), so the text and the picture say so and no element is handled."""
    launch = geometry.launch_1d(20, 32, blocks=20 // 32)
    assert launch.grid == (0, 1) and launch.skipped() == 20
    assert "a GPU refuses a launch with 0 blocks" in launch.describe() and "(n + t - 1) // t" in launch.describe()
    assert "refuses a launch with 0 blocks" in geometry.draw_launch(launch).axes[0].get_title()
    flat = geometry.launch_2d((5, 5), (8, 8), (5 // 8, 5 // 8))
    assert "refuses" in geometry.draw_launch(flat).axes[0].get_title()
    w = geometry.grid_explorer()
    mode, n, rows, cols, tpb, bxy, rule, manual, info, out = w.children
    assert tpb.max == 1024  # a block can hold 1,024 threads
    rule.value, n.value = "floor", 20
    assert "0 blocks" in info.value and "refuses" in info.value


def test_the_text_counts_warps_and_a_partly_filled_last_warp():
    assert "1 warp of 32 per block" in geometry.launch_1d(64, 32).describe()
    assert "2 warps of 32 per block (the last one has 16 threads" in geometry.launch_1d(70, 48).describe()
