"""The judged executor: where each operation of a check runs while the batch grader judges.

``Judge.grade_one`` (judge.py) passes ``JudgedExecutor(channel)`` to ``Exercise.grade``; the checks
call the operations of ``exercises/executor.py`` on it, and it sends each where it must run:

- what decides a grade comes from the judge's own processes (``workers.py``), never from the
  student's: whether a kernel compiles (the judge's Numba compile server, for the description the
  student's process gave at ``check()``), the tracer's verdicts and counts and a GPU launch of a
  kernel that compiler accepted (the judge's tracer process, the kernel rebuilt from that
  description), every CUDA C compile (the judge's NVRTC process), and a host function's library
  calls and stream records (the judge's worker, the function rebuilt from its description);
- the learner's own code runs in the student's (sandboxed) process: a kernel the compiler refused
  or could not check (traced there for its sentence only: it fails or stays unchecked whatever the
  trace says), calls, pipelines, CUDA C launches by the course's runners, notebook 10's memory
  reads and cuda.core launches;
- the course's own objects (not stand-ins) run here, as ``LOCAL`` runs them.

The replies are turned back into what the local operation returns, so the checks read one shape.
"""

from __future__ import annotations

import numpy as np

from .. import compile_check
from ..compile_check import describe
from ..errors import LearnerError
from ..exercises.cuda_runners import PycudaCall
from ..exercises.executor import LOCAL, LocalExecutor, RemoteFailure
from ..exercises.libraries import ArrayCall
from ..exercises.library_calls import CallSeen, CoreLaunch, DeviceCall, LaunchSeen, dims
from ..exercises.pipeline import Launch, kernel_source
from ..exercises.stream_runs import USES, WATCHING
from .remote import RemoteFunction, RemoteKernel, RemoteTrace, write_back


class JudgedExecutor(LocalExecutor):
    """The operations of one judged grading, over ``channel`` (judge.Channel: the student's process,
    with ``compiler``, ``tracer`` and ``nvrtc``, the judge's own processes for that submission)."""

    launch_compiles = False  # the launch may run anywhere; whether it compiles is the judge's server's word

    def __init__(self, channel):
        self.channel = channel

    # -- a kernel
    def trace(self, kernel, grid, block, call_args, outputs):
        if not isinstance(kernel, RemoteKernel):
            return LOCAL.trace(kernel, grid, block, call_args, outputs)
        where, named = self._runner(kernel, call_args)
        reply = where.request("trace", **named, grid=grid, block=block, args=list(call_args), outputs=list(outputs))
        write_back(call_args, reply.get("args"))
        return RemoteTrace(where, reply)

    def metrics(self, t) -> dict:
        return dict(t.metrics_plain) if isinstance(t, RemoteTrace) else LOCAL.metrics(t)

    def run_gpu(self, kernel, grid, block, call_args) -> list:
        if not isinstance(kernel, RemoteKernel):
            return LOCAL.run_gpu(kernel, grid, block, call_args)
        where, named = self._runner(kernel, call_args)
        reply = where.request("gpu", **named, grid=grid, block=block, args=list(call_args))
        write_back(call_args, reply.get("args"))
        return [(int(p), int(e)) for p, e in reply.get("hits") or ()]

    def compile_check(self, kernel, call_args):
        """The judge's own compile server says whether the kernel compiles, for the kernel as the
        student's process described it when check() was called (source, globals): that description
        was made before any input existed and is the only one taken, so no table of answers can be
        in it. The argument types are the judge's."""
        if not isinstance(kernel, RemoteKernel):
            return LOCAL.compile_check(kernel, call_args)
        described = kernel.course_description.get("compile")
        if not isinstance(described, dict) or not isinstance(described.get("request"), dict):
            why = described.get("skipped") if isinstance(described, dict) else None
            return compile_check.skipped(str(why or "the kernel was not described"))
        try:
            req = describe.with_argtypes(described["request"], call_args)
        except describe.NotDescribable as e:
            return compile_check.skipped(str(e))
        return compile_check.start_request(req, getattr(self.channel, "compiler", None))

    def _runner(self, kernel, call_args):
        """Where to run the kernel and how to name it there: the judge's tracer process with the
        vetted description once the judge's compiler accepted it (a kernel Numba compiles can only do
        what a GPU kernel can, so nothing of the student's reaches that tracer), else the student's
        process (a refused or unchecked kernel)."""
        tracer = getattr(self.channel, "tracer", None)
        if tracer is not None:
            pending = self.compile_check(kernel, call_args)
            if pending.result().ok is True:
                return tracer, {"request": pending.req}
        return self.channel, {"handle": kernel._handle}

    # -- CUDA C: every compile in the judge's NVRTC process, launches by the course's runners in the child
    def compile_cuda(self, src, *, target="ptx", arch=None, name="kernel.cu", options=(), extern_c=False) -> bytes:
        from .. import cuda_c

        reply = self.channel.nvrtc.compile(
            src=src, target=target, arch=arch, name=name, options=list(options), extern_c=bool(extern_c)
        )
        if reply.get("compile_error") is not None:
            raise cuda_c.CompileError(str(reply["compile_error"]), str(reply.get("log") or ""))
        if not isinstance(reply.get("out"), bytes):
            raise cuda_c.CompileError(f"{name} does not compile: the compiler's process sent no output")
        return reply["out"]

    def launch_cuda_c(self, runner, answer, values, block):
        reply = self.channel.request(
            "cuda_c_gpu", runner=runner.__name__, answer=answer, values=dict(values), block=block
        )
        return np.asarray(reply["got"]), bool(reply["guard_ok"])

    # -- the learner's host function
    def host_run(self, op, fn, here, *args):
        if not isinstance(fn, RemoteFunction):  # the course's own function: run here
            return here(fn, *args)
        return getattr(self, f"_{op}")(fn, *args)

    def _request(self, fn, op: str, needs: set, why: str, **fields) -> dict:
        reply = self.channel.request(op, handle=fn._handle, **fields)
        if not isinstance(reply, dict) or not needs <= set(reply):
            raise RemoteFailure(f"the grading process answered {why}")
        return reply

    def _judge_run(self, fn, op: str, watching: str, uses: str, **fields) -> dict:
        """``op`` on the function run again by the judge's own worker from the vetted description the
        student's process gave at check() (grading/host.py): what it records is the judge's record."""
        described = fn.course_description.get("host")
        tracer = getattr(self.channel, "tracer", None)
        if not isinstance(described, dict) or not isinstance(described.get("request"), dict) or tracer is None:
            why = described.get("skipped") if isinstance(described, dict) else None
            raise LearnerError(
                f"the grader runs {fn.__name__} itself to watch {watching}, and could not rebuild it "
                f"({why or 'it was not described'}): write it as one plain def that uses {uses}."
            )
        reply = tracer.request(op, function=described["request"], **fields)
        if not isinstance(reply, dict):
            raise RemoteFailure("the grader's worker answered without a record")
        return reply

    def _array_call(self, fn, inputs) -> ArrayCall:
        reply = self._request(fn, "array_call", {"device"}, "an array call without its value", args=list(inputs))
        return ArrayCall(reply.get("value"), bool(reply["device"]), str(reply.get("type")))

    def _library_call(self, fn, host_args, count) -> DeviceCall:
        """In the judge's own worker: the calls counted are the judge's."""
        reply = self._judge_run(
            fn, "library_call", "its library calls", "cp, cc and np", args=list(host_args), count=list(count)
        )
        if not {"result", "calls", "args", "on_device"} <= set(reply):
            raise RemoteFailure("the grader's worker answered a library call without its counts")
        calls = {str(k): int(v) for k, v in reply["calls"].items()}
        seen = [CallSeen(str(c[0]), dict(c[1]), dict(c[2])) for c in reply.get("seen") or ()]
        return DeviceCall(reply["result"], calls, list(reply["args"]), [bool(v) for v in reply["on_device"]], seen)

    def _stream_run(self, fn, task, course, inputs) -> dict:
        """In the judge's own worker: the record of streams, events, copies and launches is the judge's."""
        course_data = {"sources" if task == "capture" else "kernel": course[1]}
        return self._judge_run(fn, "stream_run", WATCHING, USES, task=task, **course_data, **inputs)

    def _facts(self, fn) -> dict:
        return dict(fn.course_description.get("facts") or {})  # described at check(), before any input

    def _parfor_count(self, fn) -> int:
        reply = self._request(fn, "facts", {"parfor_count"}, "without saying what was asked of the answer")
        return int(reply["parfor_count"])

    def _storage_call(self, fn, args, sizes):
        reply = self._request(
            fn,
            "storage_call",
            {"value", "regions", "reads"},
            "a storage call without its memory",
            args=args,
            sizes=sizes,
        )
        regions, reads = reply["regions"], reply["reads"]
        if not isinstance(regions, list) or not isinstance(reads, list):
            raise RemoteFailure("the grading process answered a storage call without its memory")
        if not all(isinstance(r, (list, tuple)) and len(r) == 2 for r in regions):
            raise RemoteFailure("the grading process answered a storage call without its memory")
        regions = [(int(lo), int(hi)) for lo, hi in regions]
        return reply["value"], regions, [bytes(r) if isinstance(r, bytes) else None for r in reads]

    def _core_launch(self, fn, kernel, arrays, extra) -> CoreLaunch:
        reply = self.channel.request("core_launch", handle=fn._handle, kernel=kernel, args=list(arrays), extra=extra)
        got = reply.get("arrays") if isinstance(reply, dict) else None
        if (
            not isinstance(got, list)
            or len(got) != len(arrays)
            or not all(isinstance(g, np.ndarray) and g.shape == np.shape(a) for g, a in zip(got, arrays))
        ):
            raise RemoteFailure("the grading process answered a cuda.core launch without its arrays")
        seen = [
            LaunchSeen(
                dims(r["grid"]), dims(r["block"]), bool(r["given_stream"]), tuple(map(str, r.get("scalars", ())))
            )
            for r in reply.get("launches", ())
        ]
        return CoreLaunch(list(got), seen)

    def _pycuda_call(self, fn, kernel, args) -> PycudaCall:
        """``fn(kernel, *args)`` in the student's process with the course's PyCUDA kernel built there; the
        arrays of ``args`` hold what they held there afterwards (drv.InOut changes them in place)."""
        reply = self.channel.request("pycuda_call", handle=fn._handle, kernel=kernel, args=list(args))
        if not isinstance(reply, dict) or not isinstance(reply.get("args"), list) or len(reply["args"]) != len(args):
            raise RemoteFailure("the grading process answered a call without its arguments")
        write_back(args, reply["args"])
        launches = [LaunchSeen(dims(r["grid"]), dims(r["block"]), True) for r in reply.get("launches", ())]
        wrapped = [[(str(w), bool(itself)) for w, itself in one] for one in reply.get("wrapped", ())]
        kind = reply.get("result_type")
        result = None if kind is None else type(str(kind), (), {})()  # the sentence names the type returned
        return PycudaCall(result, list(args), launches, wrapped)

    def _pipeline(self, fn, kernel, x):
        """``fn(spy kernel, x)`` in the student's process with copies counted (exercises/pipeline.py)."""
        reply = self._request(
            fn,
            "pipeline",
            {"launches", "copies", "x"},
            "a pipeline run without its counts",
            kernel=kernel_source(kernel),
            x=x,
        )
        x[...] = reply["x"]  # the learner's function may have changed its input there
        launches = [
            Launch(
                int(rec[0]),
                [bool(b) for b in rec[1]],
                int(rec[2]) if len(rec) > 2 and rec[2] is not None else None,
                bool(rec[3]) if len(rec) > 3 else False,
            )
            for rec in reply["launches"]
        ]
        copies = {"in": int(reply["copies"]["in"]), "out": int(reply["copies"]["out"])}
        kind = reply.get("got_kind")
        if kind == "device":
            got = _DeviceResult()
        elif kind == "ndarray":
            got = reply["got"]
        else:  # the sentence names the type the learner returned
            got = type(str(reply.get("got_type") or "object"), (), {})()
        return launches, copies, got


class _DeviceResult:
    """What a function returned when it was a device array in the student's process."""

    def copy_to_host(self):  # pragma: no cover - only its presence is read (pipeline._is_device_array)
        raise LearnerError("the result stayed on the device")
