"""Wrong answers for helpers/problems/nb10.py (cuda-python). All are caught in CPU mode."""

import numpy as np

from . import Wrong


def never_raises(result):
    err, *values = result
    return values[0] if len(values) == 1 else tuple(values) if values else None


def always_tuple(result):
    err, *values = result
    if int(err) != 0:
        raise RuntimeError(err.name)
    return tuple(values)


def nameless_error(result):
    err, *values = result
    if int(err) != 0:
        raise RuntimeError("CUDA call failed")
    return None if not values else values[0] if len(values) == 1 else tuple(values)


def values_not_addresses(*args):
    storage = [np.array([a], dtype=a.dtype) for a in args]
    return np.array([int(a) for a in args], dtype=np.uint64), storage


def all_float64(*args):
    storage = [np.array([a], dtype=np.float64) for a in args]
    return np.array([s.ctypes.data for s in storage], dtype=np.uint64), storage


def address_list(*args):
    storage = [np.array([a], dtype=a.dtype) for a in args]
    return [s.ctypes.data for s in storage], storage


def returns_ptx(src, arch):
    from helpers import cuda_c

    return cuda_c.compile(src, target="ptx", arch=arch)


def core_ptx(src, arch):
    from cuda.core import Program, ProgramOptions

    return bytes(Program(src, code_type="c++", options=ProgramOptions(arch=arch)).compile("ptx").code)


def fixed_arch(src, arch):
    from cuda.core import Program, ProgramOptions

    return bytes(Program(src, code_type="c++", options=ProgramOptions(arch="sm_75")).compile("cubin").code)


def swallows_errors(src, arch):
    from cuda.core import Program, ProgramOptions

    try:
        return bytes(Program(src, code_type="c++", options=ProgramOptions(arch=arch)).compile("cubin").code)
    except Exception:
        return b""


def object_code(src, arch):
    from cuda.core import Program, ProgramOptions

    return Program(src, code_type="c++", options=ProgramOptions(arch=arch)).compile("cubin")


WRONG = {
    "check_result": [
        Wrong("never raises", never_raises, "must raise"),
        Wrong("always a tuple", always_tuple, "on its own"),
        Wrong("error not named", nameless_error, "does not name the error"),
    ],
    "kernel_params": [
        Wrong("values, not addresses", values_not_addresses, "ADDRESS"),
        Wrong("wrong dtype", all_float64, "own dtype"),
        Wrong("list, not array", address_list, "uint64 array"),
    ],
    "to_cubin": [
        Wrong("ptx", returns_ptx, "PTX"),
        Wrong("cuda.core ptx", core_ptx, "PTX"),
        Wrong("ignores arch", fixed_arch, "ProgramOptions(arch=arch)"),
        Wrong("swallows errors", swallows_errors, "did not raise"),
        Wrong("ObjectCode, not bytes", object_code, "return bytes"),
    ],
}
WRONG_GPU = {}


def _core():
    from helpers.standins import library

    return library("cuda.core")


def launch_python_float(stream, kernel, x, y, out, a):
    core, n = _core(), out.size
    config = core.LaunchConfig(grid=(n + 255) // 256, block=256)
    core.launch(stream, config, kernel, x.data.ptr, y.data.ptr, out.data.ptr, a, np.int32(n))


def launch_floor_grid(stream, kernel, x, y, out, a):
    core, n = _core(), out.size
    config = core.LaunchConfig(grid=max(1, n // 256), block=256)
    core.launch(stream, config, kernel, x.data.ptr, y.data.ptr, out.data.ptr, np.float32(a), np.int32(n))


def launch_swapped_inputs(stream, kernel, x, y, out, a):
    core, n = _core(), out.size
    config = core.LaunchConfig(grid=(n + 255) // 256, block=256)
    core.launch(stream, config, kernel, y.data.ptr, x.data.ptr, out.data.ptr, np.float32(a), np.int32(n))


WRONG["core_launch"] = [
    Wrong("Python float for float a", launch_python_float, "np.float32(a)"),
    Wrong("floor division grid", launch_floor_grid, "ceiling division"),
    Wrong("x and y swapped", launch_swapped_inputs, "not a * x + y"),
]


def _config(core, n):
    return core.LaunchConfig(grid=(n + 255) // 256, block=256)


def launch_nothing(stream, kernel, x, y, out, a):  # right numbers, no kernel: CuPy's own arithmetic
    out[...] = np.float32(a) * x + y


def launch_on_a_new_stream(stream, kernel, x, y, out, a):
    core, n = _core(), out.size
    args = (x.data.ptr, y.data.ptr, out.data.ptr, np.float32(a), np.int32(n))
    core.launch(core.Device().create_stream(), _config(core, n), kernel, *args)


def launch_twice(stream, kernel, x, y, out, a):
    core, n = _core(), out.size
    for _ in range(2):
        core.launch(stream, _config(core, n), kernel, x.data.ptr, y.data.ptr, out.data.ptr, np.float32(a), np.int32(n))


def launch_grid_block_swapped(stream, kernel, x, y, out, a):
    core, n = _core(), out.size
    config = core.LaunchConfig(grid=256, block=(n + 255) // 256)
    core.launch(stream, config, kernel, x.data.ptr, y.data.ptr, out.data.ptr, np.float32(a), np.int32(n))


def launch_then_clear_x(stream, kernel, x, y, out, a):
    core, n = _core(), out.size
    core.launch(stream, _config(core, n), kernel, x.data.ptr, y.data.ptr, out.data.ptr, np.float32(a), np.int32(n))
    stream.sync()
    x[...] = 0


def cubin_as_hex(src, arch):
    from cuda.core import Program, ProgramOptions

    return bytes(Program(src, code_type="c++", options=ProgramOptions(arch=arch)).compile("cubin").code).hex()


WRONG["core_launch"] += [
    Wrong("no launch, CuPy arithmetic", launch_nothing, "no kernel was launched"),
    Wrong("another stream, never synchronized", launch_on_a_new_stream, "another stream"),
    Wrong("launched twice", launch_twice, "launched 2 times"),
    Wrong("grid and block swapped", launch_grid_block_swapped, "grid and block are swapped"),
    Wrong("input cleared after the launch", launch_then_clear_x, "x or y changed"),
]
WRONG["to_cubin"] += [Wrong("hex string", cubin_as_hex, "hex string")]
