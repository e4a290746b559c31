"""helpers.standins: the CPU stand-ins for CuPy, PyCUDA, cuda.core and the driver API.

Each stand-in is checked four ways: its launches of the course's kernels give NumPy's numbers; its
call signatures are the real library's (read from the installed CuPy, cuda.core and cuda.bindings,
whose Cython classes state them in the first line of their docstrings); a kernel that reads one
element past the end, or races on shared memory, gives one sentence naming kernel, thread and line;
and a Python float for a `float` parameter gives what the GPU gives (0.0 for 2.0 through CuPy,
cuda.core and a double in kernelParams; a TypeError-like refusal from PyCUDA's plain call).
"""

from __future__ import annotations

import ast
import ctypes
import inspect
import re

import numpy as np
import pytest

import helpers
from helpers import cuda_c
from helpers.errors import GPURequired, KernelError, LearnerError
from helpers.standins import cuda_core as core
from helpers.standins import cupy as cp
from helpers.standins import driver
from helpers.standins import pycuda as pc

SAXPY = r"""
extern "C" __global__ void saxpy(const float* x, const float* y, float* out, float a, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = a * x[i] + y[i];
}
"""
SAXPY_PAST_END = SAXPY.replace("i < n", "i <= n")  # one element past the end
RACE = r"""
extern "C" __global__ void shift(const float* x, float* out, int n)
{
    __shared__ float tile[64];
    int t = threadIdx.x;
    tile[t] = x[t];
    out[t] = tile[(t + 1) % 64];
}
"""
N = 300
rng = np.random.default_rng(7)
X = rng.random(N, dtype=np.float32)
Y = rng.random(N, dtype=np.float32)


def test_library_picks_the_stand_in_in_cpu_mode_and_the_real_module_on_a_gpu(monkeypatch):
    import cupy as real_cupy

    import helpers.standins as standins

    assert standins.library("cupy") is cp and standins.library("cuda.core") is core
    assert standins.library("cuda.bindings.driver") is driver
    monkeypatch.setattr(standins, "on_gpu", lambda: True)
    assert standins.library("cupy") is real_cupy
    with pytest.raises(ValueError, match="no CPU stand-in for 'numba'"):
        standins.library("numba")


# ----------------------------------------------------------------------------- numbers
def _cp_saxpy(src, a, n=N, x=X, y=Y):
    x_d, y_d, out_d = cp.asarray(x), cp.asarray(y), cp.full(n, -1, dtype=cp.float32)
    cp.RawKernel(src, "saxpy")(((n + 127) // 128,), (128,), (x_d, y_d, out_d, a, np.int32(n)))
    return cp.asnumpy(out_d)


def test_cupy_rawkernel_saxpy_matches_numpy():
    got = _cp_saxpy(SAXPY, np.float32(2.0))
    assert type(got) is np.ndarray and np.allclose(got, 2 * X + Y)


def test_cupy_elementwise_and_reduction_kernels_match_numpy():
    scaled = cp.ElementwiseKernel("float32 x, float32 y, float32 s", "float32 z", "z = s * (x - y)", "scaled_diff")
    z = scaled(cp.asarray(X), cp.asarray(Y), np.float32(10))
    assert np.allclose(cp.asnumpy(z), 10 * (X - Y))
    leaky = cp.ElementwiseKernel("T x, T alpha", "T y", "y = x > 0 ? x : alpha * x", "leaky")
    v = cp.asarray(X - 0.5)
    assert np.allclose(cp.asnumpy(leaky(v, np.float32(0.1))), np.where(X > 0.5, X - 0.5, 0.1 * (X - 0.5)))
    l2 = cp.ReductionKernel("float32 x", "float32 y", "x * x", "a + b", "y = sqrt(a)", "0", "l2")
    assert np.isclose(float(l2(cp.asarray(X))), np.sqrt((X.astype(np.float64) ** 2).sum()), rtol=1e-5)


def test_cupy_rawmodule_template_instantiations_match_numpy():
    src = r"""
template <typename T>
__global__ void scale(T* data, T factor, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) data[i] *= factor;
}
"""
    mod = cp.RawModule(code=src, name_expressions=["scale<float>", "scale<double>"])
    d = cp.arange(5, dtype=cp.float64)
    mod.get_function("scale<double>")((1,), (32,), (d, np.float64(0.5), np.int32(5)))
    f = cp.arange(5, dtype=cp.float32)
    mod.get_function("scale<float>")((1,), (32,), (f, np.float32(3), np.int32(5)))
    assert d.get().tolist() == [0, 0.5, 1, 1.5, 2] and f.get().tolist() == [0, 3, 6, 9, 12]


def test_pycuda_call_with_in_out_prepared_call_and_elementwise_match_numpy():
    src = SAXPY.replace('extern "C" ', "")  # SourceModule adds extern "C" itself
    saxpy = pc.SourceModule(src).get_function("saxpy")
    out = np.zeros(N, np.float32)
    x_in = X.copy()
    saxpy(pc.In(x_in), pc.In(Y), pc.Out(out), np.float32(2), np.int32(N), block=(128, 1, 1), grid=(3, 1))
    assert np.allclose(out, 2 * X + Y) and np.array_equal(x_in, X)
    x_d, y_d, out_d = (pc.mem_alloc(X.nbytes) for _ in range(3))
    pc.memcpy_htod(x_d, X)
    pc.memcpy_htod(y_d, Y)
    saxpy.prepare("PPPfi")
    saxpy.prepared_call((3, 1), (128, 1, 1), x_d, y_d, out_d, 2.0, N)  # letters pack Python numbers, as struct does
    back = np.zeros(N, np.float32)
    pc.memcpy_dtoh(back, out_d)
    assert np.allclose(back, 2 * X + Y)
    lincomb = pc.ElementwiseKernel("float a, float* x, float b, float* y, float* z", "z[i] = a * x[i] + b * y[i]")
    x_g, y_g = pc.gpuarray.to_gpu(X), pc.gpuarray.to_gpu(Y)
    z_g = pc.gpuarray.empty_like(x_g)
    lincomb(np.float32(2), x_g, np.float32(-1), y_g, z_g)
    assert np.allclose(z_g.get(), 2 * X - Y) and np.isclose(float(pc.gpuarray.sum(x_g).get()), X.sum())


def _core_saxpy(a, src=SAXPY, n=N):
    dev = core.Device(0)
    kernel = core.Program(src, "c++", core.ProgramOptions(arch=f"sm_{dev.arch}")).compile("cubin").get_kernel("saxpy")
    x_d, y_d, out_d = cp.asarray(X[:n]), cp.asarray(Y[:n]), cp.full(n, -1, dtype=cp.float32)
    config = core.LaunchConfig(grid=(n + 127) // 128, block=128)
    core.launch(dev.create_stream(), config, kernel, x_d.data.ptr, y_d.data.ptr, out_d.data.ptr, a, np.int32(n))
    return out_d.get()


def test_cuda_core_launch_with_raw_pointers_matches_numpy():
    assert np.allclose(_core_saxpy(np.float32(2)), 2 * X + Y)
    assert core.ProgramOptions is __import__("cuda.core", fromlist=["ProgramOptions"]).ProgramOptions


def _kernel_params(*args):
    storage = [np.array([a], dtype=a.dtype) for a in args]
    return np.array([s.ctypes.data for s in storage], dtype=np.uint64), storage


def _driver_saxpy(a, src=SAXPY, n=N):
    check = cuda_c.check
    module = check(driver.cuModuleLoadData(cuda_c.compile(src, target="cubin", arch="sm_90")))
    kernel = check(driver.cuModuleGetFunction(module, b"saxpy"))
    d_x, d_y, d_out = (check(driver.cuMemAlloc(X.nbytes)) for _ in range(3))
    check(driver.cuMemcpyHtoD(d_x, X.ctypes.data, X.nbytes))
    check(driver.cuMemcpyHtoD(d_y, Y.ctypes.data, Y.nbytes))
    params, _keep = _kernel_params(np.uint64(int(d_x)), np.uint64(int(d_y)), np.uint64(int(d_out)), a, np.int32(n))
    check(driver.cuLaunchKernel(kernel, (n + 127) // 128, 1, 1, 128, 1, 1, 0, None, params.ctypes.data, 0))
    out = np.full(N, -1, np.float32)
    check(driver.cuMemcpyDtoH(out.ctypes.data, d_out, out.nbytes))
    for d in (d_x, d_y, d_out):
        check(driver.cuMemFree(d))
    return out


def test_driver_cuLaunchKernel_reads_kernelParams_and_matches_numpy():
    assert np.allclose(_driver_saxpy(np.float32(2)), 2 * X + Y)
    assert cuda_c.check(driver.cuDeviceGetAttribute(driver.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_WARP_SIZE, 0)) == 32


# ----------------------------------------------------------------------------- the Python float
def test_a_python_float_for_a_float_parameter_reads_as_the_gpu_reads_it():
    want_zero = 0 * X + Y  # 2.0 as a double: a float parameter reads its four low bytes, all zero
    assert np.allclose(_cp_saxpy(SAXPY, 2.0), want_zero)
    assert np.allclose(_core_saxpy(2.0), want_zero)
    assert np.allclose(_driver_saxpy(np.float64(2.0)), want_zero)  # the double's address in kernelParams
    garbage = ctypes.c_float.from_buffer_copy(np.float64(0.1).tobytes()[:4]).value
    assert np.allclose(_cp_saxpy(SAXPY, 0.1), garbage * X + Y)
    saxpy = pc.SourceModule(SAXPY, no_extern_c=True).get_function("saxpy")
    with pytest.raises(LearnerError, match=r"PyCUDA refuses parameter #3 \(0-based\) of saxpy, a float"):
        saxpy(pc.In(X), pc.In(Y), pc.Out(np.zeros(N, np.float32)), 2.0, np.int32(N), block=(128, 1, 1))


# ----------------------------------------------------------------------------- bugs, in one sentence
def _pycuda_launch(src, name, args, grid, block):
    pc.SourceModule(src, no_extern_c=True).get_function(name)(*args, block=(block, 1, 1), grid=(grid, 1))


def _launch_everywhere(src, name, host_args, grid, block):
    """The same launch through each stand-in; yields (library, exception text)."""
    for lib in ("CuPy RawKernel", "PyCUDA", "cuda.core", "Driver API"):
        arrays = [np.array(a) for a in host_args if isinstance(a, np.ndarray)]
        with pytest.raises(KernelError) as info:
            if lib == "CuPy RawKernel":
                cp.RawKernel(src, name)(
                    (grid,), (block,), tuple(cp.asarray(a) if isinstance(a, np.ndarray) else a for a in host_args)
                )
            elif lib == "PyCUDA":
                _pycuda_launch(
                    src, name, [pc.InOut(a) if isinstance(a, np.ndarray) else a for a in host_args], grid, block
                )
            elif lib == "cuda.core":
                k = core.Program(src, "c++").compile("ptx").get_kernel(name)
                devs = [cp.asarray(a) if isinstance(a, np.ndarray) else a for a in host_args]
                core.launch(
                    core.Stream(),
                    core.LaunchConfig(grid=grid, block=block),
                    k,
                    *(d.data.ptr if isinstance(d, np.ndarray) else d for d in devs),
                )
            else:
                mod = cuda_c.check(driver.cuModuleLoadData(cuda_c.compile(src, target="ptx")))
                f = cuda_c.check(driver.cuModuleGetFunction(mod, name.encode()))
                ptrs = []
                for a in host_args:
                    if isinstance(a, np.ndarray):
                        d = cuda_c.check(driver.cuMemAlloc(a.nbytes))
                        cuda_c.check(driver.cuMemcpyHtoD(d, a.ctypes.data, a.nbytes))
                        ptrs.append(np.uint64(int(d)))
                    else:
                        ptrs.append(a)
                params, _keep = _kernel_params(*ptrs)
                driver.cuLaunchKernel(f, grid, 1, 1, block, 1, 1, 0, None, params.ctypes.data, 0)
        assert len(arrays) >= 1
        yield lib, str(info.value)


def test_one_element_past_the_end_is_one_sentence_from_every_stand_in():
    n = 100
    for lib, text in _launch_everywhere(
        SAXPY_PAST_END, "saxpy", (X[:n], Y[:n], np.zeros(n, np.float32), np.float32(2), np.int32(n)), 1, 128
    ):
        assert text.startswith(f"{lib} launch of saxpy"), text
        assert "Out of bounds: thread 100 of block 0 read" in text and "[100] at line 5" in text, text
        assert "\n" not in text and "Traceback" not in text


def test_a_shared_memory_race_is_one_sentence_from_every_stand_in():
    x = np.arange(64, dtype=np.float32)
    for lib, text in _launch_everywhere(RACE, "shift", (x, np.zeros(64, np.float32), np.int32(64)), 1, 64):
        assert text.startswith(f"{lib} launch of shift"), text
        assert "Race on shared tile[" in text and "no __syncthreads()" in text and "line 6" in text, text


def test_the_race_free_kernel_passes_so_the_race_test_can_fail():
    fixed = RACE.replace("tile[t] = x[t];", "tile[t] = x[t];\n    __syncthreads();")
    x, out = cp.arange(64, dtype=cp.float32), cp.zeros(64, dtype=cp.float32)
    cp.RawKernel(fixed, "shift")((1,), (64,), (x, out, np.int32(64)))
    assert out.get().tolist() == [(t + 1) % 64 for t in range(64)]


def test_a_host_numpy_array_is_refused_by_the_cupy_stand_in_as_by_cupy():
    with pytest.raises(LearnerError, match=r"Argument 0 of saxpy is a NumPy array in host memory.*cp\.asarray"):
        cp.RawKernel(SAXPY, "saxpy")((1,), (32,), (X, cp.asarray(Y), cp.asarray(Y), np.float32(1), np.int32(3)))


# ----------------------------------------------------------------------------- unsupported: one sentence
@pytest.mark.parametrize(
    "call, start",
    [
        (lambda: cp.fuse(), "cupy.fuse needs a GPU: the CPU stand-in for CuPy runs RawKernel"),
        (lambda: cp.cuda.MemoryPool(), "cupy.cuda.MemoryPool needs a GPU"),
        (lambda: cp.get_default_memory_pool(), "cupy.get_default_memory_pool needs a GPU"),
        (lambda: core.Device(0).create_event(), "Device.create_event (timing with CUDA events) needs a GPU"),
        (lambda: pc.driver.Context.get_device(), "pycuda.driver.Context needs a GPU: the CPU stand-in for PyCUDA"),
        (lambda: driver.cuMemAllocHost(16), "driver.cuMemAllocHost needs a GPU: the CPU stand-in for the driver API"),
        (lambda: cp.ReductionKernel("T x", "T y", "x", "a + b", "y = a", "0")(cp.zeros((2, 2)), axis=0), "sum"),
    ],
)
def test_unsupported_features_say_so_in_one_sentence(call, start):
    with pytest.raises(GPURequired) as info:
        call()
    text = str(info.value)
    assert text.startswith(start) if start != "sum" else "with axis or keepdims needs a GPU" in text, text
    assert text.endswith(".") and "\n" not in text


# ----------------------------------------------------------------------------- real signatures
def _doc_params(line: str):
    """'Name(str code, tuple options=(), *, bool x=False)' -> [(name, kind, default)] as inspect would see them."""
    inner = line[line.index("(") + 1 : line.rindex(")")]
    parts, depth, cur = [], 0, ""
    for ch in inner:
        depth += ch in "([" and 1 or ch in ")]" and -1 or 0
        if ch == "," and depth == 0:
            parts.append(cur.strip())
            cur = ""
        else:
            cur += ch
    parts.append(cur.strip())
    out, kw_only = [], False
    for p in filter(None, parts):
        p = p.replace("\\*", "*")
        if p == "*":
            kw_only = True
            continue
        if p.startswith("**") or p.startswith("*"):
            out.append((p.lstrip("*"), "var", None))
            continue
        head, _, default = p.partition("=")
        name = head.split(":")[0].replace("*", " ").split()[-1]
        if name == "self":
            continue
        out.append((name, "kw" if kw_only else "pos", default.strip() or None))
    return out


def _standin_params(fn):
    out = []
    for p in inspect.signature(fn).parameters.values():
        if p.name == "self":
            continue
        kind = "var" if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) else "kw" if p.kind == p.KEYWORD_ONLY else "pos"
        out.append((p.name, kind, None if p.default is p.empty else p.default))
    return out


def _same(real_line, standin):
    real, mine = _doc_params(real_line), _standin_params(standin)
    assert [(n, k) for n, k, _ in real] == [(n, k) for n, k, _ in mine], (real_line, mine)
    for (name, _k, d_real), (_n, _k2, d_mine) in zip(real, mine):
        if d_real is None:
            continue
        try:
            value = ast.literal_eval(d_real)
        except ValueError:
            continue
        assert value == d_mine, f"{name}: real default {d_real}, stand-in {d_mine!r}"


@pytest.mark.parametrize("name", ["RawKernel", "RawModule", "ElementwiseKernel", "ReductionKernel"])
def test_cupy_classes_take_the_real_constructor_arguments(name):
    import cupy as real

    _same(getattr(real, name).__doc__.splitlines()[0], getattr(cp, name))


def test_cupy_methods_take_the_real_arguments():
    import cupy as real

    call = next(ln for ln in real.RawKernel.__call__.__doc__.splitlines() if ln.startswith("__call__(self, grid"))
    _same(call, cp.RawKernel.__call__)
    _same(real.RawModule.get_function.__doc__.splitlines()[0], cp.RawModule.get_function)
    for cls in ("ElementwiseKernel", "ReductionKernel"):  # real: (*args, **kwargs); each keyword is documented
        doc = getattr(real, cls).__call__.__doc__
        for name, kind, _d in _standin_params(getattr(cp, cls).__call__):
            assert kind == "var" or re.search(rf"^\s+{name} \(", doc, re.M), f"{cls}.__call__ keyword {name}"


def test_cuda_core_takes_the_real_arguments():
    import cuda.core as real

    _same(real.LaunchConfig.__doc__.splitlines()[0], core.LaunchConfig)
    _same(real.Program.__doc__.splitlines()[0], core.Program)
    for real_fn, mine in (
        (real.launch, core.launch),
        (real.Program.compile, core.Program.compile),
        (real.ObjectCode.get_kernel, core.ObjectCode.get_kernel),
        (real.Device, core.Device),
    ):
        assert [(n, k) for n, k, _ in _standin_params(real_fn)] == [(n, k) for n, k, _ in _standin_params(mine)]


@pytest.mark.parametrize(
    "name",
    [
        "cuInit",
        "cuDeviceGet",
        "cuDeviceGetAttribute",
        "cuDevicePrimaryCtxRetain",
        "cuCtxSetCurrent",
        "cuModuleLoadData",
        "cuModuleGetFunction",
        "cuMemAlloc",
        "cuMemcpyHtoD",
        "cuMemcpyDtoH",
        "cuMemFree",
        "cuStreamCreate",
        "cuStreamSynchronize",
        "cuStreamDestroy",
        "cuModuleUnload",
        "cuLaunchKernel",
    ],
)
def test_driver_functions_take_the_real_arguments(name):
    from cuda.bindings import driver as real

    _same(getattr(real, name).__doc__.splitlines()[0], getattr(driver, name))


# PyCUDA is not installed on CPU machines; these are its signatures from its source (pycuda/driver.py,
# compiler.py, elementwise.py, 2025.1), stated here so that a change to the stand-in is a visible decision.
PYCUDA = {
    "SourceModule": "SourceModule(source, nvcc='nvcc', options=None, keep=False, no_extern_c=False, arch=None, "
    "code=None, cache_dir=None, include_dirs=[])",
    "ElementwiseKernel": "ElementwiseKernel(arguments, operation, name='kernel', keep=False, options=None, "
    "preamble='', loop_prep='', after_loop='')",
    "Function.prepare": "prepare(func, arg_types, texrefs=[])",
    "memcpy_htod": "memcpy_htod(dest, src, stream=None)",
}


def test_pycuda_stand_in_takes_pycudas_arguments():
    _same(PYCUDA["SourceModule"], pc.SourceModule)
    _same(PYCUDA["ElementwiseKernel"], pc.ElementwiseKernel)
    _same(PYCUDA["memcpy_htod"], pc.memcpy_htod)
    assert [n for n, _k, _d in _standin_params(pc.Function.prepare)] == ["arg_types", "texrefs"]


def test_the_banner_says_where_cuda_c_launches_run():
    assert "CUDA C launches (CuPy, PyCUDA, cuda.core, driver API) run in the course's PTX interpreter" in (
        helpers.banner_text()
    )


def test_a_launch_of_no_threads_is_answered_as_each_library_answers_it():
    """Checked on an H200: CuPy launches nothing and says nothing; the driver answers
    CUDA_ERROR_INVALID_VALUE; PyCUDA and cuda.core refuse (the stand-ins with a sentence)."""
    k = cp.RawKernel('extern "C" __global__ void k(float* x) { x[threadIdx.x] = 1.0f; }', "k")
    x = cp.zeros(4, dtype=cp.float32)
    k((0,), (4,), (x,))
    k((1,), (0,), (x,))
    assert not cp.asnumpy(x).any()  # nothing ran
    mod = cuda_c.check(driver.cuModuleLoadData(cuda_c.compile('extern "C" __global__ void k() {}', target="cubin")))
    f = cuda_c.check(driver.cuModuleGetFunction(mod, b"k"))
    assert driver.cuLaunchKernel(f, 0, 1, 1, 1, 1, 1, 0, None, None, 0)[0] == driver.CUresult.CUDA_ERROR_INVALID_VALUE
    with pytest.raises(LearnerError, match="launches nothing"):
        core.LaunchConfig(grid=0, block=32)
    assert driver.cuModuleLoadData(b"garbage")[0] == driver.CUresult.CUDA_ERROR_INVALID_IMAGE
