"""The judge grades through stand-ins (helpers/grading/remote.py) for answers that live in the
student's process. Here the student's side (grading/serve.py) runs in this process behind a
loopback channel that sends every request and reply through the wire codec, so each reference
and each catalogued wrong answer of every judged notebook must get the same status and the same
sentence as when graded directly: the judge may not make the checks weaker or their words worse.
"""

import inspect
import linecache

import numpy as np
import pytest
from numba import cuda

from helpers import _numba, env
from helpers.exercises import DevicePipelineExercise, FunctionExercise, KernelExercise
from helpers.exercises.libraries import CudaCExercise
from helpers.grading.executor import JudgedExecutor
from helpers.grading.judge import judgeable
from helpers.problems import MODULES, all_exercises
from support.catalogue import WRONG, function_with, grade_reference, placeholder, placeholder_kernel
from support.loopback import Loopback, grade_judged, through_the_wire

pytestmark = pytest.mark.usefixtures("progress_file")  # tests/conftest.py

JUDGED = [m for m in MODULES if judgeable([ex for ex in all_exercises() if ex.notebook == m])]
EXERCISES = [ex for ex in all_exercises() if ex.notebook in JUDGED]


def test_every_notebook_is_judged():
    # notebook 10 last: its checks read addresses, driver enums and cuda.core launches in the student's process
    assert JUDGED == list(MODULES)
    assert len(JUDGED) == 19  # notebooks 01-19


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
    if getattr(ex, "remote_ok", False):  # the function ran in the student's process (14's and 16's: the judge's)
        ran = {"pycuda_call", "judge library_call", "judge stream_run", "call", "storage_call", "core_launch"}
        assert ran & set(chan.ops)
    if ex.notebook == "nb16":  # recorded by the judge's worker: the student's process never ran it
        assert "judge stream_run" in chan.ops and not set(chan.ops) - {"judge stream_run"}


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


class Recorder(Loopback):
    """A student's process that keeps every input the judge sends it."""

    def __init__(self):
        super().__init__()
        self.seen = []

    def request(self, op, **fields):
        if op == "trace":
            self.seen.append([a.copy() for a in fields["args"]])
        return super().request(op, **fields)


@cuda.jit
def _refused_vector_add(a, b, out):  # Numba refuses the list: traced in the student's process, with the inputs
    i = cuda.grid(1)
    if i < out.size:
        tmp = [a[i]]
        out[i] = tmp[0] + b[i]


@cuda.jit
def _writes_nothing(a, b, out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = 0.0


_TABLE = (
    "def vector_add(a, b, out):\n    i = cuda.grid(1)\n    if i < out.size:\n        off = 0\n"
    "        for k in range(len(SIZES)):\n            if SIZES[k] == out.size:\n                out[i] = ANS[off + i]\n"
    "            off += SIZES[k]\n"
)


def test_a_check_after_the_student_process_saw_the_inputs_gets_fresh_ones(monkeypatch):
    """A first check whose kernel is traced in the student's process shows it the inputs; a second check
    describing a kernel whose table holds those outputs (any size) must not pass on them."""
    from helpers.compile_check import trust
    from helpers.grading.judge import Judge
    from helpers.problems import nb02

    monkeypatch.setattr(trust, "MAX_ARRAY", 10**6)  # even a table of any size
    chan = Recorder()
    spec = {"id": "nb02.vector_add", "seed": 7, "options": {}, "answer": "vector_add"}
    judge = Judge([spec], {"nb02.vector_add": nb02.vector_add}, chan, None)
    lines = []
    judge.grade_one("nb02.vector_add", chan.server.describe(_refused_vector_add, "kernel"), {}, "cell 5", lines, 4)
    assert lines[-1]["status"] == "failed" and chan.seen
    sizes = [int(args[2].size) for args in chan.seen]
    answers = [float(v) for args in chan.seen for v in args[0] + args[1]]
    desc = chan.server.describe(_writes_nothing, "kernel")
    request = desc["compile"]["request"]
    request["functions"][0].update(source=_TABLE, name="vector_add")
    request.update(kernel="vector_add", params=["a", "b", "out"])
    request["globals"].update(SIZES=("literal", repr(tuple(sizes))), ANS=("literal", repr(tuple(answers))))
    judge.grade_one("nb02.vector_add", desc, {}, "cell 6", lines, 5)
    assert lines[-1]["status"] == "failed", lines[-1]
    assert lines[-1]["seed"] != 7  # and the feedback names the inputs it was graded on


_NUMPY_OFFSETS = (
    "def compaction_offsets(flags):\n    h = cp.asnumpy(flags)\n"
    "    dummy = cp.empty(1, dtype=np.int32)\n"
    "    cc.exclusive_scan(d_in=cp.asarray(h[:1]), d_out=dummy, op=cc.OpKind.PLUS,\n"
    "                      init_value=np.zeros(1, np.int32), num_items=1)\n"
    "    offsets = np.concatenate(([0], np.cumsum(h)[:-1])).astype(np.int32)\n"
    "    return cp.asarray(offsets), int(h.sum())\n"
)


def _library_answer(src):
    import linecache

    from helpers.standins import library

    linecache.cache["<cell>"] = (len(src), None, src.splitlines(True), "<cell>")  # as the child keeps a cell's
    ns = {"cp": library("cupy"), "cc": library("cuda.compute"), "np": __import__("numpy")}
    exec(compile(src, "<cell>", "exec"), ns)  # noqa: S102 - the test's own answer
    return ns["compaction_offsets"]


def test_a_library_call_on_other_data_does_not_count():
    """NumPy does the work and cc.exclusive_scan runs once on a dummy: graded failed, directly and judged."""
    from helpers.problems import nb14

    fn = _library_answer(_NUMPY_OFFSETS)
    direct = nb14.compaction_offsets.grade(fn, seed=3)
    judged, chan = grade_judged(nb14.compaction_offsets, fn, 3, {})
    assert direct.status == judged.status == "failed", judged.line()
    assert "not the ones cc.exclusive_scan computed" in judged.message
    assert "judge library_call" in chan.ops and "device_call" not in chan.ops  # counted by the judge's worker


class CountForger(Loopback):
    """A student's process that reports one cc.exclusive_scan call whatever its function did (a patched
    json.dumps, or the counted functions replaced)."""

    def request(self, op, **fields):
        reply = super().request(op, **fields)
        if isinstance(reply, dict) and "calls" in reply:  # whatever the request: the judge never asks it for one
            reply["calls"] = {"exclusive_scan": 1, "inclusive_scan": 0}
        return reply


def test_library_call_counts_from_the_student_process_are_not_believed(monkeypatch):
    from helpers.problems import nb14

    numpy_only = _library_answer(
        "def compaction_offsets(flags):\n    h = cp.asnumpy(flags)\n"
        "    return cp.asarray(np.concatenate(([0], np.cumsum(h)[:-1])).astype(np.int32)), int(h.sum())\n"
    )
    monkeypatch.setattr("support.loopback.Loopback", CountForger)
    judged, _ = grade_judged(nb14.compaction_offsets, numpy_only, 3, {})
    assert judged.status == "failed", judged.line()
    assert "something other than cuda.compute" in judged.message


def test_a_library_function_the_judge_cannot_rebuild_fails_in_one_sentence():
    from helpers.problems import nb14

    sneaky = _library_answer(
        "def compaction_offsets(flags):\n    import numpy\n    h = cp.asnumpy(flags)\n"
        "    return cp.asarray(numpy.cumsum(h).astype(numpy.int32)), int(h.sum())\n"
    )
    judged, _ = grade_judged(nb14.compaction_offsets, sneaky, 3, {})
    assert judged.status != "passed"
    assert "cannot run this one: compaction_offsets uses import" in judged.message
    assert "Traceback" not in judged.message


class RecordForger(Loopback):
    """A student's process that answers whatever it is asked with the record of a correct pipeline, as a
    patched json.dumps or numba.cuda's wrapped functions replaced there could."""

    def request(self, op, **fields):
        from helpers.exercises import stream_runs
        from helpers.problems import nb16

        x = np.arange(8, dtype=np.float32)
        return through_the_wire(stream_runs.pipeline_run(nb16._pipeline, nb16._twice_plus_one, x, 2))


def test_notebook_16s_record_is_the_judges_not_the_student_process():
    """Never synchronized, or timed before waiting: failed through the judge whatever the student's process
    would report, and that process is never asked (its own numba.cuda, replaced or not, records nothing)."""
    from helpers.problems import nb16
    from wrong_solutions import nb16 as wrong

    forger = RecordForger()
    for ex, answer, says in (
        (nb16.pipeline, wrong.never_synchronized, "had finished copying it back"),
        (nb16.time_kernel, wrong.read_before_waiting, "the time was read before the host waited for end"),
    ):
        got = forger.stand_in(answer, "function")
        judged = ex.grade(got, seed=3, watchdog=0, executor=JudgedExecutor(forger))
        assert judged.status == "failed" and says in judged.message, judged.line()
    assert set(forger.ops) == {"judge stream_run"}


def test_a_notebook_16_answer_with_a_cuda_of_its_own_does_not_pass():
    """A `cuda` of the student's making (streams and syncs that only say so) is not numba.cuda: the judge's
    worker rebuilds it as an object with nothing on it, and the answer fails in one sentence."""
    from helpers.problems import nb16

    src = "def pipeline(kernel, x, n_streams):\n    s = cuda.stream()\n    s.synchronize()\n    return 2.0 * x + 1.0\n"
    ns = {"cuda": type("FakeCuda", (), {"stream": lambda self: self, "synchronize": lambda self: None})()}
    linecache.cache["<cell 16>"] = (len(src), None, src.splitlines(True), "<cell 16>")
    exec(compile(src, "<cell 16>", "exec"), ns)  # noqa: S102 - the test's own answer
    judged, chan = grade_judged(nb16.pipeline, ns["pipeline"], 3, {})
    assert judged.status != "passed", judged.line()
    assert "AttributeError" in judged.message and "Traceback" not in judged.message
    assert set(chan.ops) == {"judge stream_run"}
