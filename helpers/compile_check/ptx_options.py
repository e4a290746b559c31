"""The PTX Numba's compiler makes for one kernel under several ``@cuda.jit`` options (``lineinfo=True``,
``debug=True, opt=False``...), so a notebook can show what each option puts in the code.

    texts = ptx_options.variants(kernel, args, {"plain": {}, "lineinfo": {"lineinfo": True}})

Why a child process: in CPU mode this process runs Numba's simulator, whose ``compile_ptx`` is None;
the real compiler (NVVM, no GPU needed) runs in a fresh interpreter (ptx_child.py, started as a plain
script like the compile server, so ``helpers`` never switches the simulator on there). The kernel
travels as describe.py describes it for the compile server. On a GPU the same child runs, so both
modes show the same text.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from ..errors import CourseError
from . import describe

CHILD = Path(__file__).with_name("ptx_child.py")
OPTIONS = frozenset({"debug", "lineinfo", "opt", "fastmath"})  # compile_ptx's options a notebook may vary
TIMEOUT = 300.0  # a cold start imports Numba and NVVM, once per option set


def variants(kernel, args, options: dict) -> dict:
    """{name: PTX text} of ``kernel`` compiled for the types of ``args`` with each option set."""
    for name, opts in options.items():
        unknown = set(opts) - OPTIONS
        if unknown:
            raise CourseError(f"variant {name!r}: compile_ptx takes {sorted(OPTIONS)}, not {sorted(unknown)}.")
    try:
        request = describe.request(kernel, args)
    except describe.NotDescribable as e:
        raise CourseError(f"this kernel cannot be sent to Numba's compiler ({e}).") from None
    env = dict(os.environ, NUMBA_ENABLE_CUDASIM="0")
    course = os.path.realpath(Path(__file__).resolve().parents[2])
    # the same Numba as this process, never the course's own folder (helpers would switch the simulator on)
    env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p and os.path.isdir(p) and os.path.realpath(p) != course)
    done = subprocess.run(
        [sys.executable, str(CHILD)],
        input=json.dumps({"request": request, "options": options}),
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        env=env,
    )
    lines = [ln for ln in done.stdout.splitlines() if ln.startswith("{")]
    answer = json.loads(lines[-1]) if lines else {}
    if not answer.get("ok"):
        why = answer.get("message") or (done.stderr.strip().splitlines() or ["it printed nothing"])[-1]
        raise CourseError(f"Numba's compiler could not make the PTX here ({why[:300]}).")
    return answer["ptx"]
