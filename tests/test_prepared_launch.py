"""helpers.prepared_launch: the parameters it packs are the ones Numba's compiled kernel declares (read
from the PTX Numba's own compiler makes), and in CPU mode a prepared launch runs the kernel."""

import re

import numba
import numpy as np
import pytest
from numba import cuda

from helpers import prepared_launch
from helpers.errors import UnsupportedByTracer
from helpers.prepared_launch import PrepareError, numba_parameters, prepare
from helpers.ptx import numba_run

PTX_SIZES = {"u8": 1, "b8": 1, "s8": 1, "u16": 2, "b16": 2, "s16": 2, "u32": 4, "b32": 4, "s32": 4, "f32": 4}
PTX_SIZES.update({"u64": 8, "b64": 8, "s64": 8, "f64": 8})


class DeviceView:
    """What a device array shows a prepared launch: only its CUDA array interface."""

    def __init__(self, host, ptr=0x7F0000001000, strides=True):
        self.__cuda_array_interface__ = {
            "shape": host.shape,
            "typestr": host.dtype.str,
            "data": (ptr, False),
            "strides": host.strides if strides else None,
            "version": 3,
        }


@cuda.jit
def mixed(a, x, m, flag, n, out):
    i = cuda.grid(1)
    if i < n and flag:
        out[i] = a * x[i] + m[i, 0]


def _declared_sizes(kernel, args) -> list:
    try:
        ptx = numba_run.compile(kernel, args)
    except UnsupportedByTracer as e:  # no NVVM wheel on this machine
        pytest.skip(f"Numba's compiler is not available: {e}")
    body = ptx[ptx.index(".entry") :]
    return [PTX_SIZES[t] for t in re.findall(r"\.param \.(\w+) [\w$]+", body[: body.index(")")])]


def test_packed_words_match_the_parameters_numba_declares():
    x = np.arange(8, dtype=np.float32)
    m = np.ones((8, 3), dtype=np.float64)
    out = np.zeros(8, dtype=np.float32)
    host_args = (np.float32(2.0), x, m, True, np.int64(8), out)
    declared = _declared_sizes(mixed, host_args)
    argtypes = tuple(numba.typeof(a) for a in host_args)
    views = (np.float32(2.0), DeviceView(x), DeviceView(m, ptr=0x7F0000002000), True, np.int64(8), DeviceView(out))
    params = numba_parameters(views, argtypes)
    assert list(params.sizes) == declared
    # the 2-D array: its data pointer, then shape (8, 3) and strides in bytes (24, 8)
    words = [int(w) for w in params.words]
    assert words[8:17] == [0, 0, 24, 8, 0x7F0000002000, 8, 3, 24, 8]


def test_contiguous_arrays_without_strides_get_c_order_strides():
    m = np.zeros((4, 5), dtype=np.int32)
    params = numba_parameters((DeviceView(m, strides=False),), (numba.typeof(m),))
    assert [int(w) for w in params.words[-4:]] == [4, 5, 20, 4]


@pytest.mark.parametrize(
    "args, types, words",
    [
        ((np.zeros(3, np.float32),), (numba.float32[::1],), "not on the device"),
        ((DeviceView(np.zeros(3, np.float64)),), (numba.float32[::1],), "not the array(float32"),
        ((DeviceView(np.zeros((3, 3), np.float32)),), (numba.float32[::1],), "not the array(float32"),
        ((1.0, 2.0), (numba.float32,), "takes 1 arguments and 2 were given"),
        ((1j,), (numba.complex64,), "complex64; a prepared launch passes arrays and plain numbers only"),
    ],
)
def test_arguments_it_cannot_pass_are_named(args, types, words):
    with pytest.raises(PrepareError, match=re.escape(words)):
        numba_parameters(args, types)


def test_scalars_are_passed_in_the_kernels_types():
    params = numba_parameters((3, True, 2.5), (numba.int32, numba.boolean, numba.float64))
    assert [w.dtype for w in params.words] == [np.int32, np.uint8, np.float64]
    assert params.kinds == ("int32", "bool", "float64")


def test_each_packed_slot_holds_its_value_and_the_pointer_array_addresses_them():
    params = numba_parameters((np.float32(1.5), 7), (numba.float32, numba.int64))
    slots, pointers = prepared_launch._packed(params)
    assert np.frombuffer(slots[0:1].tobytes()[:4], np.float32)[0] == 1.5
    assert int(slots[1]) == 7
    assert list(pointers - pointers[0]) == [0, 8]
    assert int(pointers[0]) == slots.ctypes.data


@cuda.jit
def add_one(x):
    i = cuda.grid(1)
    if i < x.size:
        x[i] += 1


def test_a_prepared_launch_runs_the_kernel_in_cpu_mode_each_time_it_is_called():
    x = np.zeros(300, dtype=np.float32)
    go = prepare(add_one, 3, 128, x)
    for _ in range(3):
        go()
    assert go.parameters is None  # nothing to pack on the simulator
    np.testing.assert_array_equal(x, 3)
