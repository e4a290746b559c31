"""Call a learner's function on device arrays and watch which library algorithms it used.

Why a module of its own: notebook 14's checks hand the learner's function device arrays and
count its calls to ``cuda.compute``; in the batch grader's judged mode that must happen in the
student's process, which cannot read ``helpers/problems``. What comes back is host data.
"""

from __future__ import annotations

import contextlib

import numpy as np

from .._elsewhere import is_remote


@contextlib.contextmanager
def counting(module, names):
    """Count calls to module.<name> while the learner's function runs (the module object is shared)."""
    calls = dict.fromkeys(names, 0)
    saved = {n: getattr(module, n) for n in names}

    def wrap(name, fn):
        def counted(*args, **kwargs):
            calls[name] += 1
            return fn(*args, **kwargs)

        return counted

    for n in names:
        setattr(module, n, wrap(n, saved[n]))
    try:
        yield calls
    finally:
        for n, fn in saved.items():
            setattr(module, n, fn)


def to_host(cp, a):
    """A device (or host) array as a NumPy array; anything else as it is."""
    return np.asarray(cp.asnumpy(a)) if hasattr(a, "__cuda_array_interface__") or isinstance(a, np.ndarray) else a


def device_call(fn, host_args, count=()):
    """``fn(*device arrays)`` with calls to ``cuda.compute``'s ``count`` functions counted: (what it
    returned, on the host; the counts; the arguments afterwards, on the host)."""
    from ..standins import library

    cp, cc = library("cupy"), library("cuda.compute")
    args = [cp.asarray(a) for a in host_args]
    with counting(cc, tuple(count)) as calls:
        got = fn(*args)
    got = tuple(to_host(cp, g) for g in got) if isinstance(got, tuple) else to_host(cp, got)
    return got, dict(calls), [to_host(cp, a) for a in args]


def observed_call(fn, host_args, count=()):
    """device_call here, or in the student's process for a stand-in (exercises/remote.py)."""
    if not is_remote(fn):
        return device_call(fn, host_args, count)
    reply = fn.device_call(list(host_args), list(count))
    return reply["result"], {str(k): int(v) for k, v in reply["calls"].items()}, list(reply["args"])


def answer_facts(obj) -> dict:
    """What notebook 12's checks ask of the answer object itself (a ufunc? an @njit with
    parallel=True?), as plain data: the batch grader's judge reads these for an answer that lives
    in the student's process."""
    from .. import _numba

    ufunc = isinstance(obj, np.ufunc) or type(obj).__name__ == "DUFunc"
    nin = getattr(obj, "nin", None) if ufunc else None
    return {
        "type": type(obj).__name__,
        "ufunc": bool(ufunc),
        "nin": int(nin) if isinstance(nin, (int, np.integer)) else None,
        "np_vectorize": isinstance(obj, np.vectorize),
        "cpu_jit": bool(_numba.is_cpu_jit(obj)),
        "parallel": bool(_numba.cpu_jit_options(obj).get("parallel")),
    }


def facts_of(fn) -> dict:
    """answer_facts here, or as the student's process described the answer (exercises/remote.py)."""
    if is_remote(fn):
        return dict(fn._desc.get("facts") or {})
    return answer_facts(fn)


def parfors(fn) -> int:
    """How many loops Numba made parallel in the answer's compiled versions (after it was called)."""
    from .. import _numba

    if is_remote(fn):
        return int(fn.live_fact("parfor_count"))
    return _numba.parfor_count(fn)
