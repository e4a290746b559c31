"""Notebook 19 - debugging and errors: checking cuda.bindings results, a bug found from a kernel's
printout, and which CUDA errors are sticky.

All three run for real in CPU mode: ``cudaGetErrorName``/``cudaGetErrorString`` need no driver, the
kernel runs on the tracer, and which errors are sticky is read from the runtime's own documentation
(the docstrings cuda.bindings carries for each ``cudaError_t`` member) every time the check runs, so
the truth table is CUDA's, never typed here.
"""

from __future__ import annotations

import numpy as np
from numba import cuda

from helpers.exercises import CallExercise, FunctionExercise, In, KernelExercise, Out, per_element, register
from helpers.exercises.base import fmt

# ----------------------------------------------------------------------------- 1. check() a runtime call


def _check(result):
    from cuda.bindings import runtime

    err, *values = result
    if err != runtime.cudaError_t.cudaSuccess:
        _, name = runtime.cudaGetErrorName(err)  # each of these returns (err, bytes) itself
        _, text = runtime.cudaGetErrorString(err)
        raise RuntimeError(f"{name.decode()}: {text.decode()}")
    if not values:
        return None
    if len(values) == 1:
        (value,) = values  # one value on its own
        return value
    return tuple(values)


def _said(given) -> str:
    return f"check({fmt(given)})"


def _success_problem(fn, given, want, what) -> str | None:
    try:
        got = fn(given)
    except Exception as e:  # the learner's code may raise anything: one sentence names it
        if type(e).__name__ == "ValueError" and "unpack" in str(e):
            return (
                f"{_said(given)} raised ValueError ({e}): a call returns (err,) alone or (err, value, ...), so split "
                "it with err, *values = result."
            )
        return f"{_said(given)} raised {type(e).__name__}: {e}, but {given[0].name} is a success ({what})."
    if type(got) is not type(want) or got != want:
        return f"{_said(given)} returned {fmt(got)}, expected {fmt(want)}: {what}."
    return None


def _message_problem(err, message: str) -> str | None:
    from cuda.bindings import runtime

    name = runtime.cudaGetErrorName(err)[1].decode()
    text = runtime.cudaGetErrorString(err)[1].decode()
    if name in message and text in message and f"b'{name}" not in message and f"b'{text}" not in message:
        return None
    if "cudaSuccess" in message:
        return (
            f"for {name} the message reads {message!r}: cudaGetErrorName and cudaGetErrorString return (err, bytes) "
            "themselves; take the second item and .decode() it."
        )
    if f"b'{name}" in message or f"b'{text}" in message:
        return f"for {name} the message reads {message!r}: the names come back as bytes; .decode() them to text."
    if name in message:
        return f"the message {message!r} names {name} but not what it means: add cudaGetErrorString's text."
    if text in message:
        return f"the message {message!r} says what happened but not which error: add cudaGetErrorName's name."
    return (
        f"for {name} the message reads {message!r}: name the error, as "
        f"'{name}: {text}' (cudaGetErrorName, then cudaGetErrorString)."
    )


def _judge_check(fn, rng):
    from cuda.bindings import runtime

    errors = runtime.cudaError_t
    ok = errors.cudaSuccess
    value = int(rng.integers(1, 10**6))
    successes = (
        ((ok, value, 2), (value, 2), "several values come back as a tuple"),
        ((ok, value), value, "one value comes back on its own, not in a tuple"),
        ((ok,), None, "a call with no value returns (err,) alone: return None"),
        (runtime.cudaGetErrorName(errors.cudaErrorInvalidValue), b"cudaErrorInvalidValue", "a real call's result"),
    )
    for given, want, what in successes:
        if problem := _success_problem(fn, given, want, what):
            return False, problem
    drawn = [e for e in errors if e not in (ok, errors.cudaErrorApiFailureBase)]
    failures = [
        (errors.cudaErrorIllegalAddress,),
        (errors.cudaErrorInvalidValue, None),
        (drawn[int(rng.integers(len(drawn)))], None),
    ]
    for given in failures:
        try:
            got = fn(given)
        except Exception as e:  # the learner chooses the exception type; its message is what is checked
            if problem := _message_problem(given[0], str(e)):
                return False, problem
            continue
        return (
            False,
            f"{_said(given)} returned {fmt(got)}: an error code must raise, or the failure goes unnoticed and the "
            "next call fails for a reason nobody reported.",
        )
    return True, "returns what successful calls give and raises naming the error and its meaning on failures."


check_call = CallExercise(
    prompt="Write check(result) for cuda.bindings.runtime results: result is (err, *values). When err is not "
    "cudaSuccess raise RuntimeError('<name>: <description>') with the name from runtime.cudaGetErrorName(err) and the "
    "description from runtime.cudaGetErrorString(err); otherwise return None, the one value, or a tuple of them.",
    reference=_check,
    remote_ok=True,  # judged grading: its judge only calls fn (enums, bytes and exceptions cross the wire)
    judge=_judge_check,
    hints=(
        "err, *values = result; every runtime result starts with a cudaError_t, and cudaSuccess is 0.",
        "runtime.cudaGetErrorName(err) returns (cudaSuccess, b'cudaError...'): take [1] and .decode() it.",
    ),
)

# ----------------------------------------------------------------------------- 2. the bug the printout shows


def _x_size(n):
    """x for n threads: 4n - 1 elements for odd n (chunks of 4, the last one short), 6n for even n (chunks of 6,
    none short), so no one chunk length is right for every size, and an odd size is never an even one's."""
    return 4 * n - 1 if n % 2 else 6 * n


@cuda.jit
def _chunk_sums(x, out):
    i = cuda.grid(1)
    if i < out.size:
        chunk = (x.size + out.size - 1) // out.size  # rounded up: every element has a thread
        start = i * chunk
        stop = min(start + chunk, x.size)  # the last chunk may be short
        s = 0
        for k in range(start, stop):
            s += x[k]
        out[i] = s


def _sums(x, n, chunk, stop_short=0):
    out = np.zeros(n, np.int32)
    for i in range(n):
        lo = i * chunk
        out[i] = x[lo : min(lo + chunk, x.size) - stop_short].sum() if lo < x.size else 0
    return out


def _n(x):
    return (x.size + 1) // 4 if x.size % 2 else x.size // 6  # _x_size inverted


def _expect(x):
    n = _n(x)
    return _sums(x, n, -(-x.size // n))


def _sizes(rng, threads):
    # even n first (no short chunk), then odd n, where x.size // out.size loses the tail; the small one is not
    # first, so a size copied from the first case into the kernel is wrong for it
    return [
        threads * int(rng.integers(2, 5)),
        2 * int(rng.integers(1, threads // 2)) + 1,
        threads * int(rng.integers(2, 5)) + 1,
        1024 + 2 * int(rng.integers(1, threads)),
    ]


chunk_sums = KernelExercise(
    prompt="Fix chunk_sums(x, out): thread i sums x[i * chunk : (i + 1) * chunk] into out[i], with chunk = x.size / "
    "out.size rounded UP, so every element of x has a thread; the last chunk is cut at the end of x.",
    args=(In("x", "int32", shape=lambda n: (_x_size(n),), low=0, high=100), Out("out", "int32")),
    expect=_expect,
    reference=_chunk_sums,
    launch=per_element(32, 64),
    sizes=_sizes,
    mistakes=(
        (
            lambda x: _sums(x, _n(x), x.size // _n(x)),
            "chunk = x.size // out.size rounds down, so the last x.size % out.size elements belong to no thread (the "
            "printout's last range stops short of x.size): round up, (x.size + out.size - 1) // out.size.",
        ),
        (
            lambda x: _sums(x, _n(x), -(-x.size // _n(x)), stop_short=1),
            "each chunk misses its last element: range(start, stop) already stops before stop.",
        ),
        (
            lambda x: _sums(x, _n(x), 4),
            "a chunk of 4 is right for section 1's 19 elements over 5 threads only: compute it from the sizes, "
            "(x.size + out.size - 1) // out.size.",
        ),
        (
            lambda x: _sums(x, _n(x), x.size // _n(x) + 1),
            "x.size // out.size + 1 is one too many whenever out.size divides x.size: round up with "
            "(x.size + out.size - 1) // out.size.",
        ),
    ),
    hints=(
        "Print start and stop for the last two threads and compare the last stop with x.size.",
        "chunk = (x.size + out.size - 1) // out.size; stop = min(start + chunk, x.size).",
    ),
)

# ----------------------------------------------------------------------------- 3. which errors are sticky

STICKY = "the process must be terminated and relaunched"  # the sentence CUDA's documentation ends a sticky error with


def _documented_sticky(err):
    return STICKY in " ".join((err.__doc__ or "").split())


def _sticky_errors(errors):
    sticky = []
    for err in errors:
        documented = " ".join((err.__doc__ or "").split())  # docstrings wrap the sentence over lines
        if STICKY in documented:
            sticky.append(err.name)
    return sticky


def _keeping(rule):
    """A wrong answer: the names of the errors ``rule`` keeps, in the order given."""
    return lambda errors: [err.name for err in errors if rule(err)]


class _Errors:
    """A list of cuda.bindings.runtime.cudaError_t members, drawn among all of them, with at least one sticky."""

    def draw(self, rng):
        from cuda.bindings import runtime

        members = list(runtime.cudaError_t)
        sticky = [m for m in members if _documented_sticky(m)]
        picked = [members[int(k)] for k in rng.choice(len(members), size=int(rng.integers(4, 12)), replace=False)]
        picked.insert(int(rng.integers(len(picked) + 1)), sticky[int(rng.integers(len(sticky)))])
        return picked


def _edge_cases():
    from cuda.bindings import runtime

    names = (
        "cudaErrorIllegalAddress",
        "cudaErrorLaunchOutOfResources",
        "cudaErrorInvalidConfiguration",
        "cudaErrorAssert",
        "cudaErrorLaunchFailure",
        "cudaErrorInvalidPc",
        "cudaErrorTensorMemoryLeak",
        "cudaErrorContained",
        "cudaErrorMpsClientTerminated",
        "cudaErrorGraphRecaptureFailure",
        "cudaErrorMemoryAllocation",
        "cudaSuccess",
        "cudaErrorApiFailureBase",
    )
    return (([getattr(runtime.cudaError_t, name) for name in names],),)


_CLASSIC = {700, 702, 710, 714, 715, 716, 717, 718, 719}  # the list most tutorials give

sticky_errors = FunctionExercise(
    prompt="Write sticky_errors(errors): errors is a list of cuda.bindings.runtime.cudaError_t members. Return the "
    "names (err.name) of those CUDA's documentation calls sticky (after one, every CUDA call of the process fails "
    "until the process is restarted), in the order given. Read the documentation from err.__doc__ (None for a member "
    "without one).",
    reference=_sticky_errors,
    inputs={"errors": _Errors()},
    edge_cases=_edge_cases(),
    trials=60,
    mistakes=(
        (
            _keeping(lambda err: int(err) != 0),
            "most errors are not sticky: a bad launch configuration or a failed allocation fails that call alone, "
            "and the next call works.",
        ),
        (
            _keeping(lambda err: 700 <= int(err) < 800),
            "the 7xx codes are not all sticky (cudaErrorLaunchOutOfResources, 701, is refused before the kernel "
            "runs): read each error's documentation.",
        ),
        (
            _keeping(lambda err: int(err) in _CLASSIC),
            "the documentation names more sticky errors than the usual list (cudaErrorContained, "
            "cudaErrorTensorMemoryLeak, ...): read err.__doc__ rather than a list of your own.",
        ),
        (
            _keeping(lambda err: "inconsistent state" in " ".join((err.__doc__ or "").split())),
            "cudaErrorAssert's documentation says it in other words: look for the sentence every sticky error "
            f"shares, '{STICKY}'.",
        ),
        (
            _keeping(lambda err: "terminated" in (err.__doc__ or "")),
            "cudaErrorGraphRecaptureFailure's documentation says a capture was terminated, not the process: look for "
            f"the whole sentence, '{STICKY}'.",
        ),
        (
            _keeping(lambda err: STICKY in (err.__doc__ or "")),
            "the sentence is wrapped over two lines in several docstrings: join the words first, "
            "' '.join(err.__doc__.split()).",
        ),
    ),
    hints=(
        "print(runtime.cudaError_t.cudaErrorIllegalAddress.__doc__): its last sentence is the one to look for.",
        f"' '.join((err.__doc__ or '').split()) puts a docstring on one line; keep err.name when '{STICKY}' is in it.",
    ),
)

EXERCISES = register(__name__, globals())
