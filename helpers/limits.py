"""The hardware limits of a CUDA launch, defined once for the whole course.

The geometry, both CPU interpreters and the exercise checks all refuse a launch a real GPU would
refuse, with the same numbers (CUDA C Programming Guide, "Compute Capabilities" table;
the same for every architecture from compute capability 5.0 to 9.0).
"""

import numbers

from .errors import LearnerError, shown

WARP_SIZE = 32
MAX_THREADS_PER_BLOCK = 1024
MAX_BLOCK_DIM = (1024, 1024, 64)  # threads per block along x, y, z
MAX_GRID_DIM = (2**31 - 1, 65535, 65535)  # blocks per grid along x, y, z
# Per block, on every GPU. Measured on the H100 (numba-cuda 0.30.4): Numba ran static tiles of 49, 52 and
# 100 KB (the driver links for the actual device) and nvJitLink refused 228 KB; nvcc refused 49 KB for
# CUDA C ("uses too much shared data (0xc400 bytes, 0xc000 max)"). The course keeps the portable limit.
MAX_STATIC_SHARED_BYTES = 48 * 1024
TRACE_MAX_THREADS = 2**22  # the CPU tracer refuses a launch of more threads than this (minutes of work)

RETURN_VALUE = "a kernel cannot return a value: write the result into an output array."


def _n(v) -> str:
    return f"{v:,}" if v >= 100_000 else str(v)


def launch_dims(value, what: str) -> tuple[int, int, int]:
    """``griddim``/``blockdim`` as 3 ints: an int or 1 to 3 positive whole numbers, else one sentence.

    Strict on purpose: ``int("3")`` or ``int(2.5)`` would quietly launch something the learner
    did not write, and a string or an array would fail deep inside the tracer."""
    items = (value,) if not isinstance(value, (tuple, list)) else tuple(value)
    whole = all(isinstance(v, numbers.Integral) and not isinstance(v, bool) for v in items)
    if not whole or not 1 <= len(items) <= 3:
        floats = any(isinstance(v, numbers.Real) and not isinstance(v, numbers.Integral) for v in items)
        fix = ": use (n + t - 1) // t rather than n / t" if floats and 1 <= len(items) <= 3 else ""
        raise LearnerError(
            f"{what} must be an int or a tuple of 1 to 3 ints, such as 4 or (16, 16), not {shown(value)}{fix}."
        )
    if any(v < 1 for v in items):
        raise LearnerError(f"{what} must be 1 to 3 positive ints, not {shown(value)}: every dimension is at least 1.")
    return tuple(int(v) for v in items) + (1,) * (3 - len(items))


def block_problem(block) -> str | None:
    """One sentence naming the block limit that ``block`` (1 to 3 ints) breaks, or None."""
    block = tuple(block) + (1,) * (3 - len(block))
    total = block[0] * block[1] * block[2]
    if total > MAX_THREADS_PER_BLOCK:
        return (
            f"{_n(total)} threads per block is more than the {MAX_THREADS_PER_BLOCK} a CUDA block can hold: "
            "use 128 or 256 threads per block and more blocks."
        )
    for axis, d, most in zip("xyz", block, MAX_BLOCK_DIM):
        if d > most:
            if axis == "z":
                return f"a block can be at most 64 threads deep in z, got {d}: put the threads along x or y."
            return f"a block can be at most {most} threads along {axis}, got {d}: spread them over x and y."
    return None


def grid_problem(grid) -> str | None:
    """One sentence naming the grid limit that ``grid`` (1 to 3 ints) breaks, or None."""
    for axis, d, most in zip("xyz", tuple(grid), MAX_GRID_DIM):
        if d > most:
            return (
                f"a grid can have at most {most:,} blocks along {axis} (2^31 - 1 along x, 65,535 along y and z), "
                f"got {d:,}: use more threads per block, or a grid-stride loop over fewer blocks."
            )
    return None


MAX_CONST_BYTES = 64 * 1024  # per module; NVRTC for sm_90 (ptxas) refuses 0x10004 bytes: "0x10000 max"


def const_problem(nbytes, what: str = "its cuda.const.array_like tables") -> str | None:
    """One sentence if a kernel's constant arrays (``nbytes`` in all) exceed the 64 KiB of constant memory.
    ``what``: the arrays, as the sentence names them (Numba bakes global NumPy arrays in as constants too)."""
    if nbytes > MAX_CONST_BYTES:
        return (
            f"{what} take {nbytes:,} bytes, more than the 64 KiB ({MAX_CONST_BYTES:,} "
            "bytes) of constant memory a GPU has, so the GPU's assembler refuses it (ptxas error: File uses too "
            f"much global constant data ({nbytes:#x} bytes, {MAX_CONST_BYTES:#x} max)): keep a large table in "
            "global memory, passed in as an argument."
        )
    return None


MAX_LOCAL_BYTES = 512 * 1024  # per thread: an H200 refused 512 KB of local arrays (CuPy) and 16 MB (Numba)


def local_problem(nbytes) -> str | None:
    """One sentence if one thread's local arrays (``nbytes`` in all) are more than a GPU launches, else None."""
    if nbytes >= MAX_LOCAL_BYTES:
        return (
            f"each thread's local arrays take {nbytes:,} bytes, and a GPU refuses to launch a kernel whose threads "
            f"need 512 KB ({MAX_LOCAL_BYTES:,} bytes) of local memory or more (CUDA_ERROR_INVALID_VALUE: invalid "
            "argument): keep large arrays in global memory, allocated on the host and passed in."
        )
    return None


def shared_problem(nbytes, language="python") -> str | None:
    """One sentence if one block's static shared arrays (``nbytes`` in all) exceed 48 KB, else None."""
    if nbytes > MAX_STATIC_SHARED_BYTES and language == "cuda_c":
        return (
            f"its __shared__ arrays take {nbytes:,} bytes, more than the 48 KB ({MAX_STATIC_SHARED_BYTES:,} bytes) of "
            f"static shared memory a block may declare, so a GPU's compiler refuses it (ptxas error: uses too much "
            f"shared data ({nbytes:#x} bytes, {MAX_STATIC_SHARED_BYTES:#x} max)): use a smaller tile or fewer "
            "shared arrays."
        )
    if nbytes > MAX_STATIC_SHARED_BYTES:
        return (
            f"its cuda.shared.array allocations take {nbytes:,} bytes, more than the 48 KB "
            f"({MAX_STATIC_SHARED_BYTES:,} bytes) of static shared memory every CUDA GPU gives a block: past "
            "that it depends on the GPU (from Numba an H100 ran a 100 KB tile and refused 228 KB; older GPUs "
            "allow less) and nvcc refuses it outright for CUDA C, so use a smaller tile or fewer shared arrays."
        )
    return None


def trace_size_problem(total_threads, most: int = TRACE_MAX_THREADS) -> str | None:
    """One sentence if a (legal) launch has too many threads to run on the CPU tracer (``most``), else None."""
    if total_threads > most:
        return (
            f"this launch starts {total_threads:,} threads, too many to run one by one on the CPU (at most "
            f"{most:,}): trace a smaller problem."
        )
    return None


def dynamic_shared_problem(nbytes) -> str | None:
    """One sentence if a Numba launch asks for more dynamic shared memory than a block gets without opting in."""
    if nbytes > MAX_STATIC_SHARED_BYTES:
        return (
            f"the launch asks for {nbytes:,} bytes of dynamic shared memory (its fourth number), more than the 48 KB "
            f"({MAX_STATIC_SHARED_BYTES:,} bytes) a block gets unless the kernel opts in to more, which Numba does not "
            "do (numba-cuda issue 94), so a GPU refuses the launch (CUDA_ERROR_INVALID_VALUE): use a smaller tile."
        )
    return None


def launch_limits(griddim, blockdim, dynamic_shared: int = 0, most_threads: int = TRACE_MAX_THREADS) -> None:
    """A LearnerError for a launch a GPU refuses, or one too big to trace; nothing runs before this.

    ``griddim`` and ``blockdim`` are 3 ints each (``launch_dims``); both CPU interpreters call it.
    ``dynamic_shared``: a Numba launch's bytes of dynamic shared memory. ``most_threads``: the most a
    launch may start (a launch that keeps no access log, ptx/launch.py, may start more than a trace)."""
    problem = block_problem(blockdim) or grid_problem(griddim) or dynamic_shared_problem(dynamic_shared)
    if problem is None:
        nthreads = griddim[0] * griddim[1] * griddim[2] * blockdim[0] * blockdim[1] * blockdim[2]
        problem = trace_size_problem(nthreads, most_threads)
    if problem:
        raise LearnerError(problem[0].upper() + problem[1:])
