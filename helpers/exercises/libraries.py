"""Exercise kinds for notebooks 08-11 (CuPy, PyCUDA, cuda-python, interop).

- ``ArrayExercise``  ``def f(xp, *arrays)`` written against the NumPy/CuPy array API. On a GPU it
  runs with ``xp = cupy``; in CPU mode NumPy stands in (CuPy mirrors NumPy's API), and the
  message says so.
- ``CudaCExercise``  CUDA C (a RawKernel/SourceModule source or an ElementwiseKernel/ReductionKernel
  snippet). Everywhere: compiled with NVRTC, kernel name and signature checked, then run and
  compared with NumPy, with a guard band after the output to catch a missing bounds check: on a
  GPU through the library, in CPU mode from its PTX in helpers.ptx (cuda_run.py). Where the CPU
  runner refuses an instruction the status is "unchecked", never "passed".
- ``CallExercise``   a plain function graded by a custom ``judge`` (for answers that must raise,
  return addresses, and other things ``FunctionExercise`` does not compare).
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from typing import Any, Callable, NamedTuple

import numpy as np

from .. import cuda_c, env
from .base import Exercise, source
from .executor import LOCAL, takes_executor
from .results import Graded

_allclose = np.allclose


def _where() -> str:
    return "CuPy on the GPU" if env.on_gpu() else "NumPy standing in for CuPy (CPU mode)"


# NumPy names that mean the same with CuPy arrays (constants, dtypes, np.newaxis): not "calling NumPy"
_NUMPY_NEUTRAL = {"newaxis", "pi", "e", "inf", "nan", "float16", "float32", "float64", "int8", "int16", "int32"}
_NUMPY_NEUTRAL |= {"int64", "uint8", "uint16", "uint32", "uint64", "bool_", "complex64", "complex128", "dtype"}


def _numpy_calls(fn) -> list[str]:
    """The `np.…` / `numpy.…` uses in the function's code that would run NumPy on the data: read
    from its syntax tree, so a docstring or comment mentioning np. and `n[:, np.newaxis]` do not count."""
    from .base import _source_text

    try:
        tree = ast.parse(_source_text(fn) or "")
    except (OSError, TypeError, SyntaxError):
        return []
    return [
        f"{node.value.id}.{node.attr}"
        for node in ast.walk(tree)
        if isinstance(node, ast.Attribute)
        and isinstance(node.value, ast.Name)
        and node.value.id in ("np", "numpy")
        and node.attr not in _NUMPY_NEUTRAL
    ]


@dataclass(eq=False, repr=False)
class _FunctionAnswer(Exercise):
    """The answer is a Python function; the model answer is ``reference``."""

    reference: Callable = None

    def reference_answer(self):
        return self.reference

    def _solution_text(self):
        return source(self.reference)

    def _not_a_function(self, fn) -> Graded | None:
        if not callable(fn):
            return Graded("failed", f"pass your function itself, e.g. check({self.name}).")
        return None


class ArrayCall(NamedTuple):
    """What ``fn(xp, *arrays)`` gave: its value on the host (None: not an array the check reads), whether
    it was a CuPy array, and its type's name."""

    value: object
    on_device: bool
    kind: str


def array_call(fn, inputs) -> ArrayCall:
    """``fn(xp, *arrays)``, xp CuPy on a GPU (else NumPy), the inputs made xp arrays."""
    if env.on_gpu():
        import cupy as xp
    else:
        xp = np
    got = fn(xp, *[xp.asarray(a) for a in inputs])
    on_device, kind = isinstance(got, getattr(xp, "ndarray", np.ndarray)), type(got).__name__
    if env.on_gpu() and not on_device:
        return ArrayCall(None, False, kind)
    return ArrayCall(xp.asnumpy(got) if env.on_gpu() else np.asarray(got), on_device, kind)


@dataclass(eq=False, repr=False)
class ArrayExercise(_FunctionAnswer):
    # reference: (xp, *arrays) -> array
    make_inputs: Callable = None  # rng -> tuple of NumPy arrays
    trials: int = 4
    rtol: float = 1e-5
    atol: float = 1e-6
    mistakes: tuple = ()  # (wrong(xp, *arrays), message)

    def _grade(self, fn, rng, executor=LOCAL) -> Graded:
        if bad := self._not_a_function(fn):
            return bad
        if _numpy_calls(fn):
            return Graded(
                "failed",
                "your function calls NumPy directly (np.…): write xp.… instead, so the same code runs "
                "on CuPy arrays on the GPU.",
            )
        for trial in range(self.trials):
            inputs = self.make_inputs(rng)
            want = np.asarray(self.reference(np, *inputs))
            done = executor.host_run("array_call", fn, array_call, list(inputs))
            got, kind = done.value, done.kind
            if env.on_gpu() and not done.on_device:
                return Graded(
                    "failed",
                    f"your function returned {kind}, not a CuPy array: keep the result on "
                    "the GPU (no .get() or cupy.asnumpy inside the function).",
                )
            if got is None:
                return Graded("failed", f"your function returned {kind}, not an array.")
            shapes = ", ".join(str(a.shape) for a in inputs)
            if got.shape != want.shape:
                return Graded(
                    "failed", f"for inputs of shape {shapes} the result has shape {got.shape}, expected {want.shape}."
                )
            if not _allclose(got, want, rtol=self.rtol, atol=self.atol, equal_nan=True):
                why = "ex.hint() gives a nudge."
                for wrong, message in self.mistakes:
                    w = np.asarray(wrong(np, *inputs))
                    if w.shape == got.shape and _allclose(got, w, rtol=self.rtol, atol=self.atol):
                        why = message
                        break
                return Graded("failed", f"wrong values for inputs of shape {shapes}: {why}")
            if got.dtype != want.dtype:
                return Graded(
                    "failed",
                    f"the values are right but the result is {got.dtype} and the inputs are {want.dtype}: a wider type "
                    "doubles the memory and the traffic of every later step; keep the input's dtype.",
                )
        return Graded(
            "passed", f"correct on {self.trials} random inputs, run with {_where()}.", None, {"trials": self.trials}
        )


# ----------------------------------------------------------------------------- CUDA C


def _to_source(kind: str, answer, ex) -> str:
    """The full translation unit NVRTC compiles for this kind of answer."""
    if kind == "raw":
        return answer
    if kind == "sourcemodule":  # PyCUDA wraps the source in extern "C" (no_extern_c=False)
        return 'extern "C" { ' + answer + "\n}\n"  # same line numbers as the learner's source
    if kind == "elementwise":
        return cuda_c.elementwise_source(ex.in_params, ex.out_params, answer, name=ex.kernel)
    if kind == "reduction":
        m, r, p, ident = answer
        return cuda_c.reduction_source(ex.in_params, ex.out_params, m, r, p, ident, name=ex.kernel)
    if kind == "pycuda_elementwise":
        return cuda_c.pycuda_elementwise_source(ex.arguments, answer, name=ex.kernel)
    raise ValueError(kind)


@dataclass(eq=False, repr=False)
class CudaCExercise(Exercise):
    kind: str = "raw"  # raw | sourcemodule | elementwise | reduction | pycuda_elementwise
    kernel: str = "kernel"
    c_params: str = ""  # raw/sourcemodule: the required parameter list
    in_params: str = ""  # elementwise/reduction (CuPy)
    out_params: str = ""
    arguments: str = ""  # pycuda_elementwise
    reference: Any = None  # the model answer: a source string, or a 4-tuple for a reduction
    run_gpu: Callable = None  # (answer, values) -> (got, guard_ok): GPU mode, on make_inputs' values
    # CPU mode (cuda_run.py): inputs by parameter name, the NumPy oracle, the written parameter
    make_inputs: Callable = None  # rng -> {param: NumPy array or scalar}
    oracle: Callable = None  # values -> expected output
    output: str = ""
    mistakes: tuple = ()  # (values -> wrong output, sentence)
    shared_bytes: int = 0
    block: int = 0  # a raw kernel whose shared arrays are sized for one block size: launched with it alone

    def reference_answer(self):
        return self.reference

    def _solution_text(self):
        if self.kind == "reduction":
            return "map_expr, reduce_expr, post_map_expr, identity = " + repr(self.reference)
        return self.reference

    def _answer_problem(self, answer):
        if self.kind == "reduction":
            if not (isinstance(answer, (tuple, list)) and len(answer) == 4 and all(isinstance(s, str) for s in answer)):
                return "give four strings: (map_expr, reduce_expr, post_map_expr, identity)."
        elif not isinstance(answer, str):
            return f"give the CUDA C as a string, not {type(answer).__name__}."
        return None

    def _grade(self, answer, rng, executor=LOCAL) -> Graded:
        problem = self._answer_problem(answer)
        if problem:
            return Graded("failed", problem)
        src = _to_source(self.kind, answer, self)
        run_src = src
        if self.kind in ("raw", "sourcemodule"):
            src += cuda_c.signature_probe(self.kernel, self.c_params)
        try:
            ptx = executor.compile_cuda(src, name=f"{self.kernel}.cu")
        except cuda_c.CompileError as e:
            msg = str(e)
            if f'identifier "{self.kernel}" is undefined' in msg:
                return Graded(
                    "failed", f"there is no kernel named {self.kernel}: the exercise looks it up by that name."
                )
            if "SIGNATURE:" in msg:
                return Graded(
                    "failed",
                    f"the kernel compiles but its parameters are wrong: declare it as {self.kernel}({self.c_params}).",
                )
            msg = msg.split(": ", 1)[-1]
            if self.kind not in (
                "raw",
                "sourcemodule",
            ):  # line numbers refer to the generated wrapper, not to the snippet
                msg = re.sub(r"\S+\.cu\(\d+\): ", "", msg)
            return Graded("failed", f"NVRTC rejects it: {msg}")
        entries = cuda_c.entry_points(ptx)
        if self.kernel not in entries:
            mangled = [e for e in entries if self.kernel in e]
            if mangled:
                return Graded(
                    "failed",
                    f"the kernel is exported as {mangled[0]} (a C++ mangled name), so looking up "
                    f'"{self.kernel}" fails: declare it extern "C".',
                )
            return Graded("failed", f"no __global__ function named {self.kernel} in the source.")
        what = "compiles with NVRTC" + (" and has the right signature" if self.kind in ("raw", "sourcemodule") else "")
        if self.make_inputs is None or (env.on_gpu() and self.run_gpu is None):  # never a tick for unrun numbers
            return Graded(
                "unchecked",
                f"{what}, but the numbers could not be run here (this exercise has no runner "
                + ("on a GPU)." if env.on_gpu() else "without a GPU): run this check on a GPU to test them."),
                None,
                {"numbers_checked": False},
            )
        if not env.on_gpu():
            from .cuda_run import check_on_cpu

            return check_on_cpu(self, run_src, rng, what, answer, executor)
        from .cuda_run import check_on_gpu

        return check_on_gpu(self, answer, run_src, rng, what, executor)


# ----------------------------------------------------------------------------- custom function checks


@dataclass(eq=False, repr=False)
class CallExercise(_FunctionAnswer):
    """``judge(fn, rng) -> (ok, message)`` does the whole check; used where answers must raise,
    return addresses, or be compared in a way ``FunctionExercise`` does not model. A judge that runs
    the function other than by calling it (counts its library calls, reads its memory, launches
    through it) takes a third parameter, ``executor``, and runs it there (exercises/executor.py)."""

    judge: Callable = None
    success: str = "correct."
    # A function of no arguments that builds the reference (a ufunc, an @njit function): mutation
    # testing (helpers/mutation) rewrites its source to derive wrong answers.
    factory: Callable = None
    # True when ``judge`` also works on a stand-in for a function in the student's process
    # (grading/remote.py): the batch grader may then judge this exercise from its own process.
    remote_ok: bool = False

    def _grade(self, fn, rng, executor=LOCAL) -> Graded:
        if bad := self._not_a_function(fn):
            return bad
        ok, message = self.judge(fn, rng, executor) if takes_executor(self.judge) else self.judge(fn, rng)
        return Graded("passed" if ok else "failed", message)


def gpu_output_with_guard(cp, n, dtype=np.float32, pad=64):
    """A CuPy output of n elements followed by ``pad`` NaN (or -1) sentinels: (full, view)."""
    full = cp.full(n + pad, np.nan if np.dtype(dtype).kind == "f" else -1, dtype=dtype)
    return full, full[:n]


def guard_intact(cp, full, n) -> bool:
    tail = cp.asnumpy(full[n:])
    return bool(np.all(np.isnan(tail)) if tail.dtype.kind == "f" else np.all(tail == -1))
