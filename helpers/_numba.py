"""Everything that depends on Numba's internals, in one place.

The tracer works on the learner's plain Python function, so it only needs a few facts from
Numba: how to get that function out of a kernel object (simulator `FakeCUDAKernel` or real
`CUDADispatcher`), whether an object is a device function, what a configured launch
(`kernel[grid, block]`) carries, and how a Numba type maps to a NumPy dtype.  A Numba upgrade
should only ever need to touch this file.

Checked against numba 0.68.1 / numba-cuda 0.30.4:
  * simulator: numba_cuda/numba/cuda/simulator/kernel.py (FakeCUDAKernel: .fn, ._device,
    .grid_dim, .block_dim, .dynshared_size; `kernel[g, b]` configures and returns itself);
  * real: numba_cuda/numba/cuda/dispatcher.py (CUDADispatcher: .py_func,
    .targetoptions["device"]; `kernel[g, b]` returns a _LaunchConfiguration with .dispatcher,
    .griddim, .blockdim (normalised 3-tuples) and .sharedmem).
"""

import inspect
import sys

import numpy as np


def described(obj) -> dict | None:
    """The description an answer of another process brought along (the batch grader's stand-ins,
    grading/remote.py: its name, source, whether it is a ``@cuda.jit`` object), or None for an
    object of this process. Read through the type, so an attribute set on an object fakes nothing."""
    if getattr(type(obj), "course_description", None) is None:
        return None
    return obj.course_description


def _is_fake_kernel(obj):
    # Checked by class name so that the simulator is never imported in GPU mode.
    return type(obj).__name__ == "FakeCUDAKernel" and hasattr(obj, "fn")


def _is_dispatcher(obj):
    return type(obj).__name__ == "CUDADispatcher" and hasattr(obj, "py_func")


def _is_launch_config(obj):
    return type(obj).__name__ == "_LaunchConfiguration" and hasattr(obj, "dispatcher")


def is_cuda_function(obj):
    """True for anything made by `@cuda.jit` (kernel or device function), either mode."""
    told = described(obj)
    if told is not None:
        return bool(told.get("cuda")) and not told.get("configured")
    return _is_fake_kernel(obj) or _is_dispatcher(obj)


def cpu_jit_function(obj):
    """The Python function behind a CPU `@numba.jit` (numba.cuda.random's xoroshiro functions are
    these, and kernels may call them as device functions), else None."""
    if type(obj).__name__ == "CPUDispatcher" and hasattr(obj, "py_func"):
        return obj.py_func
    return None


def python_function(obj):
    """The learner's Python function behind a `@cuda.jit` object (or a plain function)."""
    if described(obj) is not None:
        return obj.course_python_function()
    if _is_fake_kernel(obj):
        return obj.fn
    if _is_dispatcher(obj):
        return obj.py_func
    if _is_launch_config(obj):
        return obj.dispatcher.py_func
    return None


def is_plain_function(obj):
    """True for a function written with ``def`` or ``lambda`` (a stand-in says what it stands for)."""
    told = described(obj)
    if told is not None:
        return bool(told.get("pyfunction")) and not is_cuda_function(obj)
    return inspect.isfunction(obj)


def is_device_function(obj):
    """True for `@cuda.jit(device=True)` functions."""
    told = described(obj)
    if told is not None:
        return bool(told.get("device"))
    if _is_fake_kernel(obj):
        return bool(obj._device)
    if _is_dispatcher(obj):
        return bool(obj.targetoptions.get("device", False))
    return False


def launch_configuration(obj):
    """(kernel, griddim, blockdim, sharedmem) for a configured launch, else None.

    A simulator kernel configures itself in place (`kernel[g, b]` returns the same object), so
    a FakeCUDAKernel that was launched before still "looks configured"; the caller decides from
    the argument count whether to use this.
    """
    if _is_launch_config(obj):
        return obj.dispatcher, tuple(obj.griddim), tuple(obj.blockdim), int(obj.sharedmem or 0)
    if _is_fake_kernel(obj) and obj.grid_dim is not None and obj.block_dim is not None:
        return obj, tuple(obj.grid_dim), tuple(obj.block_dim), int(obj.dynshared_size or 0)
    return None


def declared_signatures(obj):
    """([argument types, ...], specialized) for a kernel given its signature(s) in `@cuda.jit(...)`,
    else None. `specialized`: one signature (not a list), which a GPU launch uses whatever the
    arguments are (CUDADispatcher.call takes its one overload); with a list, a launch whose
    arguments match none is refused ("No matching definition").

    A real dispatcher keeps what it compiled (it cannot compile more: _can_compile is False); the
    simulator's FakeCUDAKernel drops the signature, so it is read from the decorator in the source.
    """
    if described(obj) is not None:
        return None
    if _is_launch_config(obj):
        obj = obj.dispatcher
    if _is_dispatcher(obj):
        if getattr(obj, "_can_compile", True) or not getattr(obj, "overloads", None):
            return None
        return [tuple(argtypes) for argtypes in obj.overloads], bool(getattr(obj, "specialized", False))
    if not _is_fake_kernel(obj):
        return None
    written = _decorator_signatures(obj.fn)
    if written is None:
        return None
    sigs, specialized = written
    try:
        from numba.core import sigutils

        return [tuple(sigutils.normalize_signature(s)[0]) for s in sigs], specialized
    except Exception:  # not a signature Numba reads: a GPU would refuse the decorator itself
        return None


def _decorator_signatures(fn):
    """The signature(s) `@cuda.jit(...)` was given in `fn`'s source: ([str or Signature], one_not_a_list)."""
    import ast
    import textwrap

    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(fn)))
    except (OSError, TypeError, SyntaxError):
        return None
    fn_def = tree.body[0] if tree.body else None
    if not isinstance(fn_def, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return None
    for dec in fn_def.decorator_list:
        name = dec.func.attr if isinstance(dec, ast.Call) and isinstance(dec.func, ast.Attribute) else None
        name = dec.func.id if isinstance(dec, ast.Call) and isinstance(dec.func, ast.Name) else name
        if name != "jit" or not dec.args:
            continue
        arg = dec.args[0]
        if isinstance(arg, ast.Name):  # @cuda.jit(SIG) with SIG defined in the module
            value = fn.__globals__.get(arg.id)
        else:
            try:
                value = ast.literal_eval(arg)
            except ValueError:
                return None
        if isinstance(value, (list, tuple)) and value:
            return list(value), False
        if isinstance(value, str) or type(value).__name__ == "Signature":
            return [value], True
        return None
    return None


def is_cuda_module(obj):
    """True for the `numba.cuda` module, whatever it is bound to (simulator or real)."""
    mod = sys.modules.get("numba.cuda")
    return obj is not None and obj is mod


def is_numba_module(obj):
    return obj is not None and obj is sys.modules.get("numba")


def numba_type(obj):
    """True when `obj` is a Numba type such as `numba.float32` (usable as a dtype)."""
    try:
        from numba.core import types
    except ImportError:  # pragma: no cover - very old/new numba
        return False
    return isinstance(obj, types.Type)


def as_dtype(dtype):
    """NumPy dtype for a Numba type (`numba.float32`, `types.int32`), a NumPy dtype or a string."""
    if numba_type(dtype):
        try:
            from numba.np import numpy_support

            return np.dtype(numpy_support.as_dtype(dtype))
        except Exception:
            return np.dtype(str(dtype))
    return np.dtype(dtype)


def cuda_attribute(name):
    """The real `numba.cuda.<name>` (used for type names such as `cuda.float32`), or None."""
    mod = sys.modules.get("numba.cuda")
    return getattr(mod, name, None) if mod is not None else None


def simulator_active():
    """Whether Numba reads the simulator flag as on (None when numba is not imported yet)."""
    config = sys.modules.get("numba.core.config")
    return None if config is None else bool(config.ENABLE_CUDASIM)


def reload_config():
    """Re-read NUMBA_* variables; only useful while numba.cuda is not imported yet."""
    import numba.core.config

    numba.core.config.reload_config()


# ----------------------------------------------------------------------------- Numba on the CPU (notebook 12)
# Checked against numba 0.68.1: CPUDispatcher.targetoptions holds the decorator's options
# ("parallel", "fastmath", ...); get_metadata(signature)["parfor_diagnostics"].initial_parfors lists
# the loops the parfor pass turned into parallel loops (empty for a serial @njit, and for a
# parallel=True function whose loops are plain range loops).


def is_cpu_jit(obj):
    """True for a CPU `@numba.njit` / `@numba.jit` function (not a kernel, not a plain function)."""
    return cpu_jit_function(obj) is not None


def cpu_jit_options(obj) -> dict:
    """The options a CPU `@njit` was decorated with ({} for anything else)."""
    return dict(getattr(obj, "targetoptions", {}) or {}) if is_cpu_jit(obj) else {}


def parfor_count(obj) -> int:
    """How many loops Numba's parfor pass made parallel in the compiled versions of a CPU `@njit`
    function (0 before it has been called once, and always 0 without parallel=True)."""
    if not is_cpu_jit(obj):
        return 0
    count = 0
    for sig in obj.signatures:
        diagnostics = obj.get_metadata(sig).get("parfor_diagnostics")
        count = max(count, len(getattr(diagnostics, "initial_parfors", None) or []))
    return count


def compiled_kernel(dispatcher):
    """(cubin bytes, entry-point name) of a @cuda.jit kernel's one compiled overload (GPU mode).

    Why here: reaching the machine code goes through Numba's internals (the overload's code
    library), and this module is where the course keeps every such reach. Notebook 11 loads the
    cubin with cuda.core to launch Numba's kernel without Numba's per-launch Python work.
    """
    overloads = list(getattr(dispatcher, "overloads", {}).values())
    if len(overloads) != 1:
        raise ValueError(
            f"the kernel has {len(overloads)} compiled versions; give it one signature "
            '(@cuda.jit("void(float32, float32[::1], ...)")) or launch it once first.'
        )
    ovl = overloads[0]
    cubin = ovl.library.get_cubin()
    return bytes(getattr(cubin, "code", cubin)), ovl.entry_name


# ----------------------------------------------------------------------------- launches in CPU mode
# Checked against numba-cuda 0.30.4, simulator/kernel.py: FakeCUDAKernel.__call__ runs a device function, or
# any kernel called while another kernel is being simulated (the module's _kernel_context), as plain Python;
# else it launches with .grid_dim and .block_dim (3-tuples, set by kernel[g, b]) and .dynshared_size; the
# decorator's options are ._debug (debug=True: NumPy raises on a division by zero), ._fastmath, .extensions.


def simulator_kernel_options(obj) -> dict:
    """A simulator kernel's ``@cuda.jit`` options that change how it runs: debug, fastmath, extensions."""
    return {
        "debug": bool(getattr(obj, "_debug", False)),
        "fastmath": bool(getattr(obj, "_fastmath", False)),
        "extensions": bool(getattr(obj, "extensions", ())),
    }


def simulator_array(obj):
    """The NumPy array a simulator device array (``cuda.to_device``, ``cuda.device_array``...) holds, else None."""
    if type(obj).__name__ in ("FakeCUDAArray", "FakeWithinKernelCUDAArray") and type(obj).__module__.startswith(
        "numba.cuda.simulator"
    ):
        item = obj.__dict__.get("_item", obj)
        return getattr(item, "_ary", None)
    return None


SIMULATOR_KERNEL = "numba.cuda.simulator.kernel"


class _AfterImport:
    """A finder on sys.meta_path that runs ``then(module)`` once ``name`` has been imported, so that routing
    launches never imports Numba's CUDA module itself (``import helpers`` must leave that to the notebook)."""

    def __init__(self, name, then):
        self.name, self.then = name, then

    def find_spec(self, fullname, path=None, target=None):
        if fullname != self.name:
            return None
        import importlib.util

        sys.meta_path.remove(self)
        spec = importlib.util.find_spec(fullname)
        if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return spec
        spec.loader = _ThenLoader(spec.loader, self.then)
        return spec


class _ThenLoader:
    """The module's own loader, and ``then(module)`` once it has run the module."""

    def __init__(self, loader, then):
        self._loader, self._then = loader, then

    def create_module(self, spec):
        return self._loader.create_module(spec)

    def exec_module(self, module):
        self._loader.exec_module(module)
        self._then(module)

    def __getattr__(self, name):  # get_source, get_filename...: the real loader's
        return getattr(self._loader, name)


def route_simulator_launches(launch):
    """Send every launch of a simulator kernel made from the host to ``launch(kernel, griddim, blockdim,
    sharedmem, args, simulate)``, where ``simulate()`` runs it on the simulator as before; ``None``
    restores the simulator's own launch. Device functions and calls made inside a simulated kernel
    stay the simulator's. Before the simulator is imported, this takes effect when it is. Returns the
    launch that was routed to before (None: the simulator's)."""
    sim = sys.modules.get(SIMULATOR_KERNEL)
    if sim is None:
        for finder in [f for f in sys.meta_path if isinstance(f, _AfterImport)]:
            sys.meta_path.remove(finder)
        previous = _PENDING[0]
        _PENDING[0] = launch
        if launch is not None:
            sys.meta_path.insert(0, _AfterImport(SIMULATOR_KERNEL, lambda module: _route(module, launch)))
        return previous
    return _route(sim, launch)


_PENDING = [None]  # the launch to route to once the simulator is imported


def _route(sim, launch):
    _PENDING[0] = None
    cls = sim.FakeCUDAKernel
    simulated = cls.__dict__.get("_course_simulated_call") or cls.__call__
    cls._course_simulated_call = simulated
    previous = cls.__dict__.get("_course_launch")
    cls._course_launch = launch
    if launch is None:
        cls.__call__ = simulated
        return previous

    def __call__(self, *args):
        if self._device or sim._get_kernel_context() is not None or self.grid_dim is None or self.block_dim is None:
            return simulated(self, *args)
        griddim, blockdim = tuple(self.grid_dim), tuple(self.block_dim)
        return launch(self, griddim, blockdim, int(self.dynshared_size or 0), args, lambda: simulated(self, *args))

    cls.__call__ = __call__
    return previous
