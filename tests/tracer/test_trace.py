"""Tests of the CPU kernel tracer (helpers.tracer: tracing, verdicts, metrics, pictures), on the
kernel corpus in tests/corpus/."""

import os
import sys
from pathlib import Path

import numba
import numpy as np
import pytest
from numba import cuda

from corpus import BUGGY, CASES
from helpers.errors import KernelError, LearnerError, UnsupportedByTracer
from helpers.tracer import Trace, trace

TESTS_DIR = Path(__file__).resolve().parents[1]


def run_case(case):
    launch, args = case.launch_args()
    return trace(*launch, outputs=case.outputs), args


def _ids(cases):
    return [c.name for c in cases]


def test_corpus_is_big_enough():
    assert len(CASES) >= 25
    kinds = {k for c in BUGGY for k in c.expect}
    assert kinds == {
        "out_of_bounds",
        "negative_index",
        "race",
        "uninitialized_shared",
        "divergent_barrier",
        "unwritten_output",
    }
    assert any(c.raises is UnsupportedByTracer for c in BUGGY)


@pytest.mark.parametrize(
    "case", [c for c in CASES if c.raises is None], ids=_ids([c for c in CASES if c.raises is None])
)
def test_verdict_kinds_exact(case):
    t, args = run_case(case)
    assert isinstance(t, Trace)
    kinds = sorted({v.kind for v in t.verdicts})
    assert kinds == sorted(case.expect), t.summary()
    assert t.ok == (not case.expect)
    # one verdict per (kind, array)
    keys = [(v.kind, v.array) for v in t.verdicts]
    assert len(keys) == len(set(keys))


@pytest.mark.parametrize(
    "case", [c for c in CASES if c.reference is not None], ids=_ids([c for c in CASES if c.reference is not None])
)
def test_results_written_back_in_place(case):
    launch, args = case.launch_args()
    target = args[case.out]
    before = target.copy()
    trace(*launch, outputs=case.outputs)
    expected = case.reference(args)
    assert target is args[case.out]
    np.testing.assert_allclose(target, expected, rtol=1e-4, atol=1e-5)
    assert not np.array_equal(target, before) or np.array_equal(before, expected)


@pytest.mark.parametrize("case", [c for c in BUGGY if c.expect], ids=_ids([c for c in BUGGY if c.expect]))
def test_messages_name_block_thread_index_line(case):
    t, _ = run_case(case)
    for v in t.verdicts:
        assert v.message and v.message[0].isupper()
        if v.kind == "unwritten_output":
            assert v.array in v.message and "never written" in v.message
            continue
        assert "block" in v.message and "thread" in v.message
        assert f"line {v.line}" in v.message
        assert v.block is not None and v.thread is not None
        if v.kind != "divergent_barrier":
            idx = ", ".join(str(i) for i in v.index)
            assert f"[{idx}]" in v.message


@pytest.mark.parametrize("case", BUGGY[::3], ids=_ids(BUGGY[::3]))
def test_verdicts_identical_across_runs(case):
    if case.raises:
        pytest.skip("raises")
    first = [(v.kind, v.message) for v in run_case(case)[0].verdicts]
    for _ in range(2):
        assert [(v.kind, v.message) for v in run_case(case)[0].verdicts] == first


def _case(name):
    return next(c for c in CASES if c.name == name)


def test_specific_messages():
    t, _ = run_case(_case("oob_negative_index"))
    (v,) = t.verdicts
    assert v.index == (-1,) and v.thread == (0, 0, 0) and v.block == (0, 0, 0)
    assert "x[-1]" in v.message and "negative" in v.message
    t, _ = run_case(_case("oob_second_dimension"))
    assert all("dimension 1" in v.message for v in t.verdicts)
    t, _ = run_case(_case("unwritten_floor_grid"))
    assert "elements 896–999 of out were never written" in t.verdicts[0].message
    assert t.verdicts[0].count == 104
    t, _ = run_case(_case("race_cross_block_out0"))
    assert "different blocks" in t.verdicts[0].message and "out[0]" in t.verdicts[0].message
    t, _ = run_case(_case("race_histogram_nonatomic"))
    assert "atomic" in t.verdicts[0].message
    t, _ = run_case(_case("divergent_barrier_in_if"))
    assert "threads 0–15" in t.verdicts[0].message and "16–31" in t.verdicts[0].message


def test_unsupported_feature_message():
    launch, _ = _case("unsupported_fp16").launch_args()
    with pytest.raises(UnsupportedByTracer, match="fp16.*not supported by the CPU tracer"):
        trace(*launch)


@cuda.jit
def _divide(x, out):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = (1.0, 2.0, 3.0, 4.0, 5.0)[i - 5 + 5]  # i = 5 indexes past the tuple


@cuda.jit
def _runaway(x):
    i = 0
    while x[0] >= 0:
        i += 1


@cuda.jit
def _uses_vote(x):
    if cuda.all_sync(0xFFFFFFFF, x[0] > 0):
        x[0] = 1


def test_kernel_exception_names_thread_block_line():
    with pytest.raises(KernelError) as err:
        trace(_divide, 1, 16, np.ones(16, np.float32), np.zeros(16, np.float32))
    msg = str(err.value)
    assert "IndexError" in msg and "thread (5, 0, 0)" in msg and "block (0, 0, 0)" in msg
    assert "line" in msg and "[i - 5 + 5]" in msg


def test_runaway_kernel_is_stopped():
    with pytest.raises(KernelError, match="loop missing its exit"):
        trace(_runaway, 1, 1, np.zeros(1, np.float32), max_accesses=20_000)


def test_vote_is_traced():
    x = np.ones(1, np.float32)
    t = trace(_uses_vote, 1, 32, x)
    assert x[0] == 1 and [v.kind for v in t.verdicts] == ["race"]  # every lane writes x[0]


def test_learner_errors():
    c = _case("vector_add")
    args = c.make_args()
    with pytest.raises(LearnerError, match="takes 3 argument"):
        trace(c.kernel, 1, 32, *args[:2])
    with pytest.raises(LearnerError, match="1024"):
        trace(c.kernel, 1, 2048, *args)
    with pytest.raises(LearnerError, match="outputs"):
        trace(c.kernel, 1, 32, *args, outputs=("nope",))


def test_configured_launch_and_device_arrays():
    c = _case("vector_add")
    x, y, out = c.make_args()
    t1 = trace(c.kernel[4, 32], x, y, out, outputs=(2,))
    assert t1.ok and t1.griddim == (4, 1, 1)
    # anything with copy_to_host() is a device array; results go back with copy_to_device()
    dx, dy, dout = _FakeDeviceArray(x), _FakeDeviceArray(y), _FakeDeviceArray(np.zeros_like(out))
    t2 = trace(c.kernel, 4, 32, dx, dy, dout, outputs=("out",))
    assert t2.ok
    np.testing.assert_allclose(dout.host, x + y)
    if type(c.kernel).__name__ == "FakeCUDAKernel":  # simulator: its own device arrays too
        d = cuda.to_device(np.zeros_like(out))
        assert trace(c.kernel, 4, 32, x, y, d).ok
        np.testing.assert_allclose(d.copy_to_host(), x + y)


class _FakeDeviceArray:
    def __init__(self, host):
        self.host = host.copy()

    def copy_to_host(self):
        return self.host.copy()

    def copy_to_device(self, ary):
        self.host[...] = ary


def test_learner_globals_untouched():
    import corpus.correct as mod

    before = dict(mod.__dict__)
    run_case(_case("device_function"))
    assert mod.__dict__["cuda"] is cuda and mod.__dict__.keys() == before.keys()
    assert all(mod.__dict__[k] is v for k, v in before.items())


def test_metrics():
    t, _ = run_case(_case("vector_add"))
    m = t.metrics
    assert m.global_reads == (pytest.approx(2.0), 2) and m.global_writes[1] == 1  # 100 active threads of 128
    assert m.idle_threads == 28 and m.coalescing == pytest.approx(1.0)
    t, _ = run_case(_case("matrix_add_2d"))
    assert 0 < t.metrics.coalescing < 1  # 13-wide rows: warps straddle rows
    t, _ = run_case(_case("tiled_matmul"))
    assert t.metrics.shared_reads[0] > 0 and t.metrics.bank_conflicted == 0
    t, _ = run_case(_case("transpose_padded"))
    assert t.metrics.bank_ways_max >= 1
    summary = t.summary()
    assert "No problems found" in summary and "coalescing" in summary


@cuda.jit
def _transpose_unpadded(a, out):
    tile = cuda.shared.array((32, 32), np.float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    tile[ty, tx] = a[ty, tx]
    cuda.syncthreads()
    out[ty, tx] = tile[tx, ty]


def test_bank_conflicts_counted():
    a = np.arange(32 * 32, dtype=np.float32).reshape(32, 32)
    out = np.zeros_like(a)
    t = trace(_transpose_unpadded, 1, (32, 32), a, out, outputs=("out",))
    assert t.ok and np.array_equal(out, a.T)
    m = t.metrics
    assert m.bank_ways_max == 32 and m.bank_conflicted == 32  # every column read: 32-way
    assert m.coalescing == pytest.approx(1.0)


def test_pictures(tmp_path):
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib.figure import Figure

    t, _ = run_case(_case("race_matmul_missing_sync"))
    fig = t.show()
    assert isinstance(fig, Figure) and len(fig.axes) == 5  # A, B, C, sA, sB
    fig.savefig(tmp_path / "accesses.png")
    assert (tmp_path / "accesses.png").stat().st_size > 1000
    assert len(t.show(array="sA").axes) == 1
    fig = t.show_banks()
    assert isinstance(fig, Figure) and len(fig.axes) == 4  # its 4 shared-memory access lines: sA, sB written and read
    fig.savefig(tmp_path / "banks.png")
    t, _ = run_case(_case("vector_add"))
    fig = t.show_coalescing()
    assert isinstance(fig, Figure) and len(fig.axes) == 3  # read x, read y, write out
    fig.savefig(tmp_path / "coalescing.png")
    with pytest.raises(LearnerError):
        t.show_banks()


_REAL_DISPATCHER = r"""
import os, sys
sys.path[:0] = [ROOT, TESTS]
import helpers  # decides CPU mode and sets the simulator flag: undo that for this test
os.environ.pop("NUMBA_ENABLE_CUDASIM", None)
if "numba.core.config" in sys.modules:
    import numba.core.config
    numba.core.config.reload_config()
import numpy as np
from numba import cuda
from helpers import _numba
from helpers.tracer import trace

@cuda.jit(device=True)
def twice(v):
    return 2 * v

@cuda.jit
def scale(x, out):
    i = cuda.grid(1)
    out[i] = twice(x[i])   # no guard: out of bounds past 100

assert type(scale).__name__ == "CUDADispatcher", type(scale)
x = np.arange(100, dtype=np.float32); out = np.zeros(100, np.float32)
t = trace(scale, 4, 32, x, out, outputs=("out",))
assert {v.kind for v in t.verdicts} == {"out_of_bounds"}, t.summary()
assert np.array_equal(out, 2 * x)
import warnings; warnings.simplefilter("ignore")
t = trace(scale[4, 32], x, out)
assert {v.kind for v in t.verdicts} == {"out_of_bounds"}
from corpus import CASES
for c in CASES:
    if c.raises is None:
        launch, args = c.launch_args()
        kinds = {v.kind for v in trace(*launch, outputs=c.outputs).verdicts}
        assert kinds == set(c.expect), (c.name, kinds)
print("REAL-OK")
"""


def test_real_dispatcher_in_subprocess():
    import subprocess

    code = _REAL_DISPATCHER.replace("ROOT", repr(str(TESTS_DIR.parent))).replace("TESTS", repr(str(TESTS_DIR)))
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_ENABLE_CUDASIM"}
    res = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300)
    assert res.returncode == 0 and "REAL-OK" in res.stdout, res.stdout + res.stderr


@cuda.jit
def _tiled_transpose(inp, out):
    tile = cuda.shared.array((16, 17), numba.float32)
    x = cuda.blockIdx.x * 16 + cuda.threadIdx.x
    y = cuda.blockIdx.y * 16 + cuda.threadIdx.y
    if y < inp.shape[0] and x < inp.shape[1]:
        tile[cuda.threadIdx.y, cuda.threadIdx.x] = inp[y, x]
    cuda.syncthreads()
    x = cuda.blockIdx.y * 16 + cuda.threadIdx.x
    y = cuda.blockIdx.x * 16 + cuda.threadIdx.y
    if y < out.shape[0] and x < out.shape[1]:
        out[y, x] = tile[cuda.threadIdx.x, cuda.threadIdx.y]


def test_a_large_trace_picture_stays_about_1500_px_tall_and_draws_cells_as_collections():
    from helpers.tracer.pictures import draw_accesses

    a = np.random.default_rng(0).random((40, 48), dtype=np.float32)
    t = trace(_tiled_transpose, (3, 3), (16, 16), a, np.zeros((48, 40), np.float32))
    fig = draw_accesses(t, 0)
    assert fig.get_figheight() * fig.dpi <= 1500 + 1, fig.get_size_inches()
    panels = [ax for ax in fig.axes if ax.collections]
    assert len(panels) == 3  # inp, out and the shared tile
    assert all(len(ax.patches) == 0 for ax in panels)  # one artist per panel, not one per element
