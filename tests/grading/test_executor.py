"""The judged executor (helpers/grading/executor.py) runs each operation where the grader trusts it: a
kernel the judge's compiler accepts is traced by the judge's own tracer process, CUDA C is compiled by
the judge's NVRTC process, and the course's own functions run in the grader. The student's process
here lies on every reply it can; the checks must not believe it."""

import numpy as np
import pytest
from numba import cuda

from helpers import cuda_c
from helpers.exercises.executor import LOCAL
from helpers.grading.executor import JudgedExecutor
from helpers.problems import nb02
from support.loopback import Loopback, grade_judged

pytestmark = pytest.mark.usefixtures("progress_file")  # tests/conftest.py


class Liar(Loopback):
    """A student's process that answers every trace and launch as a clean kernel's would: no verdicts,
    no stray writes, the fewest reads (a patched json.dumps or tracer could)."""

    def request(self, op, **fields):
        reply = super().request(op, **fields)
        if op == "trace":
            reply["verdicts"] = []
            reply["metrics"] = {k: 0 for k in reply.get("metrics") or {}}
        if op == "gpu":
            reply["hits"] = []
        return reply


def test_a_race_is_found_by_the_judges_tracer_whatever_the_student_process_says(monkeypatch):
    from wrong_solutions import nb02 as wrong

    monkeypatch.setattr("support.loopback.Loopback", Liar)
    judged, chan = grade_judged(nb02.vector_add, wrong.add_racy, 3, {})
    assert judged.status == "failed" and "race" in judged.message, judged.line()
    assert "judge trace" in chan.ops and "trace" not in chan.ops  # the student's process was never asked


@cuda.jit
def _vector_add_with_a_list(a, b, out):  # right numbers on the tracer, refused by Numba's GPU compiler
    i = cuda.grid(1)
    if i < out.size:
        tmp = [a[i]]
        out[i] = tmp[0] + b[i]


def test_a_kernel_the_compiler_refuses_fails_with_the_compilers_sentence_however_it_traces(monkeypatch):
    monkeypatch.setattr("support.loopback.Loopback", Liar)
    judged, chan = grade_judged(nb02.vector_add, _vector_add_with_a_list, 3, {})
    assert judged.status == "failed" and "Python list" in judged.message, judged.line()
    assert "trace" in chan.ops and "judge trace" not in chan.ops  # refused: traced in the student's process only


def test_cuda_c_compiles_in_the_judges_nvrtc_process():
    chan = Loopback()
    src = 'extern "C" __global__ void k(float* x) { x[threadIdx.x] = 1.0f; }'
    ptx = JudgedExecutor(chan).compile_cuda(src, name="k.cu")
    assert chan.ops == ["nvrtc"] and ptx == LOCAL.compile_cuda(src, name="k.cu")
    with pytest.raises(cuda_c.CompileError):
        JudgedExecutor(chan).compile_cuda(src + " garbage", name="k.cu")


def test_the_courses_own_objects_run_in_the_grader():
    chan = Loopback()
    run = JudgedExecutor(chan)

    def course_fn(x):  # not a stand-in: the course's own function
        return x + 1

    assert run.host_run("library_call", course_fn, lambda fn, v: fn(v), 41) == 42
    x = np.arange(4, dtype=np.float32)
    run.trace(nb02.vector_add.reference_answer(), 1, 4, [x, x.copy(), np.zeros(4, np.float32)], [2])
    assert chan.ops == []  # nothing went to the student's process or the judge's workers


def test_a_host_function_of_the_student_runs_where_it_lives():
    chan = Loopback()
    fn = chan.stand_in(lambda x: x * 2, "function")
    assert JudgedExecutor(chan).host_run("facts", fn, lambda f: pytest.fail("ran here"))["ufunc"] is False
    assert fn(21) == 42 and chan.ops == ["call"]  # a call: the stand-in's own, in the student's process
