"""Notebook 16's checks accept right answers written another way: the rules read the order of what was
queued (helpers/exercises/streams.py), not one spelling of it."""

import numpy as np
import pytest
from numba import cuda

from helpers.problems import nb16
from helpers.standins import library

pytestmark = pytest.mark.usefixtures("progress_file")  # tests/conftest.py
T = 128


def _grade(ex, answer):
    return ex.grade(answer, seed=4)


def timed_with_device_sync(kernel, d_x, d_out, stream):
    start, end = cuda.event(), cuda.event()
    start.record(stream)
    kernel[(d_x.size + T - 1) // T, T, stream](d_x, d_out)
    end.record(stream)
    cuda.synchronize()  # waits for everything, end included
    return cuda.event_elapsed_time(start, end)


def timed_with_stream_sync(kernel, d_x, d_out, stream):
    start, end = cuda.event(), cuda.event()
    start.record(stream)
    kernel[(d_x.size + T - 1) // T, T, stream](d_x, d_out)
    end.record(stream)
    stream.synchronize()
    return start.elapsed_time(end)


@pytest.mark.parametrize("answer", [timed_with_device_sync, timed_with_stream_sync])
def test_any_wait_that_covers_end_is_enough(answer):
    r = _grade(nb16.time_kernel, answer)
    assert r.status == "passed", r.line()


def pinned_in_place_with_events(kernel, x, k):
    """x pinned where it is (cuda.pinned), the kernel on a second stream that waits for the copy's event,
    the copy back on that stream, and auto_synchronize to wait."""
    out = np.empty_like(x)
    with cuda.pinned(x, out):
        for part in np.array_split(np.arange(x.size), k):
            a, b = int(part[0]), int(part[-1]) + 1
            copy_s, run_s = cuda.stream(), cuda.stream()
            d_in = cuda.to_device(x[a:b], stream=copy_s)
            copied = cuda.event()
            copied.record(copy_s)
            copied.wait(run_s)  # run_s waits on the GPU for the copy, the host does not
            d_out = cuda.device_array(b - a, x.dtype, stream=run_s)
            kernel[(b - a + T - 1) // T, T, run_s](d_in, d_out)
            with run_s.auto_synchronize():
                d_out.copy_to_host(out[a:b], stream=run_s)
    return out


def test_a_pipeline_ordered_by_events_across_streams_passes():
    r = _grade(nb16.pipeline, pinned_in_place_with_events)
    assert r.status == "passed", r.line()


def event_recorded_on_the_wrong_stream(kernel, x, k):
    out = np.empty_like(x)
    with cuda.pinned(x, out):
        for part in np.array_split(np.arange(x.size), k):
            a, b = int(part[0]), int(part[-1]) + 1
            copy_s, run_s = cuda.stream(), cuda.stream()
            d_in = cuda.to_device(x[a:b], stream=copy_s)
            copied = cuda.event()
            copied.record(run_s)  # marks the wrong queue: run_s does not wait for the copy
            copied.wait(run_s)
            d_out = cuda.device_array(b - a, x.dtype, stream=run_s)
            kernel[(b - a + T - 1) // T, T, run_s](d_in, d_out)
            d_out.copy_to_host(out[a:b], stream=run_s)
    cuda.synchronize()
    return out


def test_an_event_recorded_on_the_reading_stream_orders_nothing():
    r = _grade(nb16.pipeline, event_recorded_on_the_wrong_stream)
    assert r.status == "failed" and "nothing makes it wait" in r.message, r.line()


def captured_with_use(add_one, twice, x, n_steps):
    cp = library("cupy")
    stream = cp.cuda.Stream(non_blocking=True)
    blocks, n = (x.size + T - 1) // T, np.int32(x.size)
    previous = cp.cuda.get_current_stream()
    stream.use()
    stream.begin_capture()
    for _ in range(n_steps):
        add_one((blocks,), (T,), (x, n))
        twice((blocks,), (T,), (x, n))
    graph = stream.end_capture()
    previous.use()
    return graph


def test_a_capture_on_the_stream_made_current_by_use_passes():
    r = _grade(nb16.capture_steps, captured_with_use)
    assert r.status == "passed", r.line()
