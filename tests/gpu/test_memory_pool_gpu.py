"""Notebook 08's memory-pool exercise against CuPy itself: every event sequence the check draws,
replayed on a fresh cupy.cuda.MemoryPool, ends with the (used_bytes, total_bytes) of the reference.

Collected by `make test-gpu` (COURSE_MODE=gpu); the CPU suite compares the reference with a model
of CuPy's allocator instead (tests/problems/test_nb08_memory_pool.py).
"""

import numpy as np

import helpers  # noqa: F401 - decides the mode before numba is imported
from helpers.problems import nb08


def _replay_on_cupy(events):
    import cupy as cp

    pool = cp.cuda.MemoryPool()
    arrays = []
    with cp.cuda.using_allocator(pool.malloc):
        for event in events:
            if event[0] == "alloc":
                arrays.append(cp.empty(event[1], dtype=cp.uint8))  # one request of exactly nbytes
            elif event[0] == "free":
                arrays[event[1]] = None  # the last reference: the block goes back to the pool
            else:
                pool.free_all_blocks()
        result = (pool.used_bytes(), pool.total_bytes())
    arrays.clear()
    pool.free_all_blocks()
    return result


def test_pool_reference_matches_cupy_on_the_checks_inputs():
    ex = nb08.pool_after
    cases = list(ex._cases(np.random.default_rng(5)))
    for case in cases:
        assert _replay_on_cupy(case["events"]) == ex.reference(**case), case


def test_a_larger_free_block_is_split_on_cupy():
    """The case the exercise leaves out, so its prompt's caveat is true on the GPU too."""
    assert _replay_on_cupy((("alloc", 4096), ("free", 0), ("alloc", 1000))) == (1024, 4096)
