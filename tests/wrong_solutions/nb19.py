"""Wrong answers for helpers/problems/nb19.py (debugging and errors), each a mistake learners make."""

from cuda.bindings import runtime
from numba import cuda

from . import Wrong

STICKY = "the process must be terminated and relaunched"

# -- check_call


def check_ignores_errors(result):
    err, *values = result
    return values[0] if len(values) == 1 else (tuple(values) if values else None)


def check_unpacks_two(result):
    err, value = result  # breaks on (err,) and on (err, a, b)
    if err != runtime.cudaError_t.cudaSuccess:
        raise RuntimeError(err.name)
    return value


def check_prints_bytes(result):
    err, *values = result
    if err != runtime.cudaError_t.cudaSuccess:
        name = runtime.cudaGetErrorName(err)[1]
        text = runtime.cudaGetErrorString(err)[1]
        raise RuntimeError(f"{name}: {text}")  # b'...' in the message
    return values[0] if len(values) == 1 else (tuple(values) if values else None)


def check_whole_tuple(result):
    err, *values = result
    if err != runtime.cudaError_t.cudaSuccess:
        raise RuntimeError(f"{runtime.cudaGetErrorName(err)}: {runtime.cudaGetErrorString(err)}")
    return values[0] if len(values) == 1 else (tuple(values) if values else None)


def check_name_only(result):
    err, *values = result
    if err != runtime.cudaError_t.cudaSuccess:
        raise RuntimeError(runtime.cudaGetErrorName(err)[1].decode())
    return values[0] if len(values) == 1 else (tuple(values) if values else None)


def check_code_only(result):
    err, *values = result
    if err != runtime.cudaError_t.cudaSuccess:
        raise RuntimeError(f"CUDA error {int(err)}")
    return values[0] if len(values) == 1 else (tuple(values) if values else None)


def check_always_tuple(result):
    err, *values = result
    if err != runtime.cudaError_t.cudaSuccess:
        raise RuntimeError(f"{err.name}: {runtime.cudaGetErrorString(err)[1].decode()}")
    return tuple(values) if values else None


def check_inverted(result):
    err, *values = result
    if not err:  # raises on success
        raise RuntimeError(f"{err.name}: {runtime.cudaGetErrorString(err)[1].decode()}")
    return values[0] if len(values) == 1 else (tuple(values) if values else None)


# -- chunk_sums


@cuda.jit
def sums_floor_chunk(x, out):
    i = cuda.grid(1)
    if i < out.size:
        chunk = x.size // out.size  # the printout's bug: the tail of x has no thread
        start = i * chunk
        s = 0
        for k in range(start, start + chunk):
            s += x[k]
        out[i] = s


@cuda.jit
def sums_past_the_end(x, out):
    i = cuda.grid(1)
    if i < out.size:
        chunk = (x.size + out.size - 1) // out.size
        start = i * chunk
        s = 0
        for k in range(start, start + chunk):  # the last chunk runs past x.size
            s += x[k]
        out[i] = s


@cuda.jit
def sums_one_short(x, out):
    i = cuda.grid(1)
    if i < out.size:
        chunk = (x.size + out.size - 1) // out.size
        start = i * chunk
        stop = min(start + chunk, x.size)
        s = 0
        for k in range(start, stop - 1):
            s += x[k]
        out[i] = s


@cuda.jit
def sums_plus_one(x, out):
    i = cuda.grid(1)
    if i < out.size:
        chunk = x.size // out.size + 1
        start = i * chunk
        stop = min(start + chunk, x.size)
        s = 0
        for k in range(start, stop):
            s += x[k]
        out[i] = s


@cuda.jit
def sums_no_guard(x, out):
    i = cuda.grid(1)
    chunk = (x.size + out.size - 1) // out.size
    start = i * chunk
    stop = min(start + chunk, x.size)
    s = 0
    for k in range(start, stop):
        s += x[k]
    out[i] = s


@cuda.jit
def sums_chunk_of_four(x, out):
    i = cuda.grid(1)
    if i < out.size:
        start = i * 4  # the chunk of the printout's example, typed in
        stop = min(start + 4, x.size)
        s = 0
        for k in range(start, stop):
            s += x[k]
        out[i] = s


# -- sticky_errors


def sticky_any_error(errors):
    return [e.name for e in errors if e != runtime.cudaError_t.cudaSuccess]


def sticky_7xx(errors):
    return [e.name for e in errors if 700 <= int(e) < 800]


def sticky_usual_list(errors):
    usual = {700, 702, 710, 714, 715, 716, 717, 718, 719}
    return [e.name for e in errors if int(e) in usual]


def sticky_inconsistent_state(errors):
    return [e.name for e in errors if "inconsistent state" in " ".join((e.__doc__ or "").split())]


def sticky_terminated(errors):
    return [e.name for e in errors if "terminated" in (e.__doc__ or "")]


def sticky_unjoined(errors):
    return [e.name for e in errors if STICKY in (e.__doc__ or "")]


def sticky_sorted(errors):
    return sorted(e.name for e in errors if STICKY in " ".join((e.__doc__ or "").split()))


def sticky_members(errors):
    return [e for e in errors if STICKY in " ".join((e.__doc__ or "").split())]


WRONG = {
    "check_call": [
        Wrong("ignores the error", check_ignores_errors, "an error code must raise"),
        Wrong("unpacks two", check_unpacks_two, "err, *values = result"),
        Wrong("bytes in the message", check_prints_bytes, ".decode() them"),
        Wrong("the name function's whole tuple", check_whole_tuple, "return (err, bytes) themselves"),
        Wrong("name only", check_name_only, "add cudaGetErrorString's text"),
        Wrong("number only", check_code_only, "name the error"),
        Wrong("one value in a tuple", check_always_tuple, "one value comes back on its own"),
        Wrong("raises on success", check_inverted, "is a success"),
    ],
    "chunk_sums": [
        Wrong("floor chunk (the printout's bug)", sums_floor_chunk, "round up"),
        Wrong("missing guard", sums_past_the_end, "past the end"),
        Wrong("one short", sums_one_short, "misses its last element"),
        Wrong("plus one", sums_plus_one, "one too many"),
        Wrong("no thread guard", sums_no_guard, "out"),
        Wrong("hard-coded", sums_chunk_of_four, "compute it from the sizes"),
    ],
    "sticky_errors": [
        Wrong("every error", sticky_any_error, "most errors are not sticky"),
        Wrong("the 7xx range", sticky_7xx, "not all sticky"),
        Wrong("the usual list", sticky_usual_list, "names more sticky errors"),
        Wrong("inconsistent state", sticky_inconsistent_state, "cudaErrorAssert"),
        Wrong("the word terminated", sticky_terminated, "cudaErrorGraphRecaptureFailure"),
        Wrong("unjoined lines", sticky_unjoined, "wrapped over two lines"),
        Wrong("sorted", sticky_sorted, "returned"),
        Wrong("members not names", sticky_members, "returned"),
    ],
}
WRONG_GPU = {}
