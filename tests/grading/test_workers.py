"""Judged grading compiles a student's CUDA C in the judge's own NVRTC process
(the "nvrtc" worker of helpers/grading/workers.py): never in the student's process, whose answer the PTX would then
be, and never in the grader, where an #include or a macro bomb would run."""

import os

import pytest

from helpers import cuda_c, env
from helpers.grading.execute import Settings, _nvrtc
from helpers.grading.executor import JudgedExecutor
from helpers.grading.serve import Server
from helpers.grading.workers import Worker

SRC = 'extern "C" __global__ void twice(float* x, int n) { int i = threadIdx.x; if (i < n) x[i] *= 2.0f; }'
ENV = {k: v for k, v in os.environ.items() if k in ("PATH", "HOME", "LD_LIBRARY_PATH", "CUDA_HOME")}


@pytest.fixture
def worker():
    w = Worker("nvrtc", ENV)
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
    w = Worker("nvrtc", ENV, timeout=5)
    try:
        got = w.compile(src=bomb, target="ptx", arch=None, name="bomb.cu", options=[], extern_c=False)
    finally:
        w.close()
    assert "took longer than 5 s" in got["compile_error"] or "stopped" in got["compile_error"], got


class _Judging:
    """What judge.py's channel offers the judged executor's CUDA C compiles: only the NVRTC worker."""

    def __init__(self, nvrtc):
        self.nvrtc = nvrtc

    def request(self, op, **fields):  # the student's process: must not be asked to compile
        raise AssertionError(f"the student's process was asked to {op}")


def test_while_judging_cuda_c_compiles_in_the_worker_not_the_students_process(tmp_path):
    w = _nvrtc(tmp_path, Settings(), None)  # as execute.py makes it for a submission (no sandbox here)
    judged = JudgedExecutor(_Judging(w))
    try:
        ptx = judged.compile_cuda(SRC, arch="sm_80", name="k.cu")
        with pytest.raises(cuda_c.CompileError, match="does not compile"):
            judged.compile_cuda(SRC + " garbage", arch="sm_80", name="k.cu")
        assert w.proc is not None  # it was the worker that compiled
    finally:
        w.close()
    assert ptx == cuda_c.compile(SRC, arch="sm_80", name="k.cu")


def test_the_students_process_has_no_compile_operation():
    # the old protocol compiled there ("nvrtc") and the judge interpreted whatever PTX came back
    with pytest.raises(LookupError, match="unknown operation"):
        Server(on_gpu=False).handle({"op": "nvrtc", "src": SRC, "target": "ptx"})


def test_the_tracer_worker_traces_a_described_kernel_as_the_tracer_does_here(tmp_path):
    """The judge's tracer process rebuilds the kernel from its description and finds what the
    tracer finds here: the race of a stencil without its barrier, on the same line."""
    import numpy as np

    from helpers import trace
    from helpers.compile_check import describe
    from helpers.problems.nb05 import BLOCK
    from wrong_solutions.nb05 import stencil_no_barrier

    n, threads = 3 * BLOCK - 5, BLOCK
    x = np.linspace(0, 1, n).astype(np.float32)
    args = [x, np.zeros(n, np.float32)]
    here = trace(
        stencil_no_barrier,
        (n + threads - 1) // threads,
        threads,
        *[a.copy() if hasattr(a, "copy") else a for a in args],
    )
    w = _worker_for(tmp_path)
    try:
        reply = w.request(
            "trace",
            request=describe.request(stencil_no_barrier, args),
            grid=(n + threads - 1) // threads,
            block=threads,
            args=args,
            outputs=[1],
        )
        png = w.request("show", trace=reply["trace"], block=0)["png"]
    finally:
        w.close()
    kinds = [v["kind"] for v in reply["verdicts"]]
    assert kinds and kinds == [v.kind for v in here.verdicts]
    assert [v["line"] for v in reply["verdicts"]] == [v.line for v in here.verdicts]
    assert png is None or png.startswith(b"\x89PNG")


def test_an_endless_kernel_in_the_tracer_worker_is_stopped_and_its_line_named(tmp_path):
    import numpy as np
    from numba import cuda

    from helpers.compile_check import describe

    @cuda.jit
    def endless(x):
        i = cuda.grid(1)
        while True:
            x[i] = 1

    args = [np.zeros(4, np.float32)]
    w = _worker_for(tmp_path, seconds=2)
    try:
        with pytest.raises(Exception, match="missing its exit"):
            w.request("trace", request=describe.request(endless, args), grid=1, block=4, args=args, outputs=[0])
    finally:
        w.close()


def _worker_for(tmp_path, seconds=30.0):
    from helpers.grading.execute import _worker

    return _worker("tracer", tmp_path, Settings(), None, seconds)


def test_a_tracer_worker_that_dies_gives_a_sentence_not_a_pass(tmp_path):
    import sys

    from helpers.grading.workers import WorkerGone

    w = Worker("tracer", ENV, wrap=lambda argv, env: ([sys.executable, "-c", "import sys; sys.exit(3)"], env))
    try:
        with pytest.raises(
            WorkerGone, match=r"the grader's tracer stopped \(out of memory\?\) while running your kernel"
        ):
            w.request("trace", request={}, grid=1, block=1, args=[], outputs=[])
    finally:
        w.close()


def test_the_tracer_workers_launch_writes_outputs_and_reports_stray_writes():
    """On a GPU the judge's own process also launches the rebuilt kernel (here on Numba's
    simulator, the same code path): the outputs come back; a failed launch restarts the process."""
    import numpy as np
    from numba import cuda

    from helpers.compile_check import describe
    from helpers.grading import workers

    @cuda.jit
    def twice(x, out):
        i = cuda.grid(1)
        if i < x.size:
            out[i] = 2 * x[i]

    @cuda.jit
    def twice_unguarded(x, out):
        i = cuda.grid(1)
        out[i] = 2 * x[i % x.size]

    import linecache

    x = np.arange(10, dtype=np.float32)
    # described first: rebuilding registers the kernels' lines, as the worker process does for its own
    good, stray = (describe.request(k, [x, x]) for k in (twice, twice_unguarded))
    lines = dict(linecache.cache)
    try:
        args = [x, np.zeros(10, np.float32)]
        got = workers.HANDLERS["tracer"]["gpu"]({"request": good, "grid": 1, "block": 16, "args": args}, {})
        assert np.array_equal(got["args"][1], 2 * x) and got["hits"] == []
        state = {}
        if env.on_gpu():  # a GPU writes past the end, into the guard band: a hit at element 10 of out
            got = workers.HANDLERS["tracer"]["gpu"]({"request": stray, "grid": 1, "block": 16, "args": args}, state)
            assert got["hits"] == [[1, 10]]
        else:  # the simulator stops the stray write; a failed launch restarts the process (CUDA may not survive)
            with pytest.raises(Exception, match="failed on the GPU"):
                workers.HANDLERS["tracer"]["gpu"]({"request": stray, "grid": 1, "block": 16, "args": args}, state)
            assert state.get("restart") is True
    finally:
        linecache.cache.clear()
        linecache.cache.update(lines)


def test_after_a_failed_launch_the_next_request_gets_a_fresh_worker(tmp_path):
    import numpy as np
    from numba import cuda

    from helpers.compile_check import describe

    @cuda.jit
    def copy(x, out):
        i = cuda.grid(1)
        if i < x.size:
            out[i] = x[i]

    @cuda.jit
    def copy_unguarded(x, out):
        i = cuda.grid(1)
        out[i] = x[i]

    x = np.arange(6, dtype=np.float32)
    good, stray = (describe.request(k, [x, x]) for k in (copy, copy_unguarded))
    w = _worker_for(tmp_path)
    try:
        with pytest.raises(Exception, match="failed on the GPU"):
            w.request("gpu", request=stray, grid=1, block=8, args=[x, np.zeros(6, np.float32)])
        assert w.proc is None  # it said it would exit: closed here, never written to again
        got = w.request("gpu", request=good, grid=1, block=8, args=[x, np.zeros(6, np.float32)])
        assert np.array_equal(got["args"][1], x)
    finally:
        w.close()
