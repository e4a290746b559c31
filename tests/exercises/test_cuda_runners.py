"""The GPU path of CUDA C exercises judges the numbers as the CPU path does: the same inputs,
the same mistake sentences, and a traced CPU run first for races and stray reads (issue 14: on
the H100, nb08/nb09 wrong answers got "element k is wrong" instead of their diagnosis).

The GPU is played by a stand-in `run_gpu` that returns chosen outputs, so this runs anywhere;
tests/gpu/test_wrong_numbers_gpu.py runs the real thing."""

import numpy as np  # noqa: E402
import pytest  # noqa: E402

import helpers  # noqa: E402, F401
from helpers import env  # noqa: E402
from helpers.problems import nb08, nb09  # noqa: E402

EXERCISES = [nb08.leaky_relu, nb08.l2_norm, nb08.clamp, nb09.axpby, nb09.lincomb]


def fake_gpu(monkeypatch, ex, output):
    """Pretend to be on a GPU whose run of the answer gives output(values)."""
    seen = []

    def run_gpu(answer, values, block=128):
        seen.append(values)
        return output(values), True

    monkeypatch.setattr(env, "on_gpu", lambda: True)
    monkeypatch.setattr(ex, "run_gpu", run_gpu)
    return seen


@pytest.mark.parametrize("ex", EXERCISES, ids=lambda e: e.id)
def test_each_known_mistake_gets_its_sentence_on_the_gpu_path(ex, monkeypatch, progress_file):
    for wrong, sentence in ex.mistakes:
        seen = fake_gpu(monkeypatch, ex, wrong)
        r = ex.grade(ex.reference, seed=5)
        assert seen, "the GPU stand-in was never called"
        assert r.status == "failed" and sentence in r.message, r.message


@pytest.mark.parametrize("ex", EXERCISES, ids=lambda e: e.id)
def test_right_numbers_pass_on_the_gpu_path_with_the_inputs_the_oracle_saw(ex, monkeypatch, progress_file):
    seen = fake_gpu(monkeypatch, ex, ex.oracle)
    r = ex.grade(ex.reference, seed=5)
    assert r.status == "passed" and "on the GPU" in r.message, r.message
    n = next(len(v) for v in seen[0].values() if isinstance(v, np.ndarray))
    assert f"n = {n}" in r.message


def test_unknown_wrong_numbers_name_the_first_bad_element(monkeypatch, progress_file):
    ex = nb08.clamp

    def off_by_one(values):
        y = ex.oracle(values).copy()
        y[7] += 1
        return y

    fake_gpu(monkeypatch, ex, off_by_one)
    r = ex.grade(ex.reference, seed=5)
    assert r.status == "failed" and "element 7 is" in r.message, r.message


def test_a_guard_band_overwrite_on_the_gpu_is_a_missing_bounds_check(monkeypatch, progress_file):
    ex = nb09.axpby
    monkeypatch.setattr(env, "on_gpu", lambda: True)
    monkeypatch.setattr(ex, "run_gpu", lambda answer, values, block=128: (ex.oracle(values), False))
    r = ex.grade(ex.reference, seed=5)
    assert r.status == "failed" and "past the end" in r.message, r.message


def test_a_race_the_gpu_numbers_hide_is_found_by_the_traced_cpu_run(monkeypatch, progress_file):
    ex = nb08.clamp
    racy = ex.reference.replace("blockIdx.x * blockDim.x + threadIdx.x", "threadIdx.x")
    fake_gpu(monkeypatch, ex, ex.oracle)  # a GPU whose numbers happen to look right
    r = ex.grade(racy, seed=5)
    assert r.status == "failed" and "Race on y" in r.message, r.message


def test_a_wrong_identity_is_named_whatever_the_gpu_does_with_it(monkeypatch, progress_file):
    """CuPy adds the identity once per thread (on the H100, identity 1 gave 26.7 for 12.3)."""
    ex = nb08.l2_norm

    def cupy_like(answer, values, block=128):
        total = float(np.sum(values["x"].astype(np.float64) ** 2)) + 512 * float(answer[3])
        return np.asarray(np.sqrt(total), dtype=np.float32), True

    monkeypatch.setattr(env, "on_gpu", lambda: True)
    monkeypatch.setattr(ex, "run_gpu", cupy_like)
    r = ex.grade(("x * x", "a + b", "y = sqrt(a)", "1"), seed=3)
    assert r.status == "failed" and "identity" in r.message, r.message
    assert ex.grade(ex.reference, seed=3).status == "passed"
