"""The judge's channel with the student's process replaced by a Server in this one: every request
and reply goes through the wire codec, and the judge's own NVRTC and tracer workers run their
handlers here. Used where a test must grade through the judge without a child process
(tests/grading/test_judge.py, tests/compile_check/test_trust.py)."""

import json
import linecache

from helpers import _wire, env
from helpers.exercises.executor import raised
from helpers.grading import remote, workers
from helpers.grading.executor import JudgedExecutor
from helpers.grading.judge import NO_INPUTS, want
from helpers.grading.serve import Server, error_reply


def through_the_wire(value):
    return _wire.decode(json.loads(_wire.dumps(_wire.encode(value))))


class LocalNvrtc:
    """The judge's NVRTC worker, compiling in this process with nothing redirected."""

    def __init__(self, ops):
        self.ops = ops

    def compile(self, **request):
        from helpers import cuda_c

        self.ops.append("nvrtc")
        body = through_the_wire(request)
        try:
            out = cuda_c.compile(body.pop("src"), **{**body, "options": tuple(body["options"])})
        except cuda_c.CompileError as e:
            return through_the_wire({"compile_error": str(e), "log": e.log})
        return through_the_wire({"out": bytes(out)})


class LocalTracer:
    """The judge's tracer process (grading/workers.py), running its handlers in this process."""

    def __init__(self, ops):
        self.ops, self.state = ops, {}

    def request(self, op, **fields):
        self.ops.append(f"judge {op}")
        body = through_the_wire(fields)
        lines = dict(linecache.cache)  # the rebuilt kernel's lines: the worker's own, never this process's
        try:
            reply = workers.HANDLERS["tracer"][op](body, self.state)
        except Exception as e:  # as the worker does: the kernel's exception, by name
            raise raised(through_the_wire(error_reply(e))) from None
        finally:
            linecache.cache.clear()
            linecache.cache.update(lines)
        return through_the_wire(reply)


class Loopback:
    """The channel of judge.py, with the student's process replaced by a Server in this one."""

    def __init__(self):
        self.server = Server(on_gpu=env.on_gpu())  # on a GPU the checks also launch there, through "gpu"
        self.ops = []
        self.sent_inputs = False
        self.nvrtc = LocalNvrtc(self.ops)  # the judge's own NVRTC process (grading/workers.py), here
        self.tracer = LocalTracer(self.ops)  # and its own tracer process

    def request(self, op, **fields):
        self.ops.append(op)
        self.sent_inputs = self.sent_inputs or op not in NO_INPUTS  # as judge.Channel marks it
        body = through_the_wire(fields)
        try:
            reply = self.server.handle({**body, "op": op})
        except Exception as e:  # as the child does: the student's exception, by name
            raise raised(through_the_wire(error_reply(e))) from None
        return through_the_wire(reply)

    def stand_in(self, obj, kind):
        return remote.answer_from(self, through_the_wire(self.server.describe(obj, kind)))


def grade_judged(ex, answer, seed, options):
    chan = Loopback()
    got = chan.stand_in(answer, want(ex))
    opts = {k: chan.stand_in(v, "function" if callable(v) else "value") for k, v in options.items()}
    return ex.grade(got, seed=seed, watchdog=0, executor=JudgedExecutor(chan), **opts), chan
