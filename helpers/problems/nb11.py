"""Notebook 11 - interop: the CUDA array interface, zero-copy views, and choosing a tool."""

from numba import cuda

from helpers.exercises import FunctionExercise, In, KernelExercise, Out, Scalar, ValueExercise, per_element, register


@cuda.jit
def _saxpy(a, x, y, out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = a * x[i] + y[i]


saxpy = KernelExercise(
    prompt="Write the Numba version of the course's SAXPY: out[i] = a * x[i] + y[i], one thread per element.",
    args=(Scalar("a"), In("x"), In("y"), Out("out")),
    expect=lambda a, x, y: a * x + y,
    reference=_saxpy,
    launch=per_element(32, 128, 64),
    rtol=1e-5,
    atol=1e-5,
    budgets={
        "global_reads_per_thread": (
            2,
            "each thread reads its own x[i] and y[i] once: one thread per element, i = cuda.grid(1), "
            "not a loop over other threads' elements.",
        )
    },
    hints=("i = cuda.grid(1); the last block sticks out past the end.", "if i < out.size: out[i] = a * x[i] + y[i]"),
)

# ----------------------------------------------------------------------------- __cuda_array_interface__


class FakeDeviceArray:
    """Carries only a __cuda_array_interface__ dict, like any CUDA array seen from outside."""

    _wire_interface = True  # crosses to a graded notebook's process as that dict (helpers._wire)

    def __init__(self, shape, typestr, strides):
        self.__cuda_array_interface__ = {
            "shape": shape,
            "typestr": typestr,
            "strides": strides,
            "data": (0x7F0000000000, False),
            "version": 3,
        }

    def __repr__(self):
        cai = self.__cuda_array_interface__
        return f"<array shape={cai['shape']} typestr={cai['typestr']!r} strides={cai['strides']}>"


def _packed(dims, itemsize):
    """True when the (extent, stride) pairs, innermost first, leave no gaps."""
    step = itemsize
    for extent, stride in dims:
        if extent > 1 and stride != step:
            return False
        step *= extent
    return True


def _layout(obj):
    cai = obj.__cuda_array_interface__
    if cai["strides"] is None:  # the interface's shorthand for C-contiguous
        return "C"
    itemsize = int(cai["typestr"][2:])
    dims = list(zip(cai["shape"], cai["strides"]))
    if _packed(reversed(dims), itemsize):
        return "C"
    if _packed(dims, itemsize):
        return "F"
    return "strided"


class _Arrays:
    """Random 2-D or 3-D arrays: C-ordered (strides given or None), Fortran-ordered, sliced along any axis
    of either order (every other row, column or plane), or with axes transposed."""

    def draw(self, rng):
        ndim = int(rng.integers(2, 4))
        shape = [int(v) for v in rng.integers(2, 6, size=ndim)]
        itemsize = int(rng.choice([4, 8]))
        typestr = {4: "<f4", 8: "<f8"}[itemsize]
        kind = rng.choice(["none", "C", "F", "sliced", "transposed"])
        if kind == "none":
            return FakeDeviceArray(tuple(shape), typestr, None)
        fortran = kind == "F" or (kind != "C" and rng.random() < 0.5)
        gap = int(rng.integers(ndim)) if kind == "sliced" else -1  # the axis whose every other element is kept
        strides, step = [0] * ndim, itemsize
        for d in range(ndim) if fortran else range(ndim - 1, -1, -1):
            strides[d] = step * (2 if d == gap else 1)
            step *= shape[d] * (2 if d == gap else 1)
        if kind == "transposed":
            order = [int(v) for v in rng.permutation(ndim)]
            shape, strides = [shape[d] for d in order], [strides[d] for d in order]
        return FakeDeviceArray(tuple(shape), typestr, tuple(strides))


layout = FunctionExercise(
    prompt="Write layout(obj) that reads obj.__cuda_array_interface__ and returns 'C' (row-major, packed), 'F' "
    "(column-major, packed) or 'strided' (anything else, e.g. every other column). Strides are in bytes; "
    "strides None means C-contiguous.",
    reference=_layout,
    inputs={"obj": _Arrays()},
    trials=80,
    mistakes=(
        (
            lambda obj: "strided" if obj.__cuda_array_interface__["strides"] is None else _layout(obj),
            "strides None is the interface's shorthand for C-contiguous.",
        ),
    ),
    hints=(
        "A packed C array's last stride is the itemsize (int(typestr[2:])), and each stride before it is the next "
        "stride times the next extent.",
        "For 'F' check the same from the first dimension instead of the last.",
    ),
)

zero_copy = ValueExercise(
    prompt="d = cuda.to_device(np.zeros(4, np.float32)); c = cupy.asarray(d); c[0] = 7. What is d.copy_to_host()[0]?",
    answer=7.0,
    tolerance=0.0,
    mistakes={
        0.0: "cupy.asarray of an object with __cuda_array_interface__ makes a zero-copy view: c and d share memory."
    },
    explanation="cupy.asarray reads d.__cuda_array_interface__ and wraps the same device pointer; nothing is copied.",
    hints=("Does cupy.asarray copy device memory it can already address?",),
)

choose_tool = ValueExercise(
    prompt="You have an existing .cu file of CUDA C kernels and want NumPy-like arrays, reductions and FFTs around "
    "them with the least code. Which library: 'numba', 'cupy', 'pycuda' or 'cuda.core'?",
    answer="cupy",
    choices=("numba", "cupy", "pycuda", "cuda.core"),
    mistakes={
        "numba": "Numba compiles Python kernels; your kernels are CUDA C already.",
        "pycuda": "PyCUDA runs CUDA C, but its array library is small: no FFTs, few reductions.",
        "cuda.core": "cuda.core compiles and launches CUDA C, but it has no array library at all.",
    },
    explanation="cupy.RawModule loads the .cu source and CuPy's NumPy-compatible arrays do the rest.",
    hints=("Which library has both RawModule and a NumPy-compatible array type?",),
)

EXERCISES = register(__name__, globals())
