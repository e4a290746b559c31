"""Notebook 03 - memory: host and device arrays, implicit copies, events, bandwidth.

Every exercise here runs in CPU mode too: the questions are about what the code *does*, and the
one kernel exercise checks which arrays the learner hands to the kernel, not how fast it runs.
"""

from __future__ import annotations

import numpy as np
from numba import cuda

from helpers.exercises import ApproxFunctionExercise, DevicePipelineExercise, Floats, Ints, ValueExercise, register

# ----------------------------------------------------------------------------- value exercises

right_allocation = ValueExercise(
    prompt=(
        "A kernel writes every element of its output. d_x = cuda.to_device(x) holds its float32 input. "
        "Which output allocation is best? 1: cuda.to_device(np.zeros_like(x))  2: cuda.device_array_like(d_x)  "
        "3: cuda.device_array(x.size)  4: np.zeros_like(x). Answer with the number."
    ),
    answer=2,
    choices={
        1: "cuda.to_device(np.zeros_like(x))",
        2: "cuda.device_array_like(d_x)",
        3: "cuda.device_array(x.size)",
        4: "np.zeros_like(x)",
    },
    explanation="device_array_like(d_x) allocates device memory of the right shape and dtype and copies nothing; "
    "the kernel overwrites every element, so its undefined starting contents do not matter.",
    mistakes={
        1: "it works, but it sends n zeros over the bus for nothing: the kernel overwrites every element anyway.",
        3: "cuda.device_array defaults to float64: twice the memory and the traffic, and a different dtype from x.",
        4: "that is a host (NumPy) array: Numba would copy it to the device and back on every launch.",
    },
    hints=(
        "Which option copies nothing and gets the shape and the dtype right?",
        "Copying zeros is wasted work when every element is overwritten; check the default dtype of cuda.device_array.",
    ),
)

implicit_copies = ValueExercise(
    prompt=(
        "x and out are NumPy arrays. How many host<->device copies does this loop make?\n"
        "    for step in range(10):\n"
        "        scale[blocks, threads](x, np.float32(2.0), out)"
    ),
    answer=40,
    explanation="Each launch copies both NumPy arrays to the device and both back (Numba cannot know which ones "
    "the kernel wrote): 4 copies per launch, 10 launches. The scalar is passed by value, not copied as an array.",
    mistakes={
        20: "Numba copies every NumPy argument back after the launch, not only out: it cannot tell which "
        "arrays the kernel wrote.",
        4: "the copies happen on every launch: Numba does not keep arrays on the device between launches.",
        2: "the copies happen on every launch, and in both directions for every NumPy argument.",
        60: "the scalar np.float32(2.0) is passed by value with the launch, not copied like an array.",
        30: "each NumPy argument is copied both ways; the scalar is not copied at all.",
    },
    hints=(
        "Count per launch: which arguments are arrays, and in which directions does Numba copy them?",
        "Two NumPy arrays, each copied in before and out after every launch.",
    ),
)

event_order = ValueExercise(
    prompt=(
        "Put these steps in the right order to time one kernel with CUDA events, as a tuple of capital letters, "
        "e.g. ('A', 'B', 'C', 'D', 'E').  A: end.synchronize()  B: start.record()  C: kernel[blocks, "
        "threads](d_x, d_out)  "
        "D: end.record()  E: ms = cuda.event_elapsed_time(start, end)"
    ),
    answer=("B", "C", "D", "A", "E"),
    choices={
        "A": "end.synchronize()",
        "B": "start.record()",
        "C": "kernel[blocks, threads](d_x, d_out)",
        "D": "end.record()",
        "E": "ms = cuda.event_elapsed_time(start, end)",
    },
    explanation="Record start, queue the kernel, record end, wait until the GPU has reached end, then read the time.",
    mistakes={
        (
            "B",
            "C",
            "D",
            "E",
            "A",
        ): "the elapsed time is read before end.synchronize(): the GPU may not have reached `end` yet.",
        (
            "B",
            "C",
            "A",
            "D",
            "E",
        ): "end.synchronize() before end.record() waits for nothing: record the event first, then wait for it.",
        ("B", "D", "C", "A", "E"): "end is recorded before the kernel is queued, so the time covers nothing.",
        ("C", "B", "D", "A", "E"): "start is recorded after the kernel was queued, so the kernel may be missed.",
    },
    hints=(
        "Events are stamped in the GPU's queue, in the order you record them around the launch.",
        "record, launch, record, then wait for the last event before asking for the time.",
    ),
)

# ----------------------------------------------------------------------------- bandwidth


def _bandwidth_gbs(nbytes, ms):
    return nbytes / (ms * 1e-3) / 1e9


bandwidth_gbs = ApproxFunctionExercise(
    prompt="Return the bandwidth in GB/s (1 GB = 10**9 bytes) of moving nbytes bytes in ms milliseconds.",
    reference=_bandwidth_gbs,
    inputs={"nbytes": Ints(1, 10**10), "ms": Floats(0.001, 100.0, decimals=3)},
    edge_cases=((64_000_000, 0.032), (400_000_000, 16.0), (1_000_000_000, 1000.0), (4, 0.001)),
    mistakes=(
        (
            lambda nbytes, ms: nbytes / ms / 1e9,
            "ms is in milliseconds: convert it to seconds (ms / 1000) before dividing.",
        ),
        (
            lambda nbytes, ms: 8 * nbytes / (ms * 1e-3) / 1e9,
            "that is gigabits per second: bandwidth here counts bytes, not bits.",
        ),
        (lambda nbytes, ms: nbytes / (ms * 1e-3) / 2**30, "that is GiB/s (2**30 bytes); a GB here is 10**9 bytes."),
        (lambda nbytes, ms: nbytes / (ms * 1e-3), "that is bytes per second: divide by 10**9 for GB/s."),
    ),
    hints=(
        "Bandwidth is bytes per second, and ms is in milliseconds.",
        "nbytes / (ms / 1000) is bytes per second; divide that by 1e9 for GB/s.",
    ),
)

# ----------------------------------------------------------------------------- device pipeline


@cuda.jit
def _twice_plus_one(x, out):
    # The kernel the grader hands to the learner's function (through a spy that watches the launch).
    i = cuda.grid(1)
    if i < out.size:
        out[i] = 2 * x[i] + 1


def _run_on_device(kernel, x):
    d_x = cuda.to_device(x)  # one copy in
    d_out = cuda.device_array_like(d_x)  # output on the device: same shape and dtype, no copy
    threads = 128
    blocks = (x.size + threads - 1) // threads
    kernel[blocks, threads](d_x, d_out)  # device arrays only: no implicit copies
    return d_out.copy_to_host()  # one copy out


run_on_device = DevicePipelineExercise(
    prompt=(
        "Write run_on_device(kernel, x): copy x to the device, allocate the output there, launch "
        "kernel[blocks, threads](d_x, d_out) over every element, and return the result as a NumPy array. Exactly "
        "one copy in (x) and one copy out (the result): the check counts them."
    ),
    reference=_run_on_device,
    kernel=_twice_plus_one,
    expect=lambda x: 2 * x + np.float32(1),
    hints=(
        "cuda.to_device(x) copies the input; cuda.device_array_like(d_x) makes the output without a copy.",
        "Round the number of blocks up so that every element gets a thread.",
        "The kernel writes into device memory: finish with return d_out.copy_to_host().",
    ),
)

EXERCISES = register(__name__, globals())
