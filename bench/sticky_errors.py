"""Where a GPU fault surfaces, what it leaves behind, and what each library raises: notebook 19's record.

    COURSE_MODE=gpu python bench/sticky_errors.py --out docs/data/sticky_errors.json
    COURSE_MODE=gpu python bench/sticky_errors.py --out -            # print only (the notebook's GPU cell)
    COURSE_MODE=gpu python bench/sticky_errors.py --child numba_fault   # one experiment, one JSON line

Every experiment runs in a fresh Python process of its own (``--child``): an illegal address poisons the
CUDA context of the process that made it, so the parent must never touch the GPU. Each child records its
steps in order: what the step was, whether it returned, and the exception's class and text if not.

- numba_fault: a kernel stores far past its array (an unmapped address) on a device array; the launch,
  a line of host work, cuda.synchronize(), a copy to the GPU, and a correct launch afterwards.
- numba_fault_blocking: the same with CUDA_LAUNCH_BLOCKING=1 in the child's environment.
- numba_bad_config: a launch of 2,048 threads per block (over the 1,024 limit), then a correct launch.
- numba_debug: integer division by zero in a kernel compiled with debug=True, opt=False, and without.
- cupy_fault: the fault from a CuPy RawKernel, then a stream synchronize and a new array.
- core_fault: the fault from a cuda.core launch, then Device.sync(), then cuda.bindings' own
  cudaDeviceSynchronize and cudaGetLastError, which return their error instead of raising.
The record also says which of nsys, ncu and compute-sanitizer are on PATH.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

FAR = 1 << 26  # elements between two threads' stores: thread 1 already writes 256 MiB past a 4 KiB array
FAULT_SRC = r"""
extern "C" __global__ void far_store(float* out, long long stride)
{
    long long i = blockIdx.x * blockDim.x + threadIdx.x;
    out[i * stride] = 1.0f;
}
"""


class Steps:
    """The ordered record of one child: each step returned, or raised (class and text)."""

    def __init__(self):
        self.rows = []

    def do(self, step: str, fn):
        try:
            value = fn()
        except Exception as e:  # every error is an observation here
            self.rows.append({"step": step, "ok": False, "error": type(e).__name__, "message": str(e)[:300]})
            return None
        row = {"step": step, "ok": True}
        if value is not None:
            row["value"] = value if isinstance(value, (bool, int, float, str)) else repr(value)[:300]
        self.rows.append(row)
        return value


def _numba_kernels():
    from numba import cuda

    @cuda.jit(lineinfo=True)  # so compute-sanitizer names this line (notebook 19, section 5)
    def far_store(out, stride):
        i = cuda.grid(1)
        out[i * stride] = 1.0  # no guard: thread 1 stores `stride` elements past the start

    @cuda.jit
    def fill(out):
        i = cuda.grid(1)
        if i < out.size:
            out[i] = 2.0

    return cuda, far_store, fill


def numba_fault(steps: Steps):
    import numpy as np

    cuda, far_store, fill = _numba_kernels()
    d = cuda.device_array(1024, np.float32)
    fill[8, 128](d)
    cuda.synchronize()  # compiled and loaded before the experiment
    steps.do("launch far_store[8, 128](d, FAR)", lambda: far_store[8, 128](d, FAR))
    steps.do("host work after the launch", lambda: sum(range(1000)))
    steps.do("cuda.synchronize()", cuda.synchronize)
    steps.do("cuda.to_device(np.ones(4))", lambda: cuda.to_device(np.ones(4)) and None)
    steps.do("a correct launch, fill[8, 128](d), and its copy back", lambda: float(_launch_and_read(fill, d)))


def _launch_and_read(kernel, d):
    kernel[8, 128](d)
    return d.copy_to_host()[0]


def numba_bad_config(steps: Steps):
    import numpy as np

    cuda, _, fill = _numba_kernels()
    d = cuda.device_array(4096, np.float32)
    steps.do("fill[2, 2048](d): 2,048 threads per block", lambda: fill[2, 2048](d))
    steps.do("cuda.synchronize()", cuda.synchronize)
    steps.do("a correct launch, fill[32, 128](d), and its copy back", lambda: float(_fill_all(fill, d)))


def _fill_all(fill, d):
    fill[32, 128](d)
    return d.copy_to_host().min()


def numba_debug(steps: Steps):
    import numpy as np
    from numba import cuda

    def divide(x, out):
        i = cuda.grid(1)
        if i < out.size:
            out[i] = 100 // x[i]

    x = np.ones(64, np.int32)
    x[37] = 0
    for label, kernel in (
        ("debug=True, opt=False", cuda.jit(debug=True, opt=False)(divide)),
        ("default", cuda.jit(divide)),
    ):
        d_x, d_out = cuda.to_device(x), cuda.device_array(64, np.int32)
        steps.do(f"{label}: launch with x[37] = 0", lambda k=kernel, a=d_x, b=d_out: k[2, 32](a, b))
        steps.do(f"{label}: cuda.synchronize()", cuda.synchronize)
        steps.do(f"{label}: out[37]", lambda b=d_out: int(b.copy_to_host()[37]))


def cupy_fault(steps: Steps):
    import cupy as cp
    import numpy as np

    far_store = cp.RawKernel(FAULT_SRC, "far_store")
    a = cp.zeros(1024, dtype=cp.float32)
    cp.cuda.Device().synchronize()
    steps.do("far_store((8,), (128,), (a, FAR))", lambda: far_store((8,), (128,), (a, np.int64(FAR))))
    steps.do("cp.cuda.get_current_stream().synchronize()", lambda: cp.cuda.get_current_stream().synchronize())
    steps.do("cp.ones(4).sum().item()", lambda: float(cp.ones(4).sum().item()))


def core_fault(steps: Steps):
    import numpy as np
    from cuda.bindings import runtime
    from cuda.core import Device, LaunchConfig, Program, ProgramOptions, launch

    dev = Device()
    dev.set_current()
    stream = dev.create_stream()
    arch = "sm_" + "".join(str(v) for v in dev.compute_capability)
    kernel = Program(FAULT_SRC, code_type="c++", options=ProgramOptions(arch=arch)).compile("cubin")
    kernel = kernel.get_kernel("far_store")
    buf = dev.allocate(4096, stream=stream)
    dev.sync()
    config = LaunchConfig(grid=8, block=128)
    steps.do("launch(stream, config, far_store, buf, FAR)", lambda: launch(stream, config, kernel, buf, np.int64(FAR)))
    steps.do("dev.sync()", dev.sync)
    steps.do("runtime.cudaDeviceSynchronize()", lambda: repr(runtime.cudaDeviceSynchronize()))
    steps.do("runtime.cudaGetLastError()", lambda: repr(runtime.cudaGetLastError()))


EXPERIMENTS = {
    "numba_fault": (numba_fault, {}),
    "numba_fault_blocking": (numba_fault, {"CUDA_LAUNCH_BLOCKING": "1"}),
    "numba_bad_config": (numba_bad_config, {}),
    "numba_debug": (numba_debug, {}),
    "cupy_fault": (cupy_fault, {}),
    "core_fault": (core_fault, {}),
}


def child(name: str) -> int:
    import helpers

    if not helpers.on_gpu():
        print(json.dumps({"error": f"needs a GPU ({helpers.MODE.reason})"}))
        return 2
    steps = Steps()
    try:
        EXPERIMENTS[name][0](steps)
    except Exception as e:  # the set-up itself failed: say so, the steps so far stay
        steps.rows.append({"step": "set-up", "ok": False, "error": type(e).__name__, "message": str(e)[:300]})
    print(json.dumps({"steps": steps.rows}), flush=True)
    return 0


def run_child(name: str, timeout: float = 300.0) -> dict:
    """One experiment in a fresh process; its JSON line, or what went wrong."""
    env = dict(os.environ, **EXPERIMENTS[name][1])
    done = subprocess.run(
        [sys.executable, str(Path(__file__).resolve()), "--child", name],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
        cwd=ROOT,
    )
    lines = [ln for ln in done.stdout.splitlines() if ln.startswith("{")]
    if not lines:
        return {"error": f"exit status {done.returncode}: {done.stderr.strip()[-300:]}"}
    found = json.loads(lines[-1])
    found["env"] = EXPERIMENTS[name][1]
    return found


def show(record: dict, names) -> None:
    """Print the record's experiments ``names`` step by step (notebook 19 shows the stored record this way)."""
    tools = ", ".join(f"{k} {'yes' if v else 'no'}" for k, v in record["tools"].items())
    print(f"{record['machine']['GPU']}; on PATH: {tools}")
    for name in names:
        found = record["experiments"].get(name, {"error": "not in this record"})
        print(f"{name}{' ' + str(found.get('env')) if found.get('env') else ''}:")
        if "error" in found:
            print(f"  could not run: {found['error']}")
        for row in found.get("steps", ()):
            said = f"raised {row['error']}: {row['message']}" if not row["ok"] else f"returned {row.get('value', '')}"
            print(f"  {row['step']}: {said}")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default="docs/data/sticky_errors.json", help="JSON record to write ('-': print only)")
    ap.add_argument("--child", choices=sorted(EXPERIMENTS), help="run one experiment in this process")
    ap.add_argument("--only", nargs="*", choices=sorted(EXPERIMENTS), help="the experiments to run (default: all)")
    args = ap.parse_args(argv)
    if args.child:
        return child(args.child)

    import helpers

    if not helpers.on_gpu():
        print(
            f"bench/sticky_errors.py needs a GPU ({helpers.MODE.reason}); run it with COURSE_MODE=gpu.", file=sys.stderr
        )
        return 2
    from bench.timing import machine

    record = {
        "machine": machine(),
        "tools": {tool: shutil.which(tool) for tool in ("nsys", "ncu", "compute-sanitizer")},
        "experiments": {name: run_child(name) for name in (args.only or EXPERIMENTS)},
    }
    show(record, record["experiments"])
    if args.out != "-":
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text(json.dumps(record, indent=1) + "\n")
        print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
