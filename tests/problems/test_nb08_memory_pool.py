"""Notebook 08's memory-pool exercise: the reference agrees with a model of CuPy's own allocator on every
input the check draws, and its rounding is CuPy's (tests/gpu/test_memory_pool_gpu.py replays the same events on a
real CuPy pool)."""

import importlib.util
import json
from pathlib import Path

import numpy as np
import pytest

from helpers.problems import nb08


class _CupyPool:
    """CuPy's SingleDeviceMemoryPool (cupy/cuda/memory.pyx v14.2.0) on paper: best fit among the free chunks,
    a larger chunk is split, neighbouring free pieces merge again, free_all_blocks() frees unsplit free chunks."""

    def __init__(self):
        self.segments = []  # one list per cudaMalloc, its chunks [size, in_use] in address order
        self.arrays = []  # (segment, chunk) per array, or None once freed
        self.splits = 0

    def malloc(self, nbytes):
        size = nb08._round_size(nbytes)
        fits = [(c[0], s, c) for s in self.segments for c in s if not c[1] and c[0] >= size]
        if fits:
            _, seg, chunk = min(fits, key=lambda f: f[0])
            if chunk[0] > size:
                self.splits += 1
                seg.insert(seg.index(chunk) + 1, [chunk[0] - size, False])
                chunk[0] = size
            chunk[1] = True
        else:
            seg, chunk = [[size, True]], None
            chunk = seg[0]
            self.segments.append(seg)
        self.arrays.append((seg, chunk))

    def free(self, k):
        seg, chunk = self.arrays[k]
        self.arrays[k] = None
        chunk[1] = False
        i = next(j for j, c in enumerate(seg) if c is chunk)
        if i + 1 < len(seg) and not seg[i + 1][1]:
            chunk[0] += seg.pop(i + 1)[0]
        if i > 0 and not seg[i - 1][1]:
            seg[i - 1][0] += seg.pop(i)[0]

    def free_all_blocks(self):
        self.segments = [s for s in self.segments if not (len(s) == 1 and not s[0][1])]

    def used_bytes(self):
        return sum(c[0] for s in self.segments for c in s if c[1])

    def total_bytes(self):
        return sum(c[0] for s in self.segments for c in s)


def _replay(events):
    pool = _CupyPool()
    for event in events:
        if event[0] == "alloc":
            pool.malloc(event[1])
        elif event[0] == "free":
            pool.free(event[1])
        else:
            pool.free_all_blocks()
    return (pool.used_bytes(), pool.total_bytes()), pool.splits


def test_pool_reference_agrees_with_cupys_allocator_on_every_drawn_input():
    ex = nb08.pool_after
    cases = list(ex._cases(np.random.default_rng(11)))
    assert len(cases) > 200
    for case in cases:
        (used, held), splits = _replay(case["events"])
        assert splits == 0, case  # the model leaves splitting out: the check must never need it
        assert ex.reference(**case) == (used, held), case


def test_pool_model_is_limited_to_same_size_reuse():
    """Where a free block is larger than the request, CuPy splits it and the simple model would be wrong:
    the check's events never contain that (above), and the prompt says so."""
    events = (("alloc", 4096), ("free", 0), ("alloc", 1000))
    assert _replay(events)[0] == (1024, 4096)
    assert nb08.pool_after.reference(events) == (1024, 5120)
    assert "split" in nb08.pool_after.prompt


@pytest.mark.skipif(importlib.util.find_spec("cupy") is None, reason="CuPy is not installed in this environment")
def test_rounding_is_cupys():
    from cupy.cuda import memory  # importable without a GPU: _round_size is plain arithmetic

    for n in (1, 4, 511, 512, 513, 1000, 4096, 4097, 10**6 + 3):
        assert nb08._round_size(n) == memory._round_size(n)


def _notebook(kind):
    nb = json.loads((Path(__file__).resolve().parents[2] / "solutions" / "08_cupy.ipynb").read_text())
    return ["".join(c["source"]) for c in nb["cells"] if c["cell_type"] == kind]


def test_section_3_states_the_rounding_the_exercise_checks():
    text = "\n".join(_notebook("markdown"))
    assert f"multiple of {nb08.ALLOCATION_UNIT} bytes" in text
    assert "splitting a larger one" in text  # what the exercise's model leaves out, said where the rules are


def test_the_matmul_timing_is_gpu_only_and_synchronizes_before_the_clock():
    (cell,) = [c for c in _notebook("code") if "a_d @ b_d" in c]
    assert cell.startswith("if helpers.gpu_only(")
    assert "median_ms(lambda: a_d @ b_d, sync)" in cell  # median_ms warms up and synchronizes before the clock
    assert "2 * n**3" in cell
