"""Run a case in the interpreter and judge it against stored GPU outputs (shared by the test and the tool)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from .case import compare

SEP = "::"
FINGERPRINT = "__fingerprint__"


def nvrtc_version():
    from cuda.bindings import nvrtc

    from helpers.cuda_c import check

    return check(nvrtc.nvrtcVersion())


def fp16_include() -> str:
    """A directory with cuda_fp16.h for NVRTC: numba-cuda ships one per CUDA major, else the toolkit's."""
    import importlib.util
    import os

    found = []
    spec = importlib.util.find_spec("numba_cuda")
    if spec and spec.submodule_search_locations:
        base = Path(list(spec.submodule_search_locations)[0]) / "numba" / "cuda" / "include"
        found += [base / str(nvrtc_version()[0]), *sorted(base.glob("*"), reverse=True)]
    found += [Path(os.environ[v]) / "include" for v in ("CUDA_HOME", "CUDA_PATH") if os.environ.get(v)]
    found.append(Path("/usr/local/cuda/include"))
    for d in found:
        if (d / "cuda_fp16.h").exists():
            return str(d)
    raise FileNotFoundError("no cuda_fp16.h found (numba-cuda's include/ or $CUDA_HOME/include)")


def nvrtc_options(case) -> tuple:
    return (*case.options, *((f"-I{fp16_include()}",) if case.fp16 else ()))


def run_interpreter(case, inputs):
    """(status, message, outputs): status is "ran", "refused" (UnsupportedByTracer) or "error"."""
    from helpers import ptx
    from helpers.errors import UnsupportedByTracer

    args = [v.copy() if isinstance(v, np.ndarray) else v for v in inputs.values()]
    try:
        r = ptx.run(
            case.source,
            case.kernel,
            case.grid,
            case.block,
            args,
            shared_bytes=case.shared_bytes,
            options=nvrtc_options(case),
        )
    except UnsupportedByTracer as e:
        return "refused", str(e), {}
    except Exception as e:  # one broken case must not stop the others
        return "error", f"{type(e).__name__}: {e}", {}
    found = []
    if r.out_of_bounds:
        found.append(f"{len(r.out_of_bounds)} out-of-bounds accesses")
    if r.divergent:
        found.append("a divergent barrier")
    if r.warp_misuse:
        found.append(f"warp misuse: {r.warp_misuse[0]['why']}")
    outs = {k: a for k, a in zip(inputs, args) if k in case.outputs}
    return "ran", "; ".join(found), outs


def stored(results, case):
    """The GPU outputs stored for `case` ({} if none) and their fingerprint ("" if none)."""
    fp = str(results[case.name + SEP + FINGERPRINT]) if case.name + SEP + FINGERPRINT in results else ""
    outs = {o: results[case.name + SEP + o] for o in case.outputs if case.name + SEP + o in results}
    return outs, fp


def judge(case, gpu_outs, cpu_outs):
    """{output: Verdict} for every compared output."""
    verdicts = {}
    for o in case.outputs:
        if o not in gpu_outs or o not in cpu_outs:
            continue
        ulps, atol = case.tolerance(o)
        verdicts[o] = compare(gpu_outs[o], cpu_outs[o], ulps, atol, case.nan)
    return verdicts


def load_results(path):
    """The stored GPU outputs as a dict of arrays, and the metadata the GPU run wrote."""
    with np.load(path, allow_pickle=False) as z:
        data = {k: z[k] for k in z.files}
    meta = json.loads(str(data.pop("__meta__"))) if "__meta__" in data else {}
    return data, meta
