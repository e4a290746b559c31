"""Does this kernel compile for a real GPU? Asked of Numba's CUDA compiler in a helper process.

In CPU mode kernels run on the tracer, which is plain Python and so accepts lists, f-strings,
np.zeros, returned values... that the GPU compiler refuses. `compile_check(kernel, args)` sends
the kernel (see describe.py for what travels) to a long-lived compile server (server.py) and
turns a refusal into one sentence (sentences.py). Answers are cached per exact request.
"""

from __future__ import annotations

from dataclasses import dataclass

from . import client, describe
from .sentences import sentence


@dataclass
class CompileResult:
    ok: bool | None  # None: could not check (no server, timeout, unsendable kernel)
    message: str
    seconds: float = 0.0


def _learner_lines(req):
    lines = {}
    for f in req["functions"]:
        for k, code in enumerate(f["source"].splitlines()):
            lines.setdefault(f["firstlineno"] + k, code) if f["name"] == req["kernel"] else None
    for f in req["functions"]:  # then device functions, where the kernel has no line
        for k, code in enumerate(f["source"].splitlines()):
            lines.setdefault(f["firstlineno"] + k, code)
    return {n: c for n, c in lines.items() if not c.lstrip().startswith("@")}


def _result(req, answer):
    if answer.get("ok"):
        return CompileResult(True, "compiles for the GPU.", answer.get("seconds", 0.0))
    if answer.get("ok") is None:  # the compiler itself is broken here: not the learner's kernel
        return _unavailable(f"Numba's compiler failed to start: {answer.get('kind')}: {answer.get('message')}")
    return CompileResult(False, sentence(answer, _learner_lines(req)), answer.get("seconds", 0.0))


def _unavailable(e):
    return CompileResult(None, f"the GPU compile check could not run ({e}); this is not your mistake.")


class Pending:
    """A compile under way; `result()` waits for it (see `start`)."""

    def __init__(self, req, future=None, done=None):
        self.req, self.future, self.done = req, future, done

    def result(self) -> CompileResult:
        if self.done is None:
            try:
                self.done = _result(self.req, self.future.result())
            except client.Unavailable as e:
                self.done = _unavailable(e)
        return self.done


def start(kernel, args, timeout=client.COMPILE_TIMEOUT) -> Pending:
    """Begin compiling `kernel` for the types of `args`; the caller may trace meanwhile."""
    try:
        req = describe.request(kernel, args)
    except describe.NotDescribable as e:
        return skipped(str(e))
    return Pending(req, client.submit(req, timeout))


def skipped(why: str) -> Pending:
    """The answer when the kernel cannot be sent to a compiler: unchecked, never passed."""
    return Pending(None, done=CompileResult(None, f"the GPU compile check was skipped ({why})."))


def start_request(req, state=None, timeout=client.COMPILE_TIMEOUT) -> Pending:
    """Compile a request that another process described (the batch grader's judge: the student's
    process describes, ``state`` is the grader's own server), after ``trust.vet`` accepts it."""
    from .trust import vet

    try:
        req = vet(req)
    except describe.NotDescribable as e:
        return skipped(str(e))
    except (RecursionError, MemoryError, TypeError, AttributeError, KeyError):  # nested or shaped past the parser
        return skipped("the kernel was described oddly")
    return Pending(req, client.submit(req, timeout, state))


def compile_check(kernel, args, timeout=client.COMPILE_TIMEOUT) -> CompileResult:
    """Compile `kernel` for the argument types of `args`; never raises."""
    return start(kernel, args, timeout).result()


__all__ = ["CompileResult", "Pending", "compile_check", "skipped", "start", "start_request"]
