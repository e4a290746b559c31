"""Run as a plain script by ptx_options.py: compile one described kernel with several option sets.

Reads {"request": <describe.py's request>, "options": {name: {option: value}}} on stdin and prints
one JSON line, {"ok": true, "ptx": {name: text}} or {"ok": false, "message": ...}. A plain script,
never ``helpers.compile_check.ptx_child``, for the reason server.py gives.
"""

import json
import os
import sys
import warnings

os.environ["NUMBA_ENABLE_CUDASIM"] = "0"

import numba  # noqa: E402
from numba import cuda  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # rebuild.py and server.py, this script's neighbours
from rebuild import build, numba_type  # noqa: E402
from server import _patch_device, _target_cc  # noqa: E402


def main():
    job = json.loads(sys.stdin.read())
    request = job["request"]
    try:
        cc = _target_cc()
        _patch_device(cc)
        ns = build(request, cuda, numba)
        argtypes = tuple(numba_type(t) for t in request["argtypes"])
        out = {}
        for name, opts in job["options"].items():
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # debug=True's advice to pass opt=False: the notebook passes it
                out[name], _ = cuda.compile_ptx(ns[request["kernel"]], argtypes, cc=cc, **opts)
        answer = {"ok": True, "ptx": out, "cc": list(cc)}
    except Exception as exc:  # one sentence back, never a traceback on the learner's screen
        answer = {"ok": False, "message": f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"}
    print(json.dumps(answer), flush=True)


if __name__ == "__main__":
    main()
