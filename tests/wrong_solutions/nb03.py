"""Wrong answers for helpers/problems/nb03.py (memory: allocations, copies, events, bandwidth, device pipeline)."""

import numpy as np
from numba import cuda

from . import Wrong

# -- run_on_device: each is the mistake a learner really makes with explicit transfers


def pipeline_numpy_args(kernel, x):
    out = np.empty_like(x)
    threads = 128
    kernel[(x.size + threads - 1) // threads, threads](x, out)  # implicit copies both ways
    return out


def pipeline_returns_device(kernel, x):
    d_x = cuda.to_device(x)
    d_out = cuda.device_array_like(d_x)
    kernel[(x.size + 127) // 128, 128](d_x, d_out)
    return d_out  # forgot copy_to_host


def pipeline_float64_output(kernel, x):
    d_x = cuda.to_device(x)
    d_out = cuda.device_array(x.size)  # dtype defaults to float64
    kernel[(x.size + 127) // 128, 128](d_x, d_out)
    return d_out.copy_to_host()


def pipeline_floor_blocks(kernel, x):
    d_x = cuda.to_device(x)
    d_out = cuda.device_array_like(d_x)
    kernel[x.size // 32, 32](d_x, d_out)  # floor division: the last partial block is never launched
    return d_out.copy_to_host()


def pipeline_hard_coded_grid(kernel, x):
    d_x = cuda.to_device(x)
    d_out = cuda.device_array_like(d_x)
    kernel[1, 64](d_x, d_out)  # enough for the notebook's example, not for every n
    return d_out.copy_to_host()


def pipeline_copies_input_back(kernel, x):
    d_x = cuda.to_device(x)
    d_out = cuda.device_array_like(d_x)
    kernel[(x.size + 127) // 128, 128](d_x, d_out)
    return d_x.copy_to_host()  # the input, not the output


def pipeline_no_launch(kernel, x):
    return cuda.to_device(x).copy_to_host()


def pipeline_kernel_without_config(kernel, x):
    d_x = cuda.to_device(x)
    d_out = cuda.device_array_like(d_x)
    kernel(d_x, d_out)
    return d_out.copy_to_host()


def pipeline_zeros_copied_in(kernel, x):
    d_x = cuda.to_device(x)
    d_out = cuda.to_device(np.zeros_like(x))  # n zeros over the bus for an output the kernel overwrites
    kernel[(x.size + 127) // 128, 128](d_x, d_out)
    return d_out.copy_to_host()


def pipeline_extra_round_trip(kernel, x):
    d_x = cuda.to_device(x)
    d_x = cuda.to_device(d_x.copy_to_host())  # there and back again for nothing
    d_out = cuda.device_array_like(d_x)
    kernel[(x.size + 127) // 128, 128](d_x, d_out)
    return d_out.copy_to_host()


WRONG = {
    "right_allocation": [
        Wrong("copies zeros", 1, "for nothing"),
        Wrong("float64 default", 3, "float64"),
        Wrong("host array", 4, "host (NumPy) array"),
        # a quiz answer in another form is told the form: the option's number, a whole number
        Wrong("wrong dtype", 2.0, "as a whole number: 2, not 2.0"),
        Wrong("a letter for the number", "b", "the option's number (1, 2, 3 or 4), not the letter 'b'"),
        Wrong("the option's text", "cuda.device_array_like(d_x)", "not the option's text"),
        Wrong("number and text", "2: cuda.device_array_like(d_x)", "alone: 2"),
    ],
    "implicit_copies": [
        Wrong("only the output comes back", 20, "every NumPy argument back"),
        Wrong("copies once", 4, "every launch"),
        Wrong("scalar copied", 60, "passed by value"),
        Wrong("wrong dtype", 40.0, "a float"),
    ],
    "event_order": [
        Wrong("reads before waiting", ("B", "C", "D", "E", "A"), "before end.synchronize()"),
        Wrong("waits before recording", ("B", "C", "A", "D", "E"), "waits for nothing"),
        Wrong("end before kernel", ("B", "D", "C", "A", "E"), "covers nothing"),
        Wrong("too few steps", ("B", "C", "D", "E"), "5 values"),
        Wrong("not a tuple", "BCDAE", "tuple of 5"),
        Wrong("numbers for letters", (2, 3, 4, 1, 5), "a capital letter ('A', 'B', 'C', 'D' or 'E'), not the number 2"),
        Wrong("the steps' code", ("start.record()", "C", "D", "A", "E"), "'start.record()' is 'B'"),
    ],
    "bandwidth_gbs": [
        Wrong("ms as seconds", lambda nbytes, ms: nbytes / ms / 1e9, "milliseconds"),
        Wrong("bits", lambda nbytes, ms: nbytes * 8 / (ms / 1000) / 1e9, "gigabits"),
        Wrong("GiB", lambda nbytes, ms: nbytes / (ms / 1000) / 1024**3, "GiB/s"),
        Wrong("bytes per second", lambda nbytes, ms: nbytes * 1000 / ms, "bytes per second"),
        Wrong("hard-coded", lambda nbytes, ms: 2000.0, "hard-coded"),
        Wrong("raises", lambda nbytes, ms: nbytes / (ms - ms), "ZeroDivisionError", status="error"),
        Wrong(
            "floor division",
            lambda nbytes, ms: nbytes // (ms / 1000) // 1e9,
            "rounded down to whole numbers by the floor (integer) division `nbytes // (ms / 1000) // 1e9`",
        ),
    ],
    "run_on_device": [
        Wrong("extra round trip", pipeline_extra_round_trip, "an extra round trip"),
        Wrong("extra copy in", pipeline_zeros_copied_in, "2 copies to the device and 1 back"),
        Wrong("implicit transfers", pipeline_numpy_args, "implicitly"),
        Wrong("returns the device array", pipeline_returns_device, "copy_to_host"),
        Wrong("wrong dtype", pipeline_float64_output, "defaults to float64"),
        Wrong("skips last partial block", pipeline_floor_blocks, "round the number of blocks up"),
        Wrong("hard-coded", pipeline_hard_coded_grid, "only 64 threads"),
        Wrong("copies the input back", pipeline_copies_input_back, "should be"),
        Wrong("never launched", pipeline_no_launch, "never launched"),
        Wrong("no launch configuration", pipeline_kernel_without_config, "launch configuration", status="error"),
    ],
}


def pipeline_launched_twice(kernel, x):
    d_x = cuda.to_device(x)
    d_out = cuda.device_array_like(d_x)
    for _ in range(2):  # the same result twice: the second launch is wasted GPU time
        kernel[(x.size + 127) // 128, 128](d_x, d_out)
    return d_out.copy_to_host()


def pipeline_blocks_times_threads(kernel, x):
    d_x = cuda.to_device(x)
    d_out = cuda.device_array_like(d_x)
    kernel[(x.size + 127) * 128, 128](d_x, d_out)  # * for //: millions of idle threads
    return d_out.copy_to_host()


WRONG["run_on_device"] += [
    Wrong("launched twice", pipeline_launched_twice, "launched the kernel 2 times"),
    Wrong(
        "blocks multiplied, not divided", pipeline_blocks_times_threads, "more than the 1 that cover", status="error"
    ),
]
