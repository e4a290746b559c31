"""Wrong answers for helpers/problems/nb16.py (streams, events, pinned memory, CUDA Graphs)."""

import numpy as np
from numba import cuda

from helpers.standins import library

from . import Wrong

cp = library("cupy")
T = 128


def _blocks(n):
    return (n + T - 1) // T


# ----------------------------------------------------------------------------- time_kernel


def events_on_default_stream(kernel, d_x, d_out, stream):
    start, end = cuda.event(), cuda.event()
    start.record()
    kernel[_blocks(d_x.size), T, stream](d_x, d_out)
    end.record()
    end.synchronize()
    return start.elapsed_time(end)


def read_before_waiting(kernel, d_x, d_out, stream):
    start, end = cuda.event(), cuda.event()
    start.record(stream)
    kernel[_blocks(d_x.size), T, stream](d_x, d_out)
    end.record(stream)
    return start.elapsed_time(end)


def events_swapped(kernel, d_x, d_out, stream):
    start, end = cuda.event(), cuda.event()
    start.record(stream)
    kernel[_blocks(d_x.size), T, stream](d_x, d_out)
    end.record(stream)
    end.synchronize()
    return end.elapsed_time(start)


def no_events(kernel, d_x, d_out, stream):
    """Times without events (a host clock would go here; the suite reads no clock): a number of its own."""
    kernel[_blocks(d_x.size), T, stream](d_x, d_out)
    stream.synchronize()
    return 0.001 * d_x.size


def start_after_launch(kernel, d_x, d_out, stream):
    start, end = cuda.event(), cuda.event()
    kernel[_blocks(d_x.size), T, stream](d_x, d_out)
    start.record(stream)
    end.record(stream)
    end.synchronize()
    return start.elapsed_time(end)


def seconds_not_ms(kernel, d_x, d_out, stream):
    start, end = cuda.event(), cuda.event()
    start.record(stream)
    kernel[_blocks(d_x.size), T, stream](d_x, d_out)
    end.record(stream)
    end.synchronize()
    return cuda.event_elapsed_time(start, end) / 1e3


def launch_on_default_stream(kernel, d_x, d_out, stream):
    start, end = cuda.event(), cuda.event()
    start.record(stream)
    kernel[_blocks(d_x.size), T](d_x, d_out)
    end.record(stream)
    end.synchronize()
    return start.elapsed_time(end)


# ----------------------------------------------------------------------------- pipeline


def _pipeline(kernel, x, k, *, pinned=True, one_stream=False, stated=True, sync="all", mix=False):
    """The reference with one thing changed, so each wrong answer differs from it in one way."""
    xp = cuda.pinned_array_like(x) if pinned else x.copy()
    if pinned:
        xp[:] = x
    out = cuda.pinned_array_like(x) if pinned else np.empty_like(x)
    streams = [cuda.stream() for _ in range(1 if one_stream else k)]
    parts = np.array_split(np.arange(x.size), k)
    for i, part in enumerate(parts):
        s = streams[0 if one_stream else i]
        a, b = int(part[0]), int(part[-1]) + 1
        d_in = cuda.to_device(xp[a:b], stream=s) if stated else cuda.to_device(xp[a:b])
        d_out = cuda.device_array(b - a, x.dtype, stream=s)
        run_on = streams[(i + 1) % len(streams)] if mix else s
        kernel[_blocks(b - a), T, run_on](d_in, d_out)
        d_out.copy_to_host(out[a:b], stream=run_on if mix else s)
    for s in streams if sync == "all" else streams[-1:] if sync == "last" else []:
        s.synchronize()
    return out


def one_launch(kernel, x, k):
    s = cuda.stream()
    xp = cuda.pinned_array_like(x)
    xp[:] = x
    d_in = cuda.to_device(xp, stream=s)
    d_out = cuda.device_array_like(d_in, stream=s)
    kernel[_blocks(x.size), T, s](d_in, d_out)
    out = cuda.pinned_array_like(x)
    d_out.copy_to_host(out, stream=s)
    s.synchronize()
    return out


def one_stream(kernel, x, k):
    return _pipeline(kernel, x, k, one_stream=True)


def pageable(kernel, x, k):
    return _pipeline(kernel, x, k, pinned=False)


def copy_without_stream(kernel, x, k):
    return _pipeline(kernel, x, k, stated=False)


def never_synchronized(kernel, x, k):
    return _pipeline(kernel, x, k, sync="none")


def last_stream_only(kernel, x, k):
    return _pipeline(kernel, x, k, sync="last")


def kernel_on_next_stream(kernel, x, k):
    return _pipeline(kernel, x, k, mix=True)


def whole_copy_then_chunks(kernel, x, k):
    xp = cuda.pinned_array_like(x)
    xp[:] = x
    streams = [cuda.stream() for _ in range(k)]
    d_x = cuda.to_device(xp, stream=streams[0])
    out = cuda.pinned_array_like(x)
    for s, part in zip(streams, np.array_split(np.arange(x.size), k)):
        a, b = int(part[0]), int(part[-1]) + 1
        d_out = cuda.device_array(b - a, x.dtype, stream=s)
        kernel[_blocks(b - a), T, s](d_x[a:b], d_out)
        d_out.copy_to_host(out[a:b], stream=s)
    cuda.synchronize()
    return out


def launch_on_default(kernel, x, k):
    xp = cuda.pinned_array_like(x)
    xp[:] = x
    out = cuda.pinned_array_like(x)
    for part in np.array_split(np.arange(x.size), k):
        s = cuda.stream()
        a, b = int(part[0]), int(part[-1]) + 1
        d_in = cuda.to_device(xp[a:b], stream=s)
        d_out = cuda.device_array(b - a, x.dtype, stream=s)
        kernel[_blocks(b - a), T](d_in, d_out)
        d_out.copy_to_host(out[a:b], stream=s)
        s.synchronize()
    return out


# ----------------------------------------------------------------------------- capture_steps


def _steps(add_one, twice, x, rounds, order=("add", "twice")):
    n = np.int32(x.size)
    for _ in range(rounds):
        for which in order:
            (add_one if which == "add" else twice)((_blocks(x.size),), (T,), (x, n))


def launched_outside_the_capture(add_one, twice, x, n_steps):
    stream = cp.cuda.Stream(non_blocking=True)
    stream.begin_capture()
    _steps(add_one, twice, x, n_steps)  # no `with stream:`: they go to the null stream and run
    return stream.end_capture()


def capture_on_default_stream(add_one, twice, x, n_steps):
    stream = cp.cuda.Stream.null
    with stream:
        stream.begin_capture()
        _steps(add_one, twice, x, n_steps)
        return stream.end_capture()


def graph_not_returned(add_one, twice, x, n_steps):
    stream = cp.cuda.Stream(non_blocking=True)
    with stream:
        stream.begin_capture()
        _steps(add_one, twice, x, n_steps)
        stream.end_capture()


def graph_launched_inside(add_one, twice, x, n_steps):
    stream = cp.cuda.Stream(non_blocking=True)
    with stream:
        stream.begin_capture()
        _steps(add_one, twice, x, n_steps)
        graph = stream.end_capture()
    graph.launch(stream)
    stream.synchronize()
    return graph


def order_swapped(add_one, twice, x, n_steps):
    stream = cp.cuda.Stream(non_blocking=True)
    with stream:
        stream.begin_capture()
        _steps(add_one, twice, x, n_steps, order=("twice", "add"))
        return stream.end_capture()


def one_round_short(add_one, twice, x, n_steps):
    stream = cp.cuda.Stream(non_blocking=True)
    with stream:
        stream.begin_capture()
        _steps(add_one, twice, x, n_steps - 1)
        return stream.end_capture()


def add_one_only(add_one, twice, x, n_steps):
    stream = cp.cuda.Stream(non_blocking=True)
    with stream:
        stream.begin_capture()
        _steps(add_one, twice, x, n_steps, order=("add",))
        return stream.end_capture()


WRONG = {
    "time_kernel": [
        Wrong("events on another stream", events_on_default_stream, "an event was recorded on the default stream"),
        Wrong("read before waiting", read_before_waiting, "the time was read before the host waited for end"),
        Wrong("events swapped", events_swapped, "the events are swapped"),
        Wrong("no events", no_events, "no event was recorded before the launch"),
        Wrong("start after launch", start_after_launch, "no event was recorded before the launch"),
        Wrong("wrong unit", seconds_not_ms, "ms elapsed_time gave: return that number itself"),
        Wrong("launch on default stream", launch_on_default_stream, "the kernel ran on the default stream"),
    ],
    "pipeline": [
        Wrong("one launch", one_launch, "the whole array went in one launch"),
        Wrong("one stream", one_stream, "chunks used 1 stream"),
        Wrong("pageable memory", pageable, "ordinary (pageable) host memory"),
        Wrong("copy without stream", copy_without_stream, "was made without stream="),
        Wrong("never synchronized", never_synchronized, "had finished copying it back"),
        Wrong("last stream only", last_stream_only, "had finished copying it back"),
        Wrong("kernel on another stream", kernel_on_next_stream, "reads device memory that a copy to the GPU on"),
        Wrong("whole copy", whole_copy_then_chunks, "1 copy went to the GPU"),
        Wrong("launch on default stream", launch_on_default, "a launch went to the default stream"),
    ],
    "capture_steps": [
        Wrong("launched outside the capture", launched_outside_the_capture, "x changed while"),
        Wrong("capture on the default stream", capture_on_default_stream, "the capture failed"),
        Wrong("graph not returned", graph_not_returned, "returned None; return the graph"),
        Wrong("graph launched inside", graph_launched_inside, "x changed while"),
        Wrong("order swapped", order_swapped, "the graph runs twice before add_one"),
        Wrong("one round short", one_round_short, "round(s) of add_one then twice, not n_steps"),
        Wrong("one kernel only", add_one_only, "holds only one of the two kernels"),
    ],
}
