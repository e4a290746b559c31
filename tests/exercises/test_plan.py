"""The check design rules, over every kernel exercise: launch shapes the check chooses, sizes
that include an exact multiple of the block, one past it and more than 1,024 threads, 2-D shapes
that are not square and differ by more than a tile, and everything random per run."""

import numpy as np
import pytest

from helpers.exercises import KernelExercise
from helpers.exercises.launch import Grid2D, OneBlockPerRow, launch_for
from helpers.exercises.plan import BEYOND_ONE_BLOCK, check_plan
from helpers.problems import all_exercises

KERNELS = [ex for ex in all_exercises() if isinstance(ex, KernelExercise)]
SEEDS = range(12)


def plans(ex, seeds=SEEDS):
    launch = ex.launch.example if ex.launch.kind == "learner" else None
    return [check_plan(ex, launch_for(ex, launch), np.random.default_rng(s)) for s in seeds]


def _shape(ex, n):
    return tuple(ex.launch.shape(n)) if isinstance(ex.launch, Grid2D) and ex.launch.shape else None


@pytest.mark.parametrize("ex", KERNELS, ids=lambda ex: ex.id)
def test_the_check_launches_two_shapes_or_says_why_the_exercise_fixes_one(ex):
    for plan in plans(ex):
        blocks = {c.block for c in plan}
        grids = {c.grid for c in plan}
        assert len(grids) >= 2 or ex.launch.fixed_by, f"{ex.id}: every case launches the same grid {grids}"
        if ex.launch.kind != "learner":
            assert len(blocks) >= 2 or ex.launch.fixed_by, (
                f"{ex.id}: one block shape {blocks}; give the launch rule more shapes, or fixed_by= the reason"
            )


@pytest.mark.parametrize("ex", KERNELS, ids=lambda ex: ex.id)
def test_sizes_are_random_per_run(ex):
    drawn = {tuple(c.n for c in plan) for plan in plans(ex)}
    assert len(drawn) > 1, f"{ex.id}: the same sizes for every seed: {drawn}"


ONE_D = [ex for ex in KERNELS if not isinstance(ex.launch, Grid2D) and ex.launch.kind != "learner"]


@pytest.mark.parametrize("ex", ONE_D, ids=lambda ex: ex.id)
def test_1d_sizes_hit_a_multiple_one_past_it_and_need_a_grid(ex):
    for plan in plans(ex):
        per_pass = [int(np.prod(c.block)) * (int(np.prod(c.grid)) if ex.launch.kind == "fixed" else 1) for c in plan]
        # One block per row: the block walks along a row, so the row's length meets the block.
        length = [ex.args[0].shape(c.n)[1] if isinstance(ex.launch, OneBlockPerRow) else c.n for c in plan]
        exact = any(n % u == 0 for n, u in zip(length, per_pass))
        past = any(n % u == 1 for n, u in zip(length, per_pass))
        small = any(n < int(np.prod(c.block)) for n, c in zip(length, plan))
        assert exact and past and small, f"{ex.id}: {plan} lacks a size below a block, a multiple, or one past"
        if ex.launch.kind == "per_element" and not ex.sizes:
            threads = max(int(np.prod(c.grid)) * int(np.prod(c.block)) for c in plan)
            assert threads > BEYOND_ONE_BLOCK, f"{ex.id}: no case needs more than one block's worth of threads"


TWO_D = [ex for ex in KERNELS if isinstance(ex.launch, Grid2D)]


@pytest.mark.parametrize("ex", TWO_D, ids=lambda ex: ex.id)
def test_2d_shapes_are_mismatched_and_meet_the_block_edges(ex):
    for plan in plans(ex):
        shapes = [_shape(ex, c.n) for c in plan]
        assert all(r != c for r, c in shapes), f"{ex.id}: a square shape in {shapes}"
        tiles = [ex.launch.tile if not ex.launch.more else c.block for c in plan]
        # Swapped x and y must show: one shape's sides differ by more than a tile.
        assert any(abs(c - r) > max(t) for (r, c), t in zip(shapes, tiles)), f"{ex.id}: sides too close in {shapes}"
        multiple = any(r % t[1] == 0 or c % t[0] == 0 for (r, c), t in zip(shapes, tiles))
        past = any(r % t[1] == 1 or c % t[0] == 1 for (r, c), t in zip(shapes, tiles))
        assert multiple and past, f"{ex.id}: no side at, or one past, a multiple of the tile in {shapes}"
