"""helpers.mutation.c_answers: the mutants of each CUDA C exercise, with the check's own literals."""

import numpy as np

from helpers.exercises.cuda_run import launch_cases
from helpers.mutation.c_answers import context, mutants
from helpers.mutation.run import SEED
from helpers.problems import nb08


def test_the_context_is_the_checks_first_launch():
    ctx = context(nb08.clamp, SEED)
    values, block = launch_cases(nb08.clamp, np.random.default_rng(SEED))[0]
    assert (ctx.block, ctx.size) == (block, int(values["n"]))
    assert [p.name for p in ctx.params] == ["x", "y", "lo", "hi", "n"]


def test_mutants_are_distinct_and_labelled_uniquely():
    made = list(mutants(nb08.clamp, SEED))
    assert len({m.source for m in made}) == len(made)
    assert len({(m.operator, m.site) for m in made}) == len(made)


def test_a_reduction_is_mutated_part_by_part_and_reduce_can_redo_map():
    made = list(mutants(nb08.l2_norm, SEED))
    assert all(isinstance(m.answer, tuple) and len(m.answer) == 4 for m in made)
    assert any(m.answer[1] == "(a * a) + (b * b)" for m in made)  # squares partial sums: right for one thread only
    assert any(m.site.startswith("identity:") for m in made)
