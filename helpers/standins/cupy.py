"""CPU stand-in for the part of CuPy the course uses: arrays, and CUDA C launched three ways.

    cp = helpers.standins.library("cupy")      # real CuPy on a GPU, this module in CPU mode
    k = cp.RawKernel(src, "saxpy"); k((grid,), (block,), (x_d, y_d, out_d, np.float32(2), np.int32(n)))

Why: notebook 08 teaches CuPy's kernels, and their bugs (a Python float sent as a double, a
missing bounds check, a race) are worth seeing without a GPU. Arrays are NumPy arrays of a
subclass that stands for "in GPU memory": a kernel refuses a plain NumPy array, as CuPy does,
and ``.data.ptr`` is an address other stand-ins (cuda.core, the driver API) accept. Kernels are
compiled with NVRTC exactly as CuPy compiles them and run in helpers.ptx; scalars are passed as
CuPy passes them (a Python float as an 8-byte double). ``cp.cuda`` has streams, events and
capture into CUDA Graphs (helpers.standins.cupy_streams: launches run at once, or are recorded
while their stream captures); timing, memory pools and ``cupy.fuse`` need a GPU and say so.
"""

from __future__ import annotations

import re

import numpy as np

from .. import cuda_c
from ..errors import LearnerError, LearnerTypeError, LearnerValueError, shown
from . import _launch, cupy_linalg, cupy_streams

SUPPORTED = (
    "for CuPy runs RawKernel, RawModule, ElementwiseKernel and ReductionKernel launches on "
    "NumPy-backed arrays (asarray, asnumpy, arange, zeros, empty, random.random...)"
)
__version__ = "CPU stand-in"


class _MemoryPointer:
    """What ``cupy_array.data`` is: the address of the first element, as ``.ptr``."""

    def __init__(self, ptr: int):
        self.ptr = ptr

    def __int__(self):
        return self.ptr


class ndarray(np.ndarray):  # noqa: N801 - the name CuPy uses
    """An array "in GPU memory": NumPy underneath, refused by NumPy-only code paths that CuPy refuses."""

    @property
    def data(self):
        return _MemoryPointer(_launch.register(self))

    def __getitem__(self, key):
        # CuPy keeps an element on the device: x_d[i] is a 0-d cupy.ndarray (a view), never a NumPy
        # scalar, so code that needs a number must say int(...) or float(...) (CuPy 14.2 on an H200).
        got = super().__getitem__(key)
        if isinstance(got, np.ndarray):
            return got
        return super().__getitem__((*key, Ellipsis) if isinstance(key, tuple) else (key, Ellipsis))

    def __matmul__(self, other):  # a 2-D float product with CuPy's compute types (cupy_linalg.py)
        if cupy_linalg.modelled(self, other):
            return _dev(cupy_linalg.matmul(self, other))
        return super().__matmul__(other)

    def get(self, stream=None, order="C", out=None):
        """GPU -> host copy, as ``cupy.ndarray.get()``."""
        cupy_streams.refuse_sync_copy()
        host = np.array(self.view(np.ndarray), order=order)
        if out is not None:
            out[...] = host
            return out
        return host


def _dev(a) -> ndarray:
    a = np.ascontiguousarray(a).view(ndarray)
    _launch.register(a)
    return a


def asarray(a, dtype=None, order=None, *, blocking=False):
    """host -> "GPU": a copy, as ``cupy.asarray`` of a NumPy array."""
    return _dev(np.array(a, dtype=dtype, order=order or "C", copy=True))


def asnumpy(a, stream=None, order="C", out=None, *, blocking=True):
    """ "GPU" -> host: a plain NumPy array."""
    return a.get(order=order, out=out) if isinstance(a, ndarray) else np.asarray(a, order=order)


def _made(fn):
    def make(*args, **kwargs):
        try:
            made = fn(*args, **kwargs)
        except (TypeError, ValueError) as e:  # a negative size, an unknown dtype: NumPy's words, CuPy's refusal
            raise LearnerValueError(f"cupy.{fn.__name__} refused its arguments: {e}.") from None
        return _dev(made)

    make.__name__ = fn.__name__
    make.__doc__ = f"cupy.{fn.__name__}: numpy.{fn.__name__}, as an array in stand-in GPU memory."
    return make


arange, zeros, ones, empty, full, linspace = map(_made, (np.arange, np.zeros, np.ones, np.empty, np.full, np.linspace))
zeros_like, ones_like, empty_like, full_like = map(_made, (np.zeros_like, np.ones_like, np.empty_like, np.full_like))
abs, sqrt, exp, maximum, minimum, allclose = np.abs, np.sqrt, np.exp, np.maximum, np.minimum, np.allclose  # noqa: A001
float16, float32, float64, int32, int64, uint32, uint64 = (
    np.float16,
    np.float32,
    np.float64,
    np.int32,
    np.int64,
    np.uint32,
    np.uint64,
)
newaxis = np.newaxis
_core = cupy_linalg.core  # cuBLAS's compute types, modelled


def matmul(a, b, out=None):
    """cupy.matmul: cuBLAS's product with CuPy's compute types, modelled (cupy_linalg.py)."""
    return _dev(cupy_linalg.matmul(a, b, out))


def _random(size=None, dtype=float, out=None):
    """cupy.random.random(size, dtype): uniform in [0, 1), float32 or float64."""
    return _dev(np.random.default_rng().random(size, dtype=np.dtype(dtype)))


random = _launch.namespace("cupy.random", SUPPORTED, random=_random)
cuda = _launch.namespace(
    "cupy.cuda",
    SUPPORTED + "; " + cupy_streams.SUPPORTED,
    Stream=cupy_streams.Stream,
    Event=cupy_streams.Event,
    Graph=cupy_streams.Graph,
    get_current_stream=cupy_streams.get_current_stream,
    get_elapsed_time=cupy_streams.get_elapsed_time,
)


def __getattr__(name):
    if name.startswith("__"):
        raise AttributeError(name)
    raise _launch.needs_gpu(f"cupy.{name}", SUPPORTED)


def fuse(*args, **kwargs):
    raise _launch.needs_gpu("cupy.fuse", SUPPORTED)


# ----------------------------------------------------------------------------- kernel arguments
def _kernel_arg(pos, a, kernel):
    if isinstance(a, ndarray):
        return a
    if isinstance(a, np.ndarray):
        raise LearnerError(
            f"Argument {pos} of {kernel} is a NumPy array in host memory; CuPy refuses it (TypeError: Unsupported "
            "type numpy.ndarray): copy it to the GPU with cp.asarray(...)."
        )
    return a


class RawKernel:
    """``cupy.RawKernel(code, name, ...)``: a whole CUDA C kernel, launched as ``k(grid, block, args)``."""

    def __init__(
        self,
        code,
        name,
        options=(),
        backend="nvrtc",
        translate_cucomplex=False,
        *,
        enable_cooperative_groups=False,
        jitify=None,
    ):
        if enable_cooperative_groups or jitify or backend != "nvrtc":
            raise _launch.needs_gpu("A RawKernel with cooperative groups, jitify or nvcc", SUPPORTED)
        self.code, self.name, self.options = _launch.source_text(code, "RawKernel's code"), name, tuple(options)
        self._lowered = name

    def _ptx(self):
        return _launch.compile_ptx(self.code, self.options)[0]

    def __call__(self, grid, block, args, *, shared_mem=0):
        if not isinstance(args, tuple):
            raise LearnerError(f"{self.name}: the kernel's arguments go in one tuple, k(grid, block, (a, b, ...)).")
        args = [_kernel_arg(i, a, self.name) for i, a in enumerate(args)]
        ptx = self._ptx()  # compiled when called, captured or not
        cupy_streams.submit(
            lambda: _launch.run(
                "CuPy RawKernel",
                self.code,
                ptx,
                self._lowered,
                grid,
                block,
                args,
                shared=shared_mem,
                python_scalars="cupy",
            )
        )


class RawModule:
    """``cupy.RawModule(code=..., name_expressions=[...])``: several kernels; ``get_function(name)``."""

    def __init__(
        self,
        code=None,
        *,
        path=None,
        options=(),
        backend="nvrtc",
        translate_cucomplex=False,
        enable_cooperative_groups=False,
        name_expressions=None,
        jitify=None,
    ):
        if code is None or path is not None:
            raise _launch.needs_gpu("RawModule(path=...) (loading a binary)", SUPPORTED)
        self.code, self.options = _launch.source_text(code, "RawModule's code"), tuple(options)
        self.name_expressions = tuple(name_expressions or ())

    def get_function(self, name):
        ptx_text, lowered = _launch.compile_ptx(self.code, self.options, self.name_expressions)
        k = RawKernel(self.code, name, self.options)
        k._lowered = lowered.get(name, name)
        k._ptx = lambda: ptx_text
        return k


# ----------------------------------------------------------------------------- generated kernels
def _params(spec):
    """'float32 x, raw T y' -> [(type word, name, raw)]."""
    if not isinstance(spec, str):
        raise LearnerTypeError(f"the parameters must be a string such as 'float32 x, float32 y', not {shown(spec)}.")
    out = []
    for part in filter(None, (p.strip() for p in spec.split(","))):
        words = part.split()
        if len(words) < 2:
            raise LearnerValueError(f"cannot read parameter {part!r}: write 'type name', e.g. 'float32 x'.")
        out.append((words[-2], words[-1], words[0] == "raw"))
    return out


def _resolve_types(params, values, kernel):
    """{placeholder letter: dtype} from the arrays given for placeholder-typed parameters."""
    types = {}
    for (typ, _name, _raw), v in zip(params, values):
        if re.fullmatch(r"[A-Z]", typ) and isinstance(v, np.ndarray):
            types.setdefault(typ, v.dtype)
    for typ, name, _raw in params:
        if re.fullmatch(r"[A-Z]", typ) and typ not in types:
            raise LearnerError(f"{kernel}: the type {typ} of {name} cannot be worked out from the arguments given.")
    return types


def _broadcast(kernel, arrays) -> tuple:
    """The one shape the arrays broadcast to (CuPy's rule), or one sentence naming the shapes that do not fit."""
    try:
        return np.broadcast_shapes(*(a.shape for a in arrays))
    except ValueError:
        shapes = ", ".join(str(a.shape) for a in arrays)
        raise LearnerValueError(
            f"{kernel}: the arrays' shapes {shapes} do not broadcast to one shape: pass arrays of the same shape "
            "(or a scalar)."
        ) from None


def _scalar(kernel, name, dtype, value):
    """A scalar argument converted to its parameter's type, as CuPy converts it, or one sentence."""
    try:
        return dtype.type(value)
    except (TypeError, ValueError):
        raise LearnerTypeError(f"{kernel}: argument {name} must be an array or a number, not {shown(value)}.") from None


def _dtype(typ, types):
    return types[typ] if typ in types else np.dtype(typ)


def _typed_source(source, types):
    for letter, dt in types.items():
        source = source.replace(f"typedef float {letter};", f"typedef {cuda_c._CTYPES[dt.name]} {letter};")
    return source


class ElementwiseKernel:
    """``cupy.ElementwiseKernel(in_params, out_params, operation, name)``: the operation runs once per
    element, in the kernel CuPy generates around it (helpers.cuda_c.elementwise_source)."""

    def __init__(
        self,
        in_params,
        out_params,
        operation,
        name="kernel",
        reduce_dims=True,
        preamble="",
        no_return=False,
        return_tuple=False,
        **kwargs,
    ):
        self.in_params, self.out_params, self.operation, self.name = in_params, out_params, operation, name
        self.preamble, self.no_return, self.return_tuple = preamble, no_return, return_tuple
        self._ins, self._outs = _params(in_params), _params(out_params)

    def __call__(self, *args, size=None, block_size=None, **kwargs):
        ins, outs = self._ins, self._outs
        if len(args) not in (len(ins), len(ins) + len(outs)):
            raise LearnerError(f"{self.name} takes {len(ins)} or {len(ins) + len(outs)} arguments, not {len(args)}.")
        args = [_kernel_arg(i, a, self.name) for i, a in enumerate(args)]
        types = _resolve_types(ins + outs[: len(args) - len(ins)], args, self.name)
        arrays = [a for (_t, _n, raw), a in zip(ins + outs, args) if isinstance(a, np.ndarray) and not raw]
        shape = _broadcast(self.name, arrays) if arrays else (int(size or 0),)
        given = list(args[len(ins) :])
        for typ, _name, _raw in outs[len(given) :]:
            if re.fullmatch(r"[A-Z]", typ) and typ not in types:
                raise LearnerError(f"{self.name}: the output type {typ} cannot be worked out from the inputs.")
            given.append(empty(shape, _dtype(typ, types)))
        scalars, call = [], []
        for (typ, name, raw), a in zip(ins, args):
            if not isinstance(a, np.ndarray):
                scalars.append(name)
                call.append(_scalar(self.name, name, _dtype(typ, types), a))
            else:
                call.append(a if raw else np.ascontiguousarray(np.broadcast_to(a, shape)).view(ndarray))
        call += given
        n = int(np.prod(shape))
        src = (
            self.preamble
            + "\n"
            + _typed_source(
                cuda_c.elementwise_source(self.in_params, self.out_params, self.operation, self.name, tuple(scalars)),
                types,
            )
        )
        block = int(block_size or 128)
        if n:
            cupy_streams.submit(
                lambda: _launch.run(
                    "CuPy ElementwiseKernel", src, None, self.name, -(-n // block), block, [*call, np.int64(n)]
                )
            )
        if self.no_return:
            return None
        return tuple(given) if (len(given) > 1 or self.return_tuple) else given[0]


class ReductionKernel:
    """``cupy.ReductionKernel(in_params, out_params, map_expr, reduce_expr, post_map_expr, identity, name)``
    over the whole array (axis=None), run as helpers.cuda_c.reduction_source in one block of the
    threads CuPy would use: each thread folds its share, then a tree combines the partial results
    with reduce_expr, as on a GPU (so a reduce_expr right only for one element at a time is wrong
    here too). CuPy's order of the sum may still differ (compare with a tolerance)."""

    def __init__(
        self,
        in_params,
        out_params,
        map_expr,
        reduce_expr,
        post_map_expr,
        identity,
        name="reduce_kernel",
        reduce_type=None,
        reduce_dims=True,
        preamble="",
        options=(),
    ):
        self.parts = (in_params, out_params, map_expr, reduce_expr, post_map_expr, identity)
        self.name, self.reduce_type, self.preamble = name, reduce_type, preamble
        self._ins, self._outs = _params(in_params), _params(out_params)

    def __call__(self, *args, out=None, axis=None, keepdims=False, stream=None):
        if axis is not None or keepdims:
            raise _launch.needs_gpu(f"{self.name} with axis or keepdims", SUPPORTED + "; ReductionKernel reduces all")
        if cupy_streams.get_current_stream().is_capturing():
            raise _launch.needs_gpu(f"{self.name} inside a stream capture", cupy_streams.SUPPORTED)
        if len(args) != len(self._ins):
            raise LearnerError(f"{self.name} takes {len(self._ins)} input(s), not {len(args)}.")
        args = [_kernel_arg(i, a, self.name) for i, a in enumerate(args)]
        types = _resolve_types(self._ins, args, self.name)
        arrays = [a for a in args if isinstance(a, np.ndarray)]
        shape = _broadcast(self.name, arrays) if arrays else ()
        call = [np.ascontiguousarray(np.broadcast_to(np.asarray(a), shape)).reshape(-1) for a in args]
        for i, ((typ, _n, _r), a) in enumerate(zip(self._ins, call)):
            call[i] = a.astype(_dtype(typ, types), copy=False)
        results = [empty(1, _dtype(typ, types)) for typ, _n, _r in self._outs]
        src = (
            self.preamble
            + "\n"
            + _typed_source(cuda_c.reduction_source(*self.parts, self.name, self.reduce_type), types)
        )
        n = int(np.prod(shape))
        block = cuda_c.reduction_threads(n)
        _launch.run("CuPy ReductionKernel", src, None, self.name, 1, block, [*call, *results, np.int64(n)])
        got = [r.reshape(()) for r in results]
        if out is not None:
            out[...] = got[0]
            return out
        return got[0] if len(got) == 1 else tuple(got)
