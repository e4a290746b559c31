"""The CuPy stand-in's streams and CUDA Graph capture (helpers/standins/cupy_streams.py): captured launches do
not run until the graph is launched, the CUDA rules a learner can break raise CuPy's error by its CUDA name,
and the calls take the real CuPy 14 arguments."""

import inspect

import numpy as np
import pytest

from helpers.standins import cupy as cp
from helpers.standins import cupy_streams

ADD_ONE = 'extern "C" __global__ void add_one(float* a, int n) { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) a[i] += 1.0f; }'  # noqa: E501


@pytest.fixture(autouse=True)
def _clean():
    cupy_streams.reset()
    yield
    cupy_streams.reset()


def _add_one():
    return cp.RawKernel(ADD_ONE, "add_one")


def test_a_captured_launch_runs_only_when_the_graph_is_launched():
    x, k, s = cp.zeros(40, dtype=np.float32), _add_one(), cp.cuda.Stream(non_blocking=True)
    with s:
        s.begin_capture()
        assert s.is_capturing()
        k((1,), (64,), (x, np.int32(40)))
        graph = s.end_capture()
    assert isinstance(graph, cp.cuda.Graph) and not s.is_capturing()
    assert x.get().sum() == 0  # captured, not run
    graph.launch(s)
    graph.launch(s)
    assert x.get().tolist() == [2.0] * 40


def test_a_launch_outside_with_stream_runs_at_once_on_the_null_stream():
    x, s = cp.zeros(8, dtype=np.float32), cp.cuda.Stream(non_blocking=True)
    s.begin_capture()
    _add_one()((1,), (32,), (x, np.int32(8)))  # the current stream is the null stream: not captured
    assert x.get().tolist() == [1.0] * 8
    graph = s.end_capture()
    graph.launch(s)
    assert x.get().tolist() == [1.0] * 8


def test_the_null_stream_cannot_capture():
    # CuPy 14 refuses it before CUDA is asked, with a RuntimeError (seen on an H200, cupy/cuda/stream.pyx)
    with pytest.raises(RuntimeError, match=r"^cannot capture on the default \(legacy\) stream$"):
        cp.cuda.Stream.null.begin_capture()


def test_a_null_stream_launch_while_a_blocking_stream_captures_fails_and_spoils_the_capture():
    x, s = cp.zeros(8, dtype=np.float32), cp.cuda.Stream()  # blocking: the legacy stream would wait for it
    s.begin_capture()
    with pytest.raises(cupy_streams.CUDARuntimeError, match="cudaErrorStreamCaptureImplicit"):
        _add_one()((1,), (32,), (x, np.int32(8)))
    with pytest.raises(cupy_streams.CUDARuntimeError, match="cudaErrorStreamCaptureInvalidated"):
        s.end_capture()


def test_waiting_for_a_capturing_stream_is_refused():
    x, s = cp.zeros(8, dtype=np.float32), cp.cuda.Stream(non_blocking=True)
    with s:
        s.begin_capture()
        with pytest.raises(cupy_streams.CUDARuntimeError, match="cudaErrorStreamCaptureUnsupported"):
            x.get()
        with pytest.raises(cupy_streams.CUDARuntimeError, match="cudaErrorStreamCaptureUnsupported"):
            s.synchronize()
        s.end_capture()


def test_the_current_stream_follows_with_and_use():
    s, t = cp.cuda.Stream(), cp.cuda.Stream(non_blocking=True)
    assert cp.cuda.get_current_stream() is cp.cuda.Stream.null
    with s:
        assert cp.cuda.get_current_stream() is s
    t.use()
    assert cp.cuda.get_current_stream() is t


def test_timing_needs_a_gpu():
    with pytest.raises(Exception, match="get_elapsed_time .* needs a GPU"):
        cp.cuda.get_elapsed_time(cp.cuda.Event(), cp.cuda.Event())


def _params(fn):
    return [(p.name, p.default) for p in inspect.signature(fn).parameters.values() if p.name != "self"]


@pytest.mark.parametrize(
    "path", ["Stream.__init__", "Event.__init__", "Stream.begin_capture", "Stream.record", "Stream.wait_event"]
)
def test_the_calls_take_the_real_arguments(path):
    real = pytest.importorskip("cupy")
    owner, attr = path.split(".")
    assert _params(getattr(getattr(cp.cuda, owner), attr)) == _params(getattr(getattr(real.cuda, owner), attr))


def test_graph_launch_takes_the_real_arguments():
    real = pytest.importorskip("cupy")
    assert real.cuda.Graph.launch.__doc__.startswith("Graph.launch(self, stream=None)")
    assert _params(cp.cuda.Graph.launch) == [("stream", None)]
    assert real.cuda.get_current_stream.__doc__.startswith("get_current_stream(int device_id=-1)")
    assert _params(cp.cuda.get_current_stream) == [("device_id", -1)]
