"""Notebook 14 - cuda.compute: CCCL's device-wide algorithms from Python.

The answers call ``cuda.compute`` (on a GPU) or its CPU stand-in (helpers.standins.cuda_compute),
whichever ``helpers.standins.library("cuda.compute")`` gives the notebook: the judges use the same
module object, count the learner's calls to it, and require the algorithm the exercise teaches.
"""

from __future__ import annotations

import numpy as np

from helpers.errors import LearnerError
from helpers.exercises import CallExercise, ValueExercise, register
from helpers.exercises.base import fmt
from helpers.exercises.library_calls import observed_call as _observed_call
from helpers.exercises.library_calls import ran_on


def observed_call(executor, fn, args, names):
    """The learner's call, with a real GPU's refusal of host memory told as the CPU stand-in tells it: on a
    GPU cuda.compute raises AttributeError: 'numpy.ndarray' object has no attribute '__cuda_array_interface__'."""
    try:
        return _observed_call(executor, fn, args, names)
    except AttributeError as e:
        if isinstance(e, LearnerError) or "__cuda_array_interface__" not in str(e):
            raise
        raise LearnerError(
            "cuda.compute got a NumPy array in host memory, and it works on device arrays only (AttributeError: "
            "'numpy.ndarray' object has no attribute '__cuda_array_interface__'): copy it with cp.asarray(...) "
            "or allocate it with cp.empty(...)."
        ) from None


def _libs():
    from helpers.standins import library

    return library("cupy"), library("cuda.compute")


# ----------------------------------------------------------------------------- reading a scan

scan_offset = ValueExercise(
    prompt="Stream compaction keeps the elements whose flag is 1. flags = [0, 1, 1, 0, 1, 0, 0, 1]. An exclusive "
    "sum-scan of the flags gives each kept element its index in the output. What is the output index of the "
    "element at position 4?",
    answer=2,
    mistakes={
        3: "3 is the inclusive scan at position 4 (it counts the element itself); the exclusive scan counts only the "
        "flags before it: 0 + 1 + 1 + 0 = 2.",
        4: "the position in the input is 4; the output index counts only the kept elements before it.",
    },
    explanation="exclusive_scan([0,1,1,0,1,0,0,1]) = [0,0,1,2,2,3,3,3]: the kept elements go to 0, 1, 2 and 3, "
    "and the total kept is the last offset plus the last flag.",
    hints=("Add up the flags strictly before position 4.",),
)

# ----------------------------------------------------------------------------- compaction offsets


def _offsets_reference(flags):
    cp, cc = _libs()
    n = flags.size
    offsets = cp.empty(n, dtype=np.int32)
    cc.exclusive_scan(d_in=flags, d_out=offsets, op=cc.OpKind.PLUS, init_value=np.zeros(1, np.int32), num_items=n)
    count = int(offsets[n - 1]) + int(flags[n - 1])
    return offsets, count


def _judge_offsets(fn, rng, executor):
    sizes = [1, 2, int(rng.integers(3, 40)), int(rng.integers(1000, 5000))]
    for i, n in enumerate(sizes):
        flags_h = (rng.random(n) < rng.uniform(0.2, 0.8)).astype(np.int32)
        if i == 0:
            flags_h[:] = 1
        want = np.concatenate(([0], np.cumsum(flags_h)[:-1])).astype(np.int64)
        done = observed_call(executor, fn, [flags_h], ("exclusive_scan", "inclusive_scan"))  # results on the host
        got, calls = done.result, done.calls
        if not (isinstance(got, tuple) and len(got) == 2):
            return False, f"compaction_offsets returned {fmt(got)}; return a pair (offsets, count)."
        offsets, count = got
        if not hasattr(offsets, "shape") or offsets.shape != (n,):
            return False, f"for {n} flags the offsets have shape {getattr(offsets, 'shape', '?')}, expected ({n},)."
        if not np.array_equal(offsets.astype(np.int64), want):
            if np.array_equal(offsets.astype(np.int64), np.cumsum(flags_h)):
                return False, (
                    "those are inclusive-scan offsets (each counts its own flag), so the first kept element lands "
                    "at 1: use cc.exclusive_scan with init_value=np.zeros(1, np.int32)."
                )
            bad = int(np.flatnonzero(offsets.astype(np.int64) != want)[0])
            return False, f"for {n} flags, offset {bad} is {fmt(offsets[bad])} but should be {want[bad]}."
        if offsets.dtype != np.int32:
            return False, (
                f"the offsets are {offsets.dtype}, and the exercise asks for int32 (half the memory, and the type "
                "the compaction kernel indexes with): allocate them with cp.empty(n, dtype=np.int32)."
            )
        if not done.on_device[0]:
            return False, (
                "the offsets came back as a NumPy array in host memory; the exercise asks for a device array: "
                "return the CuPy array cc.exclusive_scan wrote, without copying it to the host."
            )
        true_count = int(flags_h.sum())
        if isinstance(count, np.ndarray) and count.ndim == 0:  # CuPy's offsets[n - 1] is a 0-d device array
            return False, (
                f"the count is a 0-d array ({fmt(count)}), not a Python int: indexing a CuPy array, as in "
                "offsets[n - 1], gives a 0-d array on the device; convert the count with int(...)."
            )
        if isinstance(count, bool) or not isinstance(count, (int, np.integer)) or int(count) != true_count:
            return False, (
                f"for {n} flags the count is {fmt(count)} but {true_count} are kept: it is the last offset plus the "
                "last flag (the exclusive scan leaves the last element out)."
            )
        if not np.array_equal(done.args[0], flags_h):
            return False, "the flags changed: the scan reads them (d_in) and writes the offsets elsewhere; keep them."
        if calls["exclusive_scan"] > 1:
            return False, (
                f"cc.exclusive_scan ran {calls['exclusive_scan']} times for one array of flags; one scan gives every "
                "offset: call it once."
            )
        if calls["exclusive_scan"] == 0:
            used = "cc.inclusive_scan" if calls["inclusive_scan"] else "something other than cuda.compute"
            return False, (
                f"right numbers, but computed with {used}: this exercise is about cc.exclusive_scan, the "
                "device-wide scan CUB runs in one pass over the data."
            )
        if not ran_on(done, "exclusive_scan", ("d_in",), flags_h, ("d_out",), offsets):
            return False, (
                "right numbers, but not the ones cc.exclusive_scan computed: scan the flags you were given "
                "(d_in=flags) into the offsets you return (d_out=offsets)."
            )
    return (
        True,
        f"right offsets and counts for {len(sizes)} flag arrays (1 to {sizes[-1]} flags), with cc.exclusive_scan.",
    )


compaction_offsets = CallExercise(
    remote_ok=True,  # its judge calls the learner's function through observed_call (judged grading)
    prompt="Write compaction_offsets(flags): flags is a device array of int32 0/1 values; return (offsets, count) "
    "where offsets (an int32 device array) is the exclusive sum-scan of the flags computed with cc.exclusive_scan, "
    "and count (a Python int) is how many flags are 1.",
    reference=_offsets_reference,
    judge=_judge_offsets,
    hints=(
        "cc.exclusive_scan(d_in=..., d_out=..., op=cc.OpKind.PLUS, init_value=np.zeros(1, np.int32), num_items=n)",
        "count = int(offsets[n - 1]) + int(flags[n - 1])",
    ),
)

# ----------------------------------------------------------------------------- sort, largest first


def _sort_reference(keys):
    cp, cc = _libs()
    out = cp.empty_like(keys)
    cc.radix_sort(d_in_keys=keys, d_out_keys=out, num_items=keys.size, order=cc.SortOrder.DESCENDING)
    return out


def _judge_sort(fn, rng, executor):
    cases = [
        rng.integers(0, 2**32, size=int(rng.integers(1000, 4000)), dtype=np.uint32),
        rng.integers(0, 5, size=int(rng.integers(5, 30)), dtype=np.uint32),  # many ties
        (rng.standard_normal(int(rng.integers(100, 900))) * 100).astype(np.float32),  # negatives too
    ]
    for keys_h in cases:
        done = observed_call(executor, fn, [keys_h], ("radix_sort",))  # results on the host
        got, calls, (keys_after,) = done.result, done.calls, done.args
        want = np.sort(keys_h)[::-1]
        if not hasattr(got, "shape") or got.shape != keys_h.shape:
            return False, f"for {keys_h.size} keys it returned {fmt(got)}; return a device array of the same size."
        if not done.on_device[0]:
            return False, (
                "the sorted keys came back as a NumPy array in host memory; the exercise asks for a new device "
                "array: return the CuPy array cc.radix_sort wrote."
            )
        if got.dtype != keys_h.dtype:  # radix_sort writes the keys' bytes, unconverted (cuda-cccl 1.2.1, H200)
            return False, (
                f"the result is {got.dtype} but the keys are {keys_h.dtype}: cc.radix_sort writes keys of d_in_keys' "
                "type into d_out_keys without converting, so its numbers are garbage; allocate the output with "
                "cp.empty_like(keys)."
            )
        if not np.array_equal(keys_after, keys_h):
            return False, "the input keys changed: sort into a new array (d_out_keys), keep d_in_keys as it was."
        if not np.array_equal(got, want):
            if np.array_equal(got, np.sort(keys_h)):
                return False, "sorted smallest first: pass order=cc.SortOrder.DESCENDING."
            return False, f"for {keys_h.size} {keys_h.dtype} keys the result is not sorted largest first."
        if calls["radix_sort"] > 1:
            return False, f"cc.radix_sort ran {calls['radix_sort']} times for one array of keys; one sort is enough."
        if calls["radix_sort"] == 0:
            return False, (
                "right order, but not with cc.radix_sort: this exercise is about CUB's radix sort, which sorts "
                "descending without a reversed copy."
            )
        if not ran_on(done, "radix_sort", ("d_in_keys",), keys_h, ("d_out_keys",), got):
            return False, (
                "right order, but not the one cc.radix_sort computed: sort the keys you were given "
                "(d_in_keys=keys) into the array you return (d_out_keys=out)."
            )
    return True, "sorted uint32 keys (with ties) and float32 keys (with negatives) largest first, with cc.radix_sort."


sort_descending = CallExercise(
    remote_ok=True,
    prompt="Write sort_descending(keys): return a new device array with the keys (uint32 or float32) sorted largest "
    "first, using cc.radix_sort; do not change keys.",
    reference=_sort_reference,
    judge=_judge_sort,
    hints=(
        "out = cp.empty_like(keys); cc.radix_sort(d_in_keys=keys, d_out_keys=out, num_items=keys.size, order=...)",
        "order=cc.SortOrder.DESCENDING",
    ),
)


def _offsets_solution():
    return (
        "def compaction_offsets(flags):\n    n = flags.size\n    offsets = cp.empty(n, dtype=np.int32)\n"
        "    cc.exclusive_scan(d_in=flags, d_out=offsets, op=cc.OpKind.PLUS,\n"
        "                      init_value=np.zeros(1, np.int32), num_items=n)\n"
        "    return offsets, int(offsets[n - 1]) + int(flags[n - 1])\n"
    )


def _sort_solution():
    return (
        "def sort_descending(keys):\n    out = cp.empty_like(keys)\n"
        "    cc.radix_sort(d_in_keys=keys, d_out_keys=out, num_items=keys.size, order=cc.SortOrder.DESCENDING)\n"
        "    return out\n"
    )


def _as_written(text, name):
    """The solution as a notebook cell defines it (cp, cc and np its globals, its source readable): the
    judge runs a library answer again from that description (grading/host.py), and the references
    reach cp and cc through helpers."""
    import linecache

    cp, cc = _libs()
    filename = f"<solution {name}>"
    linecache.cache[filename] = (len(text), None, text.splitlines(True), filename)
    ns = {"cp": cp, "cc": cc, "np": np}
    exec(compile(text, filename, "exec"), ns)  # noqa: S102 - the course's own solution text
    return ns[name]


compaction_offsets._solution_text = _offsets_solution  # the reference reaches cp and cc through helpers
sort_descending._solution_text = _sort_solution
compaction_offsets.reference_answer = lambda: _as_written(_offsets_solution(), "compaction_offsets")
sort_descending.reference_answer = lambda: _as_written(_sort_solution(), "sort_descending")

EXERCISES = register(__name__, globals())
