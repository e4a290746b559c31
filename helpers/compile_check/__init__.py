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


def compile_check(kernel, args, timeout=client.COMPILE_TIMEOUT) -> CompileResult:
    """Compile `kernel` for the argument types of `args`; never raises."""
    try:
        req = describe.request(kernel, args)
    except describe.NotDescribable as e:
        return CompileResult(None, f"the GPU compile check was skipped ({e}).")
    try:
        answer = client.compile_request(req, timeout)
    except client.Unavailable as e:
        return CompileResult(None, f"the GPU compile check could not run ({e}); this is not your mistake.")
    if answer.get("ok"):
        return CompileResult(True, "compiles for the GPU.", answer.get("seconds", 0.0))
    return CompileResult(False, sentence(answer, _learner_lines(req)), answer.get("seconds", 0.0))


__all__ = ["CompileResult", "compile_check"]
