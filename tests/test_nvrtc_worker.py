"""Judged grading compiles a student's CUDA C in the judge's own NVRTC process
(helpers/grading/nvrtc_worker.py): never in the student's process, whose answer the PTX would then
be, and never in the grader, where an #include or a macro bomb would run."""

import os

import pytest

from helpers import _elsewhere, cuda_c
from helpers.grading.execute import Settings, _nvrtc
from helpers.grading.nvrtc_worker import Worker
from helpers.grading.serve import Server

SRC = 'extern "C" __global__ void twice(float* x, int n) { int i = threadIdx.x; if (i < n) x[i] *= 2.0f; }'
ENV = {k: v for k, v in os.environ.items() if k in ("PATH", "HOME", "LD_LIBRARY_PATH", "CUDA_HOME")}


@pytest.fixture
def worker():
    w = Worker(ENV)
    yield w
    w.close()


def test_it_compiles_as_nvrtc_does_here(worker):
    got = worker.compile(src=SRC, target="ptx", arch="sm_80", name="k.cu", options=[], extern_c=False)
    assert got["out"] == cuda_c.compile(SRC, arch="sm_80", name="k.cu")
    assert worker.proc.poll() is None  # one process per submission, kept for its next compile


def test_a_compile_error_comes_back_with_its_log(worker):
    got = worker.compile(
        src=SRC.replace("2.0f;", "2.0f"), target="ptx", arch=None, name="k.cu", options=[], extern_c=False
    )
    assert "does not compile" in got["compile_error"] and "error" in got["log"]


def test_a_macro_bomb_is_stopped_and_said():
    bomb = "#define A(x) x x x x x x x x\n" + "".join(
        f"#define B{i}(x) {'A' if i == 0 else f'B{i - 1}'}({'A' if i == 0 else f'B{i - 1}'}(x))\n" for i in range(12)
    )
    bomb += "int v[] = { B11(1,) };\n"
    w = Worker(ENV, timeout=5)
    try:
        got = w.compile(src=bomb, target="ptx", arch=None, name="bomb.cu", options=[], extern_c=False)
    finally:
        w.close()
    assert "took longer than 5 s" in got["compile_error"] or "stopped" in got["compile_error"], got


class _Judging:
    """What judge.py's channel offers cuda_c.compile while it judges: only the NVRTC worker."""

    def __init__(self, nvrtc):
        self.nvrtc = nvrtc

    def request(self, op, **fields):  # the student's process: must not be asked to compile
        raise AssertionError(f"the student's process was asked to {op}")


def test_while_judging_cuda_c_compiles_in_the_worker_not_the_students_process(tmp_path):
    w = _nvrtc(tmp_path, Settings(), None)  # as execute.py makes it for a submission (no sandbox here)
    try:
        with _elsewhere.judging(_Judging(w)):
            ptx = cuda_c.compile(SRC, arch="sm_80", name="k.cu")
            with pytest.raises(cuda_c.CompileError, match="does not compile"):
                cuda_c.compile(SRC + " garbage", arch="sm_80", name="k.cu")
        assert w.proc is not None  # it was the worker that compiled
    finally:
        w.close()
    assert ptx == cuda_c.compile(SRC, arch="sm_80", name="k.cu")


def test_the_students_process_has_no_compile_operation():
    # the old protocol compiled there ("nvrtc") and the judge interpreted whatever PTX came back
    with pytest.raises(LookupError, match="unknown operation"):
        Server(on_gpu=False).handle({"op": "nvrtc", "src": SRC, "target": "ptx"})
