"""CPU stand-in for the part of ``cuda.core`` (1.x, top level) the course uses to launch kernels.

    core = helpers.standins.library("cuda.core")
    dev = core.Device(0); dev.set_current(); stream = dev.create_stream()
    program = core.Program(src, code_type="c++", options=core.ProgramOptions(arch="sm_90"))
    kernel = program.compile("cubin").get_kernel("saxpy")
    core.launch(stream, core.LaunchConfig(grid=4, block=256), kernel, x_ptr, y_ptr, out_ptr, np.float32(2), np.int32(n))

Why: notebooks 10 and 11 launch SAXPY through cuda.core, and the lesson of the Python float sent
as a double shows in the numbers. ``ProgramOptions`` is the real class (it needs no GPU);
``Program.compile`` runs NVRTC for real (the CUBIN's bytes are real) and keeps the PTX, which
``launch`` runs in helpers.ptx. Arguments are packed as cuda.core packs them: a Python int is a
pointer-sized value (a pointer when it is the address of stand-in memory), a Python float an
8-byte double, NumPy scalars their own bytes. Launches run at once, so ``sync`` has nothing to
wait for; events and timing need a GPU.
"""

from __future__ import annotations

from cuda.core import ProgramOptions

from .. import cuda_c
from ..errors import LearnerError
from . import _launch

SUPPORTED = (
    "for cuda.core runs Device, Program.compile, ObjectCode.get_kernel, LaunchConfig and launch; "
    "streams run each launch at once"
)
__all__ = ["Device", "LaunchConfig", "ObjectCode", "Program", "ProgramOptions", "Stream", "launch"]
__version__ = "CPU stand-in"
ARCH = "90"  # the course's default NVRTC target (helpers.cuda_c.DEFAULT_ARCH); the PTX runs the same on any


class Stream:
    """A stream whose work is already done: each launch runs to the end before it returns."""

    handle = 0

    def sync(self):
        return None

    def record(self, event=None, options=None):
        raise _launch.needs_gpu("Stream.record (CUDA events)", SUPPORTED)

    def wait(self, event_or_stream):
        return None


class Device:
    """``cuda.core.Device(device_id)``: the CPU stand-in's one "device"."""

    def __init__(self, device_id=None):
        if device_id not in (None, 0):
            raise LearnerError(f"The CPU stand-in has one device, Device(0); Device({device_id!r}) does not exist.")
        self.device_id = 0
        self.default_stream = Stream()

    name = "CPU stand-in (CUDA C runs in the course's PTX interpreter)"
    arch = ARCH
    compute_capability = (9, 0)

    def set_current(self, ctx=None):
        return None

    def create_stream(self, obj=None, options=None):
        return Stream()

    def sync(self):
        return None

    def create_event(self, options=None):
        raise _launch.needs_gpu("Device.create_event (timing with CUDA events)", SUPPORTED)

    def allocate(self, size, stream=None):
        raise _launch.needs_gpu("Device.allocate", SUPPORTED + "; allocate arrays with the CuPy stand-in")


class LaunchConfig:
    """``cuda.core.LaunchConfig(grid=, block=, shmem_size=)``: the shape of one launch."""

    def __init__(
        self,
        grid=None,
        cluster=None,
        block=None,
        shmem_size=None,
        is_cooperative=False,
        programmatic_stream_serialization=False,
    ):
        if cluster is not None or is_cooperative or programmatic_stream_serialization:
            raise _launch.needs_gpu("LaunchConfig with clusters or cooperative launch", SUPPORTED)
        if grid is None or block is None:
            raise LearnerError("LaunchConfig needs both grid= and block=.")
        self.grid, self.block = _launch.dims(grid, "grid"), _launch.dims(block, "block")
        self.cluster, self.shmem_size = None, _launch.whole_number(shmem_size or 0, "shmem_size")


class Kernel:
    """A kernel of an ObjectCode: its PTX, its source and its name in the PTX."""

    def __init__(self, source, ptx_text, name):
        self._source, self._ptx, self._name = source, ptx_text, name


class ObjectCode:
    """What ``Program.compile`` returns: ``.code`` (real NVRTC output) and ``get_kernel(name)``."""

    def __init__(self, source, code, code_type, ptx_text, lowered):
        self._source, self.code, self.code_type = source, code, code_type
        self._ptx, self._lowered = ptx_text, lowered

    def get_kernel(self, name):
        name = name.decode() if isinstance(name, bytes) else name
        return Kernel(self._source, self._ptx, self._lowered.get(name, name))


class Program:
    """``cuda.core.Program(code, code_type, options)``: CUDA C compiled with NVRTC."""

    def __init__(self, code, code_type, options=None):
        if str(code_type).lower() not in ("c++", "cxx", "cu"):
            raise _launch.needs_gpu(f"Program(code_type={code_type!r})", SUPPORTED + " for CUDA C (code_type='c++')")
        self.code = _launch.source_text(bytes(code) if isinstance(code, bytearray) else code, "Program's code")
        # ProgramOptions() without an arch asks the driver for the current device's: name the stand-in's
        self.options = options if options is not None else ProgramOptions(arch=f"sm_{ARCH}")

    def compile(self, target_type, name_expressions=(), logs=None, *, cache=None):
        if target_type not in ("cubin", "ptx"):
            raise _launch.needs_gpu(f"Program.compile({target_type!r})", SUPPORTED + " for 'cubin' and 'ptx'")
        arch = (self.options.arch or f"sm_{ARCH}").split("_")[-1]
        ptx_text, lowered = _launch.compile_ptx(self.code, (), tuple(name_expressions), f"compute_{arch}")
        code = cuda_c.compile(self.code, target="cubin", arch=f"sm_{arch}") if target_type == "cubin" else ptx_text
        return ObjectCode(self.code, code, target_type, ptx_text, lowered)


def launch(stream, config, kernel, *kernel_args):
    """Run `kernel` once with `config`; the arrays behind pointer arguments are updated in place."""
    if not isinstance(kernel, Kernel) or not isinstance(config, LaunchConfig):
        raise LearnerError("launch(stream, config, kernel, *args) takes a LaunchConfig and a Kernel from get_kernel.")
    args = _launch.pointer_args(kernel_args, kernel._source, kernel._name)
    _launch.run(
        "cuda.core",
        kernel._source,
        kernel._ptx,
        kernel._name,
        config.grid,
        config.block,
        args,
        shared=config.shmem_size,
        python_scalars="cupy",  # cuda.core, like CuPy: a Python int is 8 bytes, a float a double
    )
