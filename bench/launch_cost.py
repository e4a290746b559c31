"""What one launch costs the host, per way of launching the same SAXPY, and how to cut Numba's.

    COURSE_MODE=gpu python bench/launch_cost.py --out docs/data --docs docs/benchmarks-<gpu>.md

Host cost: launch a 256-thread kernel many times, synchronize once, host time / launches (median of
rounds). Every way is checked for a right result first. Also a timing mistake worth measuring:
timing one large launch with CUDA events includes the host's launch cost (the start event fires
before Python has queued the kernel); a queued batch behind one untimed launch does not.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

THREADS = 256
SIG = "void(float32, float32[::1], float32[::1], float32[::1])"

from numba import cuda  # noqa: E402 - after the path set-up; this script runs on a GPU host only


def saxpy_py(a, x, y, out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = a * x[i] + y[i]


def numba_abi(arr, n):
    """A 1-D C-contiguous float32 array as Numba's kernel ABI passes it: 7 words per array
    (meminfo, parent, nitems, itemsize, data, shape, stride)."""
    import numpy as np

    return (np.uint64(0), np.uint64(0), np.int64(n), np.int64(4), np.uint64(arr.data.ptr), np.int64(n), np.int64(4))


def launchers(n):
    import cupy as cp
    import numpy as np
    from cuda.core import Device, LaunchConfig, ObjectCode, Program, ProgramOptions, launch

    from bench.interop import SAXPY_SRC
    from bench.report import PREPARED_WAY
    from helpers.prepared_launch import prepare

    lazy = cuda.jit(saxpy_py)
    eager = cuda.jit(SIG)(saxpy_py)
    x, y = cp.random.random(n, dtype=cp.float32), cp.random.random(n, dtype=cp.float32)
    out = cp.zeros_like(x)
    xn, yn, outn = (cuda.as_cuda_array(v) for v in (x, y, out))
    blocks, a = (n + THREADS - 1) // THREADS, np.float32(2.0)
    configured = eager[blocks, THREADS]
    dev = Device(0)
    dev.set_current()
    stream = dev.default_stream
    cfg = LaunchConfig(grid=blocks, block=THREADS)
    ovl = next(iter(eager.overloads.values()))
    cubin = ovl.library.get_cubin()
    cubin = bytes(getattr(cubin, "code", cubin))
    numba_in_core = ObjectCode.from_cubin(cubin).get_kernel(ovl.entry_name)
    core_args = (a, *numba_abi(x, n), *numba_abi(y, n), *numba_abi(out, n))
    raw = cp.RawKernel(SAXPY_SRC, "saxpy")
    c_kernel = (
        Program(SAXPY_SRC, code_type="c++", options=ProgramOptions(arch=f"sm_{dev.arch}"))
        .compile("cubin")
        .get_kernel("saxpy")
    )
    n32 = np.int32(n)
    ways = {
        "Numba, CuPy arrays passed at every launch": lambda: lazy[blocks, THREADS](a, x, y, out),
        "Numba, device arrays wrapped once": lambda: lazy[blocks, THREADS](a, xn, yn, outn),
        "Numba, eager signature, device arrays": lambda: eager[blocks, THREADS](a, xn, yn, outn),
        "Numba, eager, configured launcher reused": lambda: configured(a, xn, yn, outn),
        "Numba-compiled kernel launched by cuda.core": lambda: launch(stream, cfg, numba_in_core, *core_args),
        PREPARED_WAY: prepare(eager, blocks, THREADS, a, xn, yn, outn),
        "CuPy RawKernel (CUDA C)": lambda: raw((blocks,), (THREADS,), (x, y, out, a, n32)),
        "cuda.core launch (CUDA C)": lambda: launch(
            stream, cfg, c_kernel, x.data.ptr, y.data.ptr, out.data.ptr, a, n32
        ),
    }
    return ways, (x, y, out)


def host_us(launch, sync, launches, rounds):
    per = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        for _ in range(launches):
            launch()
        sync()
        per.append((time.perf_counter() - t0) / launches * 1e6)
    return statistics.median(per)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default="docs/data", help="folder for launch_cost-<gpu>.json (one record per GPU kind)")
    ap.add_argument("--docs", help="append the Markdown table to this file")
    ap.add_argument("--graphs", default="docs/data/streams_graphs.json", help="bench/streams_graphs.py's record")
    ap.add_argument("--launches", type=int, default=2000)
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--big", type=int, default=50_000_000, help="elements for the one-launch vs batch timing")
    a = ap.parse_args(argv)
    import cupy as cp

    from bench.report import LIMITS, judge_limits, render_limits
    from bench.timing import machine, slug

    sync = cp.cuda.Device().synchronize
    ways, (x, y, out) = launchers(THREADS)
    rows = []
    for name, go in ways.items():
        out.fill(0)
        go()
        sync()
        ok = bool(cp.allclose(out, 2 * x + y))
        rec = {"way": name, "correct": ok}
        if ok:
            rec["host_us"] = host_us(go, sync, a.launches, a.rounds)
        rows.append(rec)
        print(f"{name:46s} {'ok' if ok else 'WRONG'} {rec.get('host_us', 0):7.1f} us/launch", flush=True)

    # One large launch timed alone (events around it) vs a queued batch (one untimed launch first).
    big, (bx, by, bout) = launchers(a.big)
    timing = {}
    for name in ("Numba, device arrays wrapped once", "cuda.core launch (CUDA C)"):
        go = big[name]
        go()
        sync()
        start, stop = cp.cuda.Event(), cp.cuda.Event()
        single = []
        for _ in range(20):
            start.record()
            go()
            stop.record()
            stop.synchronize()
            single.append(cp.cuda.get_elapsed_time(start, stop))
        batch = []
        for _ in range(9):
            go()  # untimed: the GPU is busy while Python queues the timed ones
            start.record()
            for _ in range(10):
                go()
            stop.record()
            stop.synchronize()
            batch.append(cp.cuda.get_elapsed_time(start, stop) / 10)
        ok = bool(cp.allclose(bout, 2 * bx + by))
        timing[name] = {
            "correct": ok,
            "one_launch_gbs": 12 * a.big / statistics.median(single) / 1e6,
            "queued_batch_gbs": 12 * a.big / statistics.median(batch) / 1e6,
        }
        print(name, timing[name], flush=True)
    record = {
        "machine": machine(),
        "launches": a.launches,
        "rounds": a.rounds,
        "rows": rows,
        "big_n": a.big,
        "one_launch_vs_batch": timing,
    }
    graphs = Path(a.graphs)
    records = {"launch_cost": record, "streams_graphs": json.loads(graphs.read_text()) if graphs.exists() else None}
    verdicts = judge_limits(records, [lim for lim in LIMITS if lim.record in records])  # tensor_gemm.py judges its own
    record["limits"] = [{"target": v.limit.name, "measured": v.value, "result": v.result} for v in verdicts]
    limits_md = render_limits(verdicts)
    print(limits_md, flush=True)
    out = Path(a.out) / f"launch_cost-{slug(record['machine']['GPU'].split('(')[0])}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(record, indent=1) + "\n")
    if a.docs:
        with open(a.docs, "a") as f:
            f.write("\n" + markdown(record))
            f.write("\nHost-time targets (graph replay from `bench/streams_graphs.py`'s record):\n\n" + limits_md)
    return 0 if all(r["correct"] for r in rows) else 1


def markdown(record) -> str:
    m = record["machine"]
    lines = [
        "### Launch cost, and cutting Numba's (notebook 11)",
        "",
        f"`python bench/launch_cost.py` on {m['GPU']} (host CPU: {m.get('host CPU', 'not recorded')}), {m['date']}: "
        f"host µs per launch of a {THREADS}-thread SAXPY, "
        f"{record['launches']} launches then one synchronize, median of {record['rounds']} rounds; "
        "each way checked first.",
        "",
        "| way of launching | host µs/launch |",
        "|---|---:|",
    ]
    for r in record["rows"]:
        lines.append(f"| {r['way']} | {r['host_us']:.1f} |" if r["correct"] else f"| {r['way']} | wrong result |")
    lines += ["", f"One launch of n = {record['big_n']:,} timed alone with events vs a queued batch:", ""]
    lines += ["| library | one launch GB/s | queued batch GB/s |", "|---|---:|---:|"]
    for name, t in record["one_launch_vs_batch"].items():
        lines.append(f"| {name} | {t['one_launch_gbs']:,.0f} | {t['queued_batch_gbs']:,.0f} |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    sys.exit(main())
