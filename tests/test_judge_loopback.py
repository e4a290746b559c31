"""The judge grades through stand-ins (helpers/exercises/remote.py) for answers that live in the
student's process. Here the student's side (grading/serve.py) runs in this process behind a
loopback channel that sends every request and reply through the wire codec, so each reference
and each catalogued wrong answer of every judged notebook must get the same status and the same
sentence as when graded directly: the judge may not make the checks weaker or their words worse.
"""

import inspect
import json
import linecache

import pytest
from numba import cuda
from test_problems import WRONG, _exec_function, _grade_reference, placeholder, placeholder_kernel

from helpers import _elsewhere, _numba, _wire, env
from helpers.exercises import DevicePipelineExercise, FunctionExercise, KernelExercise, remote
from helpers.exercises.libraries import CudaCExercise
from helpers.grading import workers
from helpers.grading.judge import judgeable, want
from helpers.grading.serve import Server, error_reply
from helpers.problems import MODULES, all_exercises

pytestmark = pytest.mark.usefixtures("progress_file")  # tests/conftest.py

JUDGED = [m for m in MODULES if judgeable([ex for ex in all_exercises() if ex.notebook == m])]
EXERCISES = [ex for ex in all_exercises() if ex.notebook in JUDGED]


def _through_the_wire(value):
    return _wire.decode(json.loads(_wire.dumps(_wire.encode(value))))


class LocalNvrtc:
    """The judge's NVRTC worker, compiling in this process with nothing redirected."""

    def __init__(self, ops):
        self.ops = ops

    def compile(self, **request):
        from helpers import cuda_c

        self.ops.append("nvrtc")
        body = _through_the_wire(request)
        try:
            with _elsewhere.judging(None):
                out = cuda_c.compile(body.pop("src"), **{**body, "options": tuple(body["options"])})
        except cuda_c.CompileError as e:
            return _through_the_wire({"compile_error": str(e), "log": e.log})
        return _through_the_wire({"out": bytes(out)})


class LocalTracer:
    """The judge's tracer process (grading/workers.py), running its handlers in this process."""

    def __init__(self, ops):
        self.ops, self.state = ops, {}

    def request(self, op, **fields):
        self.ops.append(f"judge {op}")
        body = _through_the_wire(fields)
        lines = dict(linecache.cache)  # the rebuilt kernel's lines: the worker's own, never this process's
        try:
            with _elsewhere.judging(None):
                reply = workers.HANDLERS["tracer"][op](body, self.state)
        except Exception as e:  # noqa: BLE001 - as the worker does: the kernel's exception, by name
            raise remote.raised(_through_the_wire(error_reply(e))) from None
        finally:
            linecache.cache.clear()
            linecache.cache.update(lines)
        return _through_the_wire(reply)


class Loopback:
    """The channel of judge.py, with the student's process replaced by a Server in this one."""

    def __init__(self):
        self.server = Server(on_gpu=env.on_gpu())  # on a GPU the checks also launch there, through "gpu"
        self.ops = []
        self.nvrtc = LocalNvrtc(self.ops)  # the judge's own NVRTC process (grading/workers.py), here
        self.tracer = LocalTracer(self.ops)  # and its own tracer process

    def request(self, op, **fields):
        self.ops.append(op)
        body = _through_the_wire(fields)
        try:
            with _elsewhere.judging(None):  # the student's process runs it with nothing redirected
                reply = self.server.handle({**body, "op": op})
        except Exception as e:  # noqa: BLE001 - as the child does: the student's exception, by name
            raise remote.raised(_through_the_wire(error_reply(e))) from None
        return _through_the_wire(reply)

    def stand_in(self, obj, kind):
        return remote.answer_from(self, _through_the_wire(self.server.describe(obj, kind)))


def _judged(ex, answer, seed, options):
    chan = Loopback()
    got = chan.stand_in(answer, want(ex))
    opts = {k: chan.stand_in(v, "function" if callable(v) else "value") for k, v in options.items()}
    with _elsewhere.judging(chan):  # as judge.py grades: CUDA C compiles and GPU launches go to the child
        return ex.grade(got, seed=seed, watchdog=0, **opts), chan


def test_every_notebook_is_judged():
    # notebook 10 last: its checks read addresses, driver enums and cuda.core launches in the student's process
    assert JUDGED == list(MODULES)
    assert len(JUDGED) == 15


@pytest.mark.parametrize("ex", EXERCISES, ids=[ex.id for ex in EXERCISES])
def test_reference_passes_through_the_judge(ex):
    direct = _grade_reference(ex, seed=5)
    options = ex.reference_options() if isinstance(ex, KernelExercise) else {}
    judged, chan = _judged(ex, ex.reference_answer(), 5, options)
    assert judged.status == direct.status == "passed", judged.line()
    assert judged.message == direct.message
    if isinstance(ex, KernelExercise):  # described by the student's process, traced (and launched) by the judge's
        assert "compile" in chan.ops and "judge trace" in chan.ops and "trace" not in chan.ops
        assert "gpu" not in chan.ops and (not env.on_gpu() or "judge gpu" in chan.ops)
    if isinstance(ex, CudaCExercise):
        assert "nvrtc" in chan.ops  # the student's CUDA C was compiled by the judge's NVRTC process
    if getattr(ex, "remote_ok", False):  # the function ran in the student's process
        assert {"pycuda_call", "device_call", "call", "storage_call", "core_launch"} & set(chan.ops)


CASES = [(ex, w) for ex in EXERCISES for w in WRONG[ex.notebook].get(ex.name, [])]


@pytest.mark.parametrize("ex,wrong", CASES, ids=[f"{ex.id}-{w.kind}" for ex, w in CASES])
def test_wrong_answer_gets_the_same_verdict_through_the_judge(ex, wrong):
    direct = ex.grade(wrong.answer, seed=3, **wrong.options)
    judged, _ = _judged(ex, wrong.answer, 3, wrong.options)
    assert judged.status == direct.status == wrong.status, judged.line()
    assert wrong.says in judged.message
    assert judged.message == direct.message


KERNELS = [ex for ex in EXERCISES if isinstance(ex, KernelExercise)]
FUNCTIONS = [ex for ex in EXERCISES if isinstance(ex, FunctionExercise)]


def _same(ex, answer, **options):
    direct = ex.grade(answer, seed=2, **options)
    judged, _ = _judged(ex, answer, 2, options)
    assert (judged.status, judged.message) == (direct.status, direct.message)
    return judged


@pytest.mark.parametrize("ex", KERNELS, ids=[ex.id for ex in KERNELS])
def test_kernel_learner_errors_read_the_same_through_the_judge(ex):
    opts = ex.reference_options()
    assert _same(ex, placeholder_kernel, **opts).status == "not_attempted"
    plain = _numba.python_function(ex.reference)
    assert "@cuda.jit" in _same(ex, plain, **opts).message
    params = list(inspect.signature(plain).parameters)
    assert f"passes {len(params)}" in _same(ex, cuda.jit(_exec_function(params[:-1], "pass")), **opts).message
    assert "device function" in _same(ex, cuda.jit(device=True)(plain), **opts).message
    assert "kernel itself" in _same(ex, 42, **opts).message


@pytest.mark.parametrize("ex", FUNCTIONS, ids=[ex.id for ex in FUNCTIONS])
def test_function_learner_errors_read_the_same_through_the_judge(ex):
    assert _same(ex, placeholder).status == "not_attempted"
    assert "plain Python function" in _same(ex, cuda.jit(ex.reference)).message
    names = list(ex.inputs)
    assert f"passes {len(names)}" in _same(ex, _exec_function(names[:-1], "return 1")).message
    assert "NameError" in _same(ex, _exec_function(names, "return undefined_name")).message


PIPELINES = [ex for ex in EXERCISES if isinstance(ex, DevicePipelineExercise)]


@pytest.mark.parametrize("ex", PIPELINES, ids=[ex.id for ex in PIPELINES])
def test_pipeline_learner_errors_read_the_same_through_the_judge(ex):
    """The learner's host function runs in the student's process with the spy kernel and counted
    copies there; what comes back must give the same sentences (a third parameter with a default is
    still a two-argument function, a list is named as a list, a device result is told to come home)."""
    assert _same(ex, placeholder).status == "not_attempted"
    assert _same(ex, _exec_function(["kernel"], "return None")).status == "error"
    with_default = _exec_function(
        ["kernel", "x", "threads=128"],
        "from numba import cuda\n    d = cuda.to_device(x)\n    o = cuda.device_array_like(d)\n"
        "    kernel[(x.size + threads - 1) // threads, threads](d, o)\n    return o.copy_to_host()",
    )
    assert _same(ex, with_default).status == "passed"
    as_list = _exec_function(
        ["kernel", "x"],
        "from numba import cuda\n    d = cuda.to_device(x)\n    o = cuda.device_array_like(d)\n"
        "    kernel[(x.size + 127) // 128, 128](d, o)\n    return list(o.copy_to_host())",
    )
    assert "should return a NumPy array, but returned list" in _same(ex, as_list).message
    stays = _exec_function(
        ["kernel", "x"],
        "from numba import cuda\n    d = cuda.to_device(x)\n    o = cuda.device_array_like(d)\n"
        "    kernel[(x.size + 127) // 128, 128](d, o)\n    return o",
    )
    assert "device array" in _same(ex, stays).message
    raises = _exec_function(["kernel", "x"], "raise ValueError('no')")
    assert "raised ValueError: no" in _same(ex, raises).message
    assert "remove @cuda.jit" in _same(ex, cuda.jit(ex.reference)).message
