"""The judge grades through stand-ins (helpers/exercises/remote.py) for answers that live in the
student's process. Here the student's side (grading/serve.py) runs in this process behind a
loopback channel that sends every request and reply through the wire codec, so each reference
and each catalogued wrong answer of every judged notebook must get the same status and the same
sentence as when graded directly: the judge may not make the checks weaker or their words worse.
"""

import inspect

import pytest
from numba import cuda

from helpers import _numba, env
from helpers.exercises import DevicePipelineExercise, FunctionExercise, KernelExercise
from helpers.exercises.libraries import CudaCExercise
from helpers.grading.judge import judgeable
from helpers.problems import MODULES, all_exercises
from support.catalogue import WRONG, function_with, grade_reference, placeholder, placeholder_kernel
from support.loopback import grade_judged

pytestmark = pytest.mark.usefixtures("progress_file")  # tests/conftest.py

JUDGED = [m for m in MODULES if judgeable([ex for ex in all_exercises() if ex.notebook == m])]
EXERCISES = [ex for ex in all_exercises() if ex.notebook in JUDGED]


def test_every_notebook_is_judged():
    # notebook 10 last: its checks read addresses, driver enums and cuda.core launches in the student's process
    assert JUDGED == list(MODULES)
    assert len(JUDGED) == 15


@pytest.mark.parametrize("ex", EXERCISES, ids=[ex.id for ex in EXERCISES])
def test_reference_passes_through_the_judge(ex):
    direct = grade_reference(ex, seed=5)
    options = ex.reference_options() if isinstance(ex, KernelExercise) else {}
    judged, chan = grade_judged(ex, ex.reference_answer(), 5, options)
    assert judged.status == direct.status == "passed", judged.line()
    assert judged.message == direct.message
    if isinstance(ex, KernelExercise):  # described by the child at check(), traced (and launched) by the judge
        assert "judge trace" in chan.ops and "trace" not in chan.ops and "compile" not in chan.ops
        assert "gpu" not in chan.ops and (not env.on_gpu() or "judge gpu" in chan.ops)
    if isinstance(ex, CudaCExercise):
        assert "nvrtc" in chan.ops  # the student's CUDA C was compiled by the judge's NVRTC process
    if getattr(ex, "remote_ok", False):  # the function ran in the student's process
        assert {"pycuda_call", "device_call", "call", "storage_call", "core_launch"} & set(chan.ops)


CASES = [(ex, w) for ex in EXERCISES for w in WRONG[ex.notebook].get(ex.name, [])]


@pytest.mark.parametrize("ex,wrong", CASES, ids=[f"{ex.id}-{w.kind}" for ex, w in CASES])
def test_wrong_answer_gets_the_same_verdict_through_the_judge(ex, wrong):
    direct = ex.grade(wrong.answer, seed=3, **wrong.options)
    judged, _ = grade_judged(ex, wrong.answer, 3, wrong.options)
    assert judged.status == direct.status == wrong.status, judged.line()
    assert wrong.says in judged.message
    assert judged.message == direct.message


KERNELS = [ex for ex in EXERCISES if isinstance(ex, KernelExercise)]
FUNCTIONS = [ex for ex in EXERCISES if isinstance(ex, FunctionExercise)]


def _same(ex, answer, **options):
    direct = ex.grade(answer, seed=2, **options)
    judged, _ = grade_judged(ex, answer, 2, options)
    assert (judged.status, judged.message) == (direct.status, direct.message)
    return judged


@pytest.mark.parametrize("ex", KERNELS, ids=[ex.id for ex in KERNELS])
def test_kernel_learner_errors_read_the_same_through_the_judge(ex):
    opts = ex.reference_options()
    assert _same(ex, placeholder_kernel, **opts).status == "not_attempted"
    plain = _numba.python_function(ex.reference)
    assert "@cuda.jit" in _same(ex, plain, **opts).message
    params = list(inspect.signature(plain).parameters)
    assert f"passes {len(params)}" in _same(ex, cuda.jit(function_with(params[:-1], "pass")), **opts).message
    assert "device function" in _same(ex, cuda.jit(device=True)(plain), **opts).message
    assert "kernel itself" in _same(ex, 42, **opts).message


@pytest.mark.parametrize("ex", FUNCTIONS, ids=[ex.id for ex in FUNCTIONS])
def test_function_learner_errors_read_the_same_through_the_judge(ex):
    assert _same(ex, placeholder).status == "not_attempted"
    assert "plain Python function" in _same(ex, cuda.jit(ex.reference)).message
    names = list(ex.inputs)
    assert f"passes {len(names)}" in _same(ex, function_with(names[:-1], "return 1")).message
    assert "NameError" in _same(ex, function_with(names, "return undefined_name")).message


PIPELINES = [ex for ex in EXERCISES if isinstance(ex, DevicePipelineExercise)]


@pytest.mark.parametrize("ex", PIPELINES, ids=[ex.id for ex in PIPELINES])
def test_pipeline_learner_errors_read_the_same_through_the_judge(ex):
    """The learner's host function runs in the student's process with the spy kernel and counted
    copies there; what comes back must give the same sentences (a third parameter with a default is
    still a two-argument function, a list is named as a list, a device result is told to come home)."""
    assert _same(ex, placeholder).status == "not_attempted"
    assert _same(ex, function_with(["kernel"], "return None")).status == "error"
    with_default = function_with(
        ["kernel", "x", "threads=128"],
        "from numba import cuda\n    d = cuda.to_device(x)\n    o = cuda.device_array_like(d)\n"
        "    kernel[(x.size + threads - 1) // threads, threads](d, o)\n    return o.copy_to_host()",
    )
    assert _same(ex, with_default).status == "passed"
    as_list = function_with(
        ["kernel", "x"],
        "from numba import cuda\n    d = cuda.to_device(x)\n    o = cuda.device_array_like(d)\n"
        "    kernel[(x.size + 127) // 128, 128](d, o)\n    return list(o.copy_to_host())",
    )
    assert "should return a NumPy array, but returned list" in _same(ex, as_list).message
    stays = function_with(
        ["kernel", "x"],
        "from numba import cuda\n    d = cuda.to_device(x)\n    o = cuda.device_array_like(d)\n"
        "    kernel[(x.size + 127) // 128, 128](d, o)\n    return o",
    )
    assert "device array" in _same(ex, stays).message
    raises = function_with(["kernel", "x"], "raise ValueError('no')")
    assert "raised ValueError: no" in _same(ex, raises).message
    assert "remove @cuda.jit" in _same(ex, cuda.jit(ex.reference)).message
