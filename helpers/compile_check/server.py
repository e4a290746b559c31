"""The compile server: a separate, long-lived process that compiles kernels with the real Numba
CUDA compiler (NVVM) and no GPU.

It runs as a plain script (`python server.py`), never as `helpers.compile_check.server`, so that
`helpers/__init__` (which switches the CUDA simulator on in CPU mode) is never imported here:
the simulator and the real compiler cannot live in one process. One JSON request per stdin line,
one JSON answer per stdout line; the request format is built by `describe.py`.

Numba asks the driver for the current device's compute capability whenever a kernel calls a
device function (the learner's, or one Numba ships such as `sum`); with no driver that fails, so
`get_current_device` is replaced by a stand-in reporting the target capability.
"""

import json
import os
import sys
import time
import traceback

os.environ["NUMBA_ENABLE_CUDASIM"] = "0"

import numba  # noqa: E402
from numba import cuda  # noqa: E402
from numba.core import types  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # rebuild.py, this script's neighbour
from rebuild import build, numba_type  # noqa: E402

WANTED_CC = (9, 0)


class _Device:
    compute_capability = WANTED_CC
    name = b"compile-check"
    id = 0


def _target_cc():
    """(9, 0) when this NVVM supports it, else the newest it does."""
    try:
        from numba.cuda.cudadrv import nvvm

        ccs = nvvm.get_supported_ccs()
        if ccs and WANTED_CC not in ccs:
            return max(c for c in ccs if c <= WANTED_CC) if min(ccs) <= WANTED_CC else min(ccs)
    except Exception:  # an old numba-cuda without the query: try 9.0
        pass
    return WANTED_CC


def _patch_device(cc):
    _Device.compute_capability = cc
    for modname in ("numba.cuda.dispatcher", "numba.cuda.compiler", "numba.cuda.api"):
        mod = sys.modules.get(modname)
        if mod is not None and hasattr(mod, "get_current_device"):
            mod.get_current_device = lambda: _Device()


def _compile(request, cc):
    ns = build(request, cuda, numba)
    argtypes = [numba_type(t) for t in request["argtypes"]]
    if request.get("signature"):
        names = {**vars(types), **{k: v for k, v in ns.items() if k != "__builtins__"}, "__builtins__": {}}
        sig = eval(request["signature"], names)  # noqa: S307 - the learner's decorator argument, vetted
        from numba.core import sigutils

        declared, restype = sigutils.normalize_signature(sig)
        mismatch = _mismatch(declared, argtypes, request["params"])
        if mismatch:
            return {"ok": False, "kind": "SignatureMismatch", "message": mismatch, "line": request["line"]}
        argtypes = list(declared)
    if request.get("want_ptx"):  # helpers.ptx.numba_run runs it on the PTX interpreter, lines mapped back
        # "optimise": the code a GPU launch runs (-O3; a launch in CPU mode, helpers/ptx/launch.py), else this
        # server's NUMBA_OPT=0; "fastmath": the kernel's own @cuda.jit(fastmath=True)
        opt = {"opt": True} if request.get("optimise") else {}
        fast = bool(request.get("fastmath"))
        ptx, _ = cuda.compile_ptx(ns[request["kernel"]], tuple(argtypes), cc=cc, lineinfo=True, fastmath=fast, **opt)
        return {"ok": True, "ptx": ptx}
    cuda.compile_ptx(ns[request["kernel"]], tuple(argtypes), cc=cc)
    return {"ok": True}


def _mismatch(declared, actual, params):
    if len(declared) != len(actual):
        return f"signature has {len(declared)} parameter(s), the kernel {len(actual)}"
    for name, d, a in zip(params, declared, actual):
        if isinstance(d, types.Array) != isinstance(a, types.Array):
            return f"{name}|{d}|{a}"
        if isinstance(d, types.Array) and (d.dtype != a.dtype or d.ndim != a.ndim):
            return f"{name}|{d}|{a}"
    return None


def _environment_problem(exc):
    """Did the compiler itself fail to work (a broken install), rather than refuse the kernel?

    Numba reports a refused kernel as one of its own errors; a missing library, or a NumPy too new
    for this Numba ("module 'numpy' has no attribute 'row_stack'"), is the machine's problem and
    must never be blamed on the learner's code.
    """
    from numba.core.errors import NumbaError

    if isinstance(exc, NumbaError):
        return False
    if isinstance(exc, (ImportError, OSError, MemoryError)):
        return True
    if any(c.__name__ == "DynamicLibNotFoundError" for c in type(exc).__mro__):
        return True  # cuda.pathfinder found no NVVM (no wheel: macOS), a RuntimeError
    if isinstance(exc, RuntimeError) and str(exc).startswith("Failed to dlopen"):
        return True  # cuda.pathfinder found NVVM but could not load it
    return isinstance(exc, AttributeError) and str(exc).startswith("module ")


def _same_file(name, filenames):
    # Numba shortens paths relative to the working directory.
    return any(f == name or f.endswith(os.sep + name.lstrip("./")) for f in filenames)


def _error_line(exc, filenames):
    """The last line of the learner's code that Numba's message or traceback names."""
    import re

    loc = getattr(exc, "loc", None)
    if loc is not None and getattr(loc, "line", None) and _same_file(loc.filename, filenames):
        return loc.line
    found = None
    for m in re.finditer(r'File "([^"]+)", line (\d+)', str(exc)):
        if _same_file(m.group(1), filenames):
            found = int(m.group(2))
    if found is None:
        for frame in traceback.extract_tb(exc.__traceback__):
            if _same_file(frame.filename, filenames):
                found = frame.lineno
    return found


def main():
    cc = _target_cc()
    _patch_device(cc)
    print(json.dumps({"ready": True, "cc": list(cc), "pid": os.getpid()}), flush=True)
    for raw in sys.stdin:
        request = json.loads(raw)
        t0 = time.perf_counter()
        try:
            answer = _compile(request, cc)
        except Exception as exc:  # every refusal is an answer, never a crash
            filenames = {f["filename"] for f in request.get("functions", ())}
            if _environment_problem(exc):
                answer = {"ok": None, "kind": type(exc).__name__, "message": str(exc).splitlines()[0][:200]}
                answer["seconds"] = time.perf_counter() - t0
                print(json.dumps(answer), flush=True)
                continue
            answer = {
                "ok": False,
                "kind": type(exc).__name__,
                "message": str(exc),
                "line": _error_line(exc, filenames),
            }
        answer["seconds"] = time.perf_counter() - t0
        answer["cc"] = list(cc)
        print(json.dumps(answer), flush=True)


def _template(fd):
    """``--template FD`` (the batch grader's, grading/template.py): NVVM loaded and one kernel compiled
    here once, then a server forked for each submission, in its sandbox, by prelude.serve."""
    import importlib.util

    path = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "grading", "prelude.py")
    spec = importlib.util.spec_from_file_location("grading_prelude", path)  # not through helpers/__init__
    prelude = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(prelude)
    cc = _target_cc()
    _patch_device(cc)
    warm_text = "def warm(a):\n    a[0] = 1\n"  # describe.request's form: Numba's typing and NVVM set up once
    function = {"name": "warm", "filename": "<warm>", "firstlineno": 1, "source": warm_text, "device": False}
    request = {"kernel": "warm", "functions": [function], "globals": {}, "params": ["a"], "signature": None}
    _compile({**request, "line": 1, "argtypes": ["float32[::1]"]}, cc)

    def run(target):
        import importlib

        from numba.core import config

        importlib.invalidate_caches()
        config.reload_config()  # this fork's environment
        if target[0] == "probe":
            prelude.say(prelude.facts())
        else:
            main()

    prelude.serve(fd, run)


if __name__ == "__main__":
    if sys.argv[1:2] == ["--template"]:
        _template(int(sys.argv[2]))
    else:
        main()
