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


def _controls(box):
    """The explorer's controls by their labels (as a learner finds them), and its info text."""
    controls = {c.description: c for c in box.children if getattr(c, "description", "")}
    info = [c for c in box.children if type(c).__name__ == "HTML"][0]
    return controls, info


def _on_screen(controls):
    return {name for name, c in controls.items() if c.layout.display != "none"} - {"launch"}


def test_explorer_redraws_when_a_control_moves():
    w = geometry.grid_explorer()
    c, info = _controls(w)
    # What a learner sees in 1D: the 1D sliders and the rule, not the 2D ones or the manual count.
    assert _on_screen(c) == {"array length n", "threads per block", "blocks per grid"}
    before = info.value
    c["blocks per grid"].value = "floor"
    c["array length n"].value = 70
    assert info.value != before and "NOT handled" in info.value
    c["launch"].value = 2
    assert "row = blockIdx.y" in info.value and c["array length n"].layout.display == "none"
    assert _on_screen(c) == {"rows", "cols", "block shape", "block side (x = y)", "blocks per grid"}


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
    c, info = _controls(w)
    assert c["threads per block"].max == 1024  # a block can hold 1,024 threads
    c["blocks per grid"].value, c["array length n"].value = "floor", 20
    assert "0 blocks" in info.value and "refuses" in info.value


def test_the_text_counts_warps_and_a_partly_filled_last_warp():
    assert "1 warp of 32 per block" in geometry.launch_1d(64, 32).describe()
    assert "2 warps of 32 per block (the last one has 16 threads" in geometry.launch_1d(70, 48).describe()


# -- warps (issue 13 item 2): CUDA cuts a block into warps of 32 in linear-thread order, x fastest


def test_a_16_by_8_block_is_4_warps_of_2_rows():
    warps = geometry.block_warps((16, 8))
    assert warps.shape == (8, 16)  # [threadIdx.y, threadIdx.x]
    for w in range(4):
        assert np.array_equal(np.flatnonzero((warps == w).all(axis=1)), [2 * w, 2 * w + 1])
    assert geometry.warp_sizes((16, 8)) == [32, 32, 32, 32]


def test_a_10_by_10_block_ends_with_a_warp_of_4_threads():
    warps = geometry.block_warps((10, 10))
    assert geometry.warp_sizes((10, 10)) == [32, 32, 32, 4]
    assert np.argwhere(warps == 3).tolist() == [[9, 6], [9, 7], [9, 8], [9, 9]]  # (y, x): the last 4 threads
    assert warps[3, 1] == 0 and warps[3, 2] == 1  # thread 32 = (x 2, y 3) starts warp 1: x fastest


def _texts(fig):
    return [t.get_text() for t in fig.axes[0].texts]


def test_the_2d_picture_outlines_and_numbers_the_warps():
    from matplotlib.collections import LineCollection

    from helpers.geometry.pictures import warp_grid

    launch = geometry.launch_2d((8, 16), (16, 8))  # one block
    block, warp = warp_grid(launch)
    assert np.array_equal(warp, geometry.block_warps((16, 8))) and (block == 0).all()
    fig = geometry.draw_launch(launch)
    assert sorted(_texts(fig)) == ["w0", "w1", "w2", "w3"]
    (lines,) = [c for c in fig.axes[0].collections if isinstance(c, LineCollection)]
    assert len(lines.get_segments()) == 3 * 16  # 3 borders between 4 warps, 16 threads wide each
    assert "4 warps per block, x fastest" in fig.axes[0].get_title()

    fig = geometry.draw_launch(geometry.launch_2d((20, 20), (10, 10)))  # 4 blocks, each with a partial warp
    assert _texts(fig).count("w3 (4)") == 4
    assert "the last one has 4 of 32 threads" in fig.axes[0].get_title()


def test_idle_threads_stay_in_their_warps():
    from helpers.geometry.pictures import warp_grid

    block, warp = warp_grid(geometry.launch_2d((20, 37), (16, 8)))  # a 3x3 grid covering 24 x 48 cells
    assert block.shape == (24, 48) and (block >= 0).all()
    assert warp[23, 47] == 3 and block[23, 47] == 8  # past the array: the last block's last warp


def test_the_1d_picture_draws_warps_too():
    fig = geometry.draw_launch(geometry.launch_1d(70, 48))  # 2 blocks of 48 threads: warps of 32 and 16
    assert _texts(fig).count("w0") == 2 and _texts(fig).count("w1 (16)") == 2
    assert "2 warps per block; the last one has 16 of 32 threads" in fig.axes[0].get_title()
    fig = geometry.draw_launch(geometry.launch_1d(5, 32))
    assert _texts(fig).count("w0") == 1 and "1 warp per block" in fig.axes[0].get_title()
    fig = geometry.draw_launch(geometry.launch_1d(n=12, threads_per_block=4))  # notebook 01, section 2 says so
    assert _texts(fig).count("w0 (4)") == 3 and "1 warp per block, with only 4 of its 32" in fig.axes[0].get_title()


def test_the_explorer_draws_non_square_blocks_up_to_1024_threads(monkeypatch):
    from helpers.geometry import explorer

    drawn = []
    monkeypatch.setattr(explorer, "draw_launch", lambda launch: drawn.append(launch) or "picture")
    w = geometry.grid_explorer(dims=2)
    c, info = _controls(w)
    c["block side (x = y)"].value = 4
    c["block shape"].value = "free"  # x by y starts from the square on screen
    assert (c["block x (blockDim.x)"].value, c["block y (blockDim.y)"].value) == (4, 4)
    assert _on_screen(c) == {
        "rows",
        "cols",
        "block shape",
        "block x (blockDim.x)",
        "block y (blockDim.y)",
        "blocks per grid",
    }
    c["block x (blockDim.x)"].value, c["block y (blockDim.y)"].value = 16, 8
    assert drawn[-1].block == (16, 8) and drawn[-1].grid == (2, 3)  # 20 x 20 array: ceil(20/16), ceil(20/8)
    assert "(2, 3) blocks of (16, 8) threads" in info.value and "4 warps of 32 per block" in info.value
    c["blocks per grid"].value = "floor"
    assert drawn[-1].grid == (1, 2) and "NOT handled" in info.value  # floor in each dimension on its own
    count = len(drawn)
    c["block x (blockDim.x)"].value, c["block y (blockDim.y)"].value = 64, 32
    assert len(drawn) == count + 1  # (64, 8) fits; (64, 32) is not drawn
    assert "A (64, 32) block has 2048 threads, more than the 1024 a CUDA block can hold: make block x or " in info.value
    c["block y (blockDim.y)"].value = 16
    assert drawn[-1].block == (64, 16) and "more than the 1024" not in info.value
    c["block shape"].value = "square"
    assert drawn[-1].block == (4, 4) and c["block x (blockDim.x)"].layout.display == "none"
