"""The student's side of a judged submission: run what the judge asks, answer in plain data.

Runs INSIDE the grading child when the grader judges in its own process (``judge.py``). The
child never imports the course's exercises: ``install_stubs`` puts stand-in modules named
``helpers.problems.nbNN`` in place whose exercises only record what ``check`` was given (the
sandbox hides the real files). The judge then asks for operations on the recorded answers by
handle: call a function, trace a kernel on the CPU tracer, launch it on the GPU, compile it,
draw a traced block. Inputs arrive as plain data and results leave as plain data
(``helpers._wire``); no expected value, reference or key is ever here.
"""

from __future__ import annotations

import inspect
import io
import sys
import types

import numpy as np

from .. import _wire

MISSING = type("Missing", (), {"__repr__": lambda self: "<no answer>"})()
_MAX_TRACES = 8  # traces kept for pictures: the judge asks right after a failing trace


class ExerciseStub:
    """What a notebook sees as ``nb02.saxpy`` while it is graded: ``check`` records its argument."""

    def __init__(self, ex_id: str, prompt: str, record):
        self.id, self.name = ex_id, ex_id.rsplit(".", 1)[-1]
        self.notebook = ex_id.rsplit(".", 1)[0]  # what the tamper report names
        self.prompt = prompt
        self._record = record

    def check(self, answer=MISSING, seed=None, **options):
        self._record(self.id, answer, options)

    def grade(self, *a, **k):
        return None

    def hint(self, *a, **k):
        print(f"(hints for {self.id} are not shown while grading)")

    def solution(self, *a, **k):
        print(f"(the solution of {self.id} is not shown while grading)")

    def __repr__(self):
        return f"<Exercise {self.id}: {self.prompt}>"


def install_stubs(public: dict, record) -> list:
    """``helpers.problems`` and its ``nbNN`` modules as stand-ins (exercises and public constants);
    returns the stand-in exercises."""
    pkg = types.ModuleType("helpers.problems")
    pkg.__path__ = []  # a package with nothing on disk: every submodule is one of these stand-ins
    pkg.MODULES = tuple(sorted(public))
    # helpers.progress() (notebook 01's last cell) lists the exercises: none live here, so its table is the
    # progress this process recorded, and the cell runs instead of failing in every student's feedback
    pkg.all_exercises = lambda: []
    sys.modules["helpers.problems"] = pkg
    import helpers

    helpers.problems = pkg
    stubs = []
    for module, spec in public.items():
        mod = types.ModuleType(f"helpers.problems.{module}")
        for name, value in (spec.get("constants") or {}).items():
            setattr(mod, name, _wire.decode(value))
        exercises = {}
        for name, ex in (spec.get("exercises") or {}).items():
            exercises[name] = ExerciseStub(f"{module}.{name}", str(ex.get("prompt") or ""), record)
            setattr(mod, name, exercises[name])
        mod.EXERCISES = exercises
        sys.modules[mod.__name__] = mod
        setattr(pkg, module, mod)
        stubs.extend(exercises.values())
    return stubs


# operations on one recorded answer (by its handle)
_ON_ANSWERS = (
    "call",
    "trace",
    "gpu",
    "pipeline",
    "array_call",
    "pycuda_call",
    "facts",
    "storage_call",
    "core_launch",
)


class Server:
    """Answers the judge's requests about the objects recorded in this process."""

    def __init__(self, on_gpu: bool):
        self.on_gpu = on_gpu
        self.handles: dict[int, object] = {}
        self.traces: dict[int, object] = {}
        self.kernels: dict[tuple, object] = {}
        self._next = 0

    # -- describing answers
    def describe(self, obj, want: str) -> dict:
        """What the judge needs to build its stand-in: plain data, never the object itself."""
        from .. import _numba
        from ..exercises.base import source

        if obj is MISSING:
            return {"kind": "missing"}
        if want == "value" or not callable(obj):
            return {"kind": "value", "value": obj}
        self._next += 1
        handle = self._next
        self.handles[handle] = obj
        py = _numba.python_function(obj)
        cuda = _numba.is_cuda_function(obj)
        fn = py or obj
        desc = {
            "handle": handle,
            "kind": "kernel" if (cuda or py is not None) else "function",
            "name": str(getattr(fn, "__name__", "") or "<lambda>"),
            "qualname": str(getattr(fn, "__qualname__", "") or ""),
            "params": _params(fn),
            "file": str(getattr(getattr(fn, "__code__", None), "co_filename", "") or ""),
            "pyfunction": inspect.isfunction(fn),
        }
        from ..exercises.library_calls import answer_facts

        desc["facts"] = answer_facts(obj)  # what a check may ask of the object itself (notebook 12)
        if desc["kind"] == "function" and inspect.isfunction(fn):  # run again by the judge (notebook 14)
            desc["host"] = _host_description(fn)
        if desc["kind"] == "kernel":
            desc.update(cuda=bool(cuda), configured=bool(py is not None and not cuda))
            desc["device"] = bool(_numba.is_device_function(obj)) if cuda else False
            desc["compile"] = _kernel_description(obj)
        try:
            src = source(obj) if desc["kind"] == "kernel" else inspect.getsource(fn)
            desc["source"] = src if isinstance(src, str) and not src.startswith("(source not available") else None
        except (OSError, TypeError):
            desc["source"] = None
        return desc

    def _course_kernel(self, spec: dict):
        """A kernel of the course's (a pipeline exercise hands one to the learner's function), compiled
        here from the source the grader sent: this process cannot read helpers/problems."""
        key = (str(spec.get("name")), str(spec.get("source")))
        if key not in self.kernels:
            from numba import cuda

            ns = {"cuda": cuda, "np": np}
            exec(compile(key[1], f"<course kernel {key[0]}>", "exec"), ns)  # noqa: S102 - the grader's source
            self.kernels[key] = ns[key[0]]
        return self.kernels[key]

    # -- operations
    def handle(self, request: dict) -> dict:
        op = request.get("op")
        obj = self.handles.get(request.get("handle"))
        if op in _ON_ANSWERS and obj is None:
            raise LookupError("no such answer")
        args = list(request.get("args") or [])
        if op == "call":
            kwargs = request.get("kwargs") or {}
            return {"value": obj(*args, **{str(k): v for k, v in kwargs.items()})}
        if op == "trace":
            return trace_op(obj, request, self.traces)
        if op == "gpu":
            return gpu_op(obj, request)
        if op == "pipeline":
            from ..exercises.pipeline import _is_device_array, observe

            x = request.get("x")
            if not isinstance(x, np.ndarray):
                raise LookupError("a pipeline run needs an array")
            launches, copies, got = observe(obj, self._course_kernel(request.get("kernel") or {}), x)
            kind = "device" if _is_device_array(got) else "ndarray" if isinstance(got, np.ndarray) else "other"
            return {
                "launches": [[int(t), [bool(b) for b in on], block, bool(same)] for t, on, block, same in launches],
                "copies": {"in": int(copies["in"]), "out": int(copies["out"])},
                "got_kind": kind,
                "got": np.asarray(got) if kind == "ndarray" else None,
                "got_type": type(got).__name__,
                "x": x,
            }
        if op == "cuda_c_gpu":  # a CUDA C exercise's launch on the GPU, by the course's public runner
            from ..exercises.cuda_runners import RUNNERS

            runner = RUNNERS.get(str(request.get("runner")))
            if runner is None:
                raise LookupError("no such runner")
            got, guard_ok = runner(request.get("answer"), request.get("values") or {}, int(request.get("block") or 128))
            return {"got": np.asarray(got), "guard_ok": bool(guard_ok)}
        if op == "pycuda_call":  # a check that hands the learner's function a PyCUDA kernel of the course's
            from ..exercises.cuda_runners import call_with_pycuda_kernel

            done = call_with_pycuda_kernel(obj, request.get("kernel") or {}, list(request.get("args") or ()))
            kind = None if done.result is None or isinstance(done.result, np.ndarray) else type(done.result).__name__
            launches = [r._asdict() for r in done.launches]
            return {"result_type": kind, "args": done.args, "launches": launches, "wrapped": done.wrapped}
        if op == "facts":  # facts that change as the answer is used (compiled versions)
            from .. import _numba

            return {"parfor_count": int(_numba.parfor_count(obj))}
        if op == "storage_call":  # notebook 10: addresses into memory only this process has
            from ..exercises.library_calls import storage_call

            sizes = [int(v) for v in request.get("sizes") or ()][: len(args)]
            value, regions, reads = storage_call(obj, args, sizes)
            return {"value": value, "regions": [[int(lo), int(hi)] for lo, hi in regions], "reads": reads}
        if op == "core_launch":  # notebook 10: a cuda.core stream, kernel and device arrays made here
            from ..exercises.library_calls import core_launch_call

            extra = list(request.get("extra") or ())
            done = core_launch_call(obj, request.get("kernel") or {}, args, extra)
            return {"arrays": done.arrays, "launches": [r._asdict() for r in done.launches]}
        if op == "array_call":  # an ArrayExercise: xp chosen here, the inputs made xp arrays here
            if self.on_gpu:
                import cupy as xp
            else:
                xp = np
            got = obj(xp, *[xp.asarray(a) for a in request.get("args") or ()])
            on_device = self.on_gpu and isinstance(got, xp.ndarray)
            try:
                value = xp.asnumpy(got) if on_device else np.asarray(got)
            except Exception:  # whatever it returned, its type is the message
                value = None
            if value is not None and (value.dtype.kind not in "biufc" or value.dtype.hasobject):
                value = None
            return {"value": value, "device": bool(on_device), "type": type(got).__name__}
        if op == "show":
            return picture(self.traces.get(request.get("trace")), int(request.get("block") or 0))
        raise LookupError(f"unknown operation {op!r}")


def _kernel_description(kernel) -> dict:
    """What the grader's compile server needs of a kernel, taken here once, when check() is called:
    no input exists yet, so nothing in it can hold an answer (compile_check/describe.py). The judge
    adds its own inputs' types; it never asks this process again (executor.JudgedExecutor)."""
    from ..compile_check import describe

    try:
        return {"request": describe.kernel_description(kernel)}
    except describe.NotDescribable as e:
        return {"skipped": str(e)}
    except Exception as e:  # the student's own objects (a global's property...) may raise anything
        return {"skipped": f"describing it raised {type(e).__name__}"}


def _host_description(fn) -> dict:
    """A plain function's source and globals, taken at check() as a kernel's is (grading/host.py)."""
    from .host import NotRebuildable, describe

    try:
        return {"request": describe(fn)}
    except NotRebuildable as e:
        return {"skipped": str(e)}
    except Exception as e:  # the student's own objects may raise anything
        return {"skipped": f"describing it raised {type(e).__name__}"}


def trace_op(kernel, request: dict, traces: dict) -> dict:
    """Trace ``kernel`` on the request's launch, keeping the trace in ``traces`` for pictures (the
    last few: the judge asks right after a failing trace). This process's answer to "trace", and the
    judge's tracer process's (workers.py)."""
    from ..exercises.executor import LOCAL

    args = list(request.get("args") or [])
    grid, block = _grid(request["grid"]), _grid(request["block"])
    t = LOCAL.trace(kernel, grid, block, args, list(request.get("outputs") or []))
    tid = max(traces, default=0) + 1
    traces[tid] = t
    for old in sorted(traces)[:-_MAX_TRACES]:
        del traces[old]
    return trace_reply(t, args, tid)


def gpu_op(kernel, request: dict) -> dict:
    """Launch ``kernel`` on the GPU with guard bands: the arrays afterwards and the band hits."""
    from ..exercises.executor import LOCAL

    args = list(request.get("args") or [])
    hits = LOCAL.run_gpu(kernel, _grid(request["grid"]), _grid(request["block"]), args)
    return {"args": args, "hits": [[int(p), int(e)] for p, e in hits]}


def trace_reply(t, args, tid) -> dict:
    """A trace as plain data: the arrays afterwards, the verdicts, the metrics, the grid."""
    from ..exercises.executor import LOCAL

    return {
        "trace": tid,
        "args": args,
        "verdicts": [_verdict(v) for v in t.verdicts],
        "metrics": LOCAL.metrics(t),
        "griddim": list(t.griddim),
        "arrays": [[info.space, info.var, info.dtype.str] for info in t.arrays],
    }


def picture(t, block: int) -> dict:
    """The tracer's picture of one block as PNG bytes (None without a trace or a picture), drawn with the
    real drawing functions (undrawn.py: the student's own pictures are not drawn while grading)."""
    from .undrawn import drawing

    with drawing():
        fig = t.show(block=block) if t is not None else None
        if fig is None:
            return {"png": None}
        buf = io.BytesIO()
        fig.savefig(buf, format="png", dpi=80, bbox_inches="tight")
    return {"png": buf.getvalue()}


def _grid(g):
    return tuple(int(v) for v in g) if isinstance(g, (tuple, list)) else int(g)


def _params(fn):
    try:
        return [[p.name, p.kind.name, p.default is not p.empty] for p in inspect.signature(fn).parameters.values()]
    except (TypeError, ValueError):
        return None


def _verdict(v) -> dict:
    out = {}
    for name in ("kind", "message", "array", "block", "thread", "line", "count", "details"):
        value = getattr(v, name, None)
        out[name] = value if name == "details" else _plain_field(value)
    return out


def _plain_field(v):
    if v is None or isinstance(v, (bool, int, float, str)):
        return v
    if isinstance(v, (tuple, list)):
        return [_plain_field(x) for x in v]
    try:
        return int(v)
    except (TypeError, ValueError):
        return str(v)


def error_reply(exc: BaseException) -> dict:
    from ..errors import CourseError

    frames, tb = [], exc.__traceback__
    while tb is not None and len(frames) < 200:  # the functions it passed through, by name only
        frames.append(str(tb.tb_frame.f_code.co_name)[:80])
        tb = tb.tb_next
    return {
        "type": type(exc).__name__,
        "message": str(exc)[:1500],
        "course": isinstance(exc, CourseError),
        "refused": bool(getattr(exc, "refused", False)),  # Numba refused the kernel: failed, not error
        "frames": frames[-40:],
    }
