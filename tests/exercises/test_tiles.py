"""helpers.exercises.tiles: a tile-kernel exercise names a wrong answer by the output it matches, refuses what
is not CUDA C in one sentence, and passes the reference run from its PTX (nb18.wmma_gemm is the course's one)."""

from __future__ import annotations

import numpy as np

from helpers.exercises.tiles import TileKernelExercise
from helpers.problems import nb18


def _values():
    return nb18._inputs(np.random.default_rng(0), False)[0]


def test_a_known_mistake_gets_its_sentence_and_anything_else_the_first_wrong_element():
    ex = TileKernelExercise(oracle=nb18._gemm, mistakes=((nb18._no_c, "no C here."),))
    v = _values()
    assert ex._judge(v, nb18._no_c(v), "here", "x").message == "no C here."
    got = nb18._gemm(v)
    got[17, 3] += 1
    g = ex._judge(v, got, "here", "x")
    assert g.status == "failed" and g.message.startswith("C[17, 3] is ") and "tile row 1, column 0" in g.message
    assert ex._judge(v, nb18._gemm(v), "here", "x").status == "passed"


def test_an_answer_that_is_not_a_string_is_refused_in_one_sentence():
    r = nb18.wmma_gemm.grade(42)
    assert r.status == "failed" and "give the CUDA C as a string, not int" in r.message


def test_the_reference_passes_run_from_its_ptx():
    r = nb18.wmma_gemm.grade(nb18._WMMA_GEMM_SRC, seed=1)
    assert r.status == "passed" and "M = 32, N = 48, K = 64" in r.message and "K = 32784" in r.message
