"""Why one element per thread falls short of the copy ceiling on a GPU with more bandwidth, and
what closes the gap: the same copy, vector add and SAXPY with k = 1, 2, 4, 8 elements per thread
(each thread issues its k loads before it stores), a grid-stride copy, a copy through 64-bit
words, and one element per thread at larger blocks, all against the device-to-device copy
ceiling measured in the same run.

    COURSE_MODE=gpu python bench/streaming.py [--quick] [--out docs/data]

Writes ``streaming-<gpu>.json`` (one record per GPU kind, so an H100 and an H200 run sit side by
side) and prints a table. Each row is verified against CuPy before and after timing; a row
whose result is wrong is recorded as failed, never timed. ``--ptx`` adds the global load and
store instructions each kernel compiles to (what width Numba issues).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from dataclasses import asdict, dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.timing import slug  # noqa: E402 - after the path set-up

KS = (1, 2, 4, 8)


@dataclass
class Variant:
    key: str
    kernel: str  # copy, vector_add, saxpy, transpose
    k: int  # elements per thread
    threads: int  # per block
    gb_per_s: float | None = None
    of_copy: float | None = None
    tile: int = 0  # the transposes' tile side
    status: str = "not run"
    error: str = ""
    ptx: tuple = ()


def global_accesses(kernel) -> tuple:
    """The distinct global load/store instructions in the kernel's PTX for these arguments."""
    try:
        ptx = "\n".join(kernel.inspect_asm().values())
    except Exception as e:  # informational only
        return (f"PTX not read: {type(e).__name__}",)
    return tuple(sorted(set(re.findall(r"(?:ld|st)\.global\.[\w.]+", ptx))))


def _setup(timer, v, data):
    """The kernel, its arguments, launch and bytes moved for one variant."""
    from bench import streaming_kernels as sk

    n = timer.sizes.stream_n
    x_, y_, o_ = data["x_"], data["y_"], data["out_"]
    if v.kernel == "transpose":
        s = timer.sizes.transpose
        grid, block = sk.transpose_tiles_launch(s, s, v.tile, v.k)
        if v.key.endswith("_staged"):
            kern = sk.make_transpose_staged(v.tile, v.k)
        else:  # transpose_t{tile}_k{k}, and _u: with unsigned indices
            kern = sk.make_transpose(v.tile, v.k, unsigned=v.key.endswith("_u"))
        return kern, (data["m_"], data["mt_"]), grid, block, 2 * 4 * s * s
    if v.key == "copy_grid_stride":
        return sk.copy_grid_stride, (x_, o_), (timer.sm_count * 8,), (v.threads,), 2 * 4 * n
    if v.key.startswith("copy_u64"):
        args = (timer.nb(data["x"].view(timer.cp.uint64)), timer.nb(data["out"].view(timer.cp.uint64)))
        return (sk.make_copy_u64(v.k), args, *sk.tile_launch(n // 2, v.k, v.threads), 2 * 4 * n)
    make = {"copy": sk.make_copy, "vector_add": sk.make_vector_add, "saxpy": sk.make_saxpy}[v.kernel]
    args = {"copy": (x_, o_), "vector_add": (x_, y_, o_), "saxpy": (data["a"], x_, y_, o_)}[v.kernel]
    moved = {"copy": 2, "vector_add": 3, "saxpy": 3}[v.kernel] * 4 * n
    return (make(v.k), args, *sk.tile_launch(n, v.k, v.threads), moved)


def measure(timer, variants, ceiling, want_ptx=False, log=print, once=False):
    import numpy as np

    from bench import report

    cp, n, s = timer.cp, timer.sizes.stream_n, timer.sizes.transpose
    a32 = np.float32(1.5)
    x, y, m = timer.rand(n), timer.rand(n), timer.rand((s, s))
    out, mt = cp.zeros(n, dtype=cp.float32), cp.zeros((s, s), dtype=cp.float32)
    data = {"x": x, "out": out, "a": a32, "x_": timer.nb(x), "y_": timer.nb(y), "out_": timer.nb(out)}
    data.update(m=m, mt=mt, m_=timer.nb(m), mt_=timer.nb(mt))
    want = {"copy": x, "vector_add": x + y, "saxpy": a32 * x + y, "transpose": m.T}
    for v in variants:
        try:
            kernel, args, grid, block, moved = _setup(timer, v, data)
            got = mt if v.kernel == "transpose" else out

            def launch():
                kernel[grid, block](*args)

            def right():  # scaled as bench/run.py does: a fused multiply-add may differ by an ulp
                w = want[v.kernel]
                return report.max_scaled_error(got, w, cp.maximum(cp.abs(w), 1.0), xp=cp) <= 1e-6

            got.fill(0)
            launch()
            timer.cuda.synchronize()
            if not right():
                v.status, v.error = "failed", "wrong result before timing"
                continue
            if once:  # under a profiler: each kernel launched once, nothing timed
                v.status = "launched once"
                continue
            seconds, _ = timer.time(launch)
            if not right():
                v.status, v.error = "failed", "wrong result after timing"
                continue
            v.gb_per_s = round(moved / seconds / 1e9, 1)
            v.of_copy = round(moved / seconds / ceiling, 3)
            v.status = "ok"
            if want_ptx:
                v.ptx = global_accesses(kernel)
        except Exception as e:  # one failing variant must not stop the others
            v.status, v.error = "failed", f"{type(e).__name__}: {e}"[:200]
        rate = f"{v.gb_per_s or 0:8.1f} GB/s {v.of_copy or 0:6.1%}"
        log(f"  {v.key:24} k={v.k} threads={v.threads:5} {v.status:6} {rate}")
    return variants


NCU_METRICS = {
    "sm__warps_active.avg.pct_of_peak_sustained_active": "achieved occupancy %",
    "dram__throughput.avg.pct_of_peak_sustained_elapsed": "DRAM throughput % of peak",
    "smsp__inst_executed_op_global_ld.sum": "global load instructions (warp)",
    "launch__registers_per_thread": "registers per thread",
}


NCU_KERNELS = "regex:copy_k|vector_add_k|saxpy_k|grid_stride|transpose_"  # every variant's kernel, no CuPy one


def ncu_args() -> str:
    """ncu's options for the profiled run: ``ncu --csv $(python bench/streaming.py --ncu-args) python
    bench/streaming.py --once > streaming-ncu.csv``, then ``--ncu-csv`` attaches its figures."""
    return f"-k {NCU_KERNELS} --metrics {','.join(NCU_METRICS)}"


def attach_ncu(record: dict, csv_text: str) -> dict:
    """Nsight Compute's figures for each variant, from `ncu --csv ... bench/streaming.py --once`
    (one launch per variant, in plan order): the evidence for why k matters. A CSV with a
    different number of kernels than the record's variants is refused, never guessed at."""
    import csv
    import io

    body = csv_text[csv_text.index('"ID"') :] if '"ID"' in csv_text else ""
    launches: dict = {}
    for row in csv.DictReader(io.StringIO(body)):
        if row["Metric Name"] in NCU_METRICS:
            value = float(row["Metric Value"].replace(",", ""))
            launches.setdefault(row["ID"], {})[NCU_METRICS[row["Metric Name"]]] = value
    variants = record["variants"]
    if len(launches) != len(variants):
        raise ValueError(f"the ncu CSV holds {len(launches)} kernel launches for {len(variants)} variants")
    for v, (_, metrics) in zip(variants, sorted(launches.items(), key=lambda kv: int(kv[0]))):
        v["ncu"] = metrics
    return record


def plan() -> list:
    out = [Variant(f"{kern}_k{k}", kern, k, 256) for kern in ("copy", "vector_add", "saxpy") for k in KS]
    out += [Variant(f"copy_k1_t{t}", "copy", 1, t) for t in (512, 1024)]
    out += [Variant("copy_grid_stride", "copy", 1, 256)]
    out += [Variant(f"copy_u64_k{k}", "copy", k, 256) for k in (1, 4)]
    shapes = ((32, 4), (32, 8), (32, 16), (64, 8), (64, 16))  # tile side, elements per thread
    out += [Variant(f"transpose_t{t}_k{k}", "transpose", k, t * t // k, tile=t) for t, k in shapes]
    staged = ((32, 8), (64, 8), (64, 16))
    out += [Variant(f"transpose_t{t}_k{k}_staged", "transpose", k, t * t // k, tile=t) for t, k in staged]
    unsigned = ((32, 4), (32, 8), (64, 4), (64, 8), (64, 16))
    out += [Variant(f"transpose_t{t}_k{k}_u", "transpose", k, t * t // k, tile=t) for t, k in unsigned]
    return out


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--quick", action="store_true", help="smaller arrays, fewer repeats")
    p.add_argument("--out", default="", help="folder for streaming-<gpu>.json (default: print only)")
    p.add_argument("--ptx", action="store_true", help="record each kernel's global load/store instructions")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--once", action="store_true", help="launch each kernel once, time nothing (for ncu)")
    p.add_argument("--ncu-args", action="store_true", help="print ncu's options for the --once run, and stop")
    p.add_argument("--ncu-csv", default="", help="that run's ncu --csv output: its figures go into the record")
    args = p.parse_args(argv)
    if args.ncu_args:
        print(ncu_args())
        return 0
    import helpers

    if not helpers.on_gpu():
        print(f"bench/streaming.py needs an NVIDIA GPU; this is CPU mode ({helpers.MODE.reason}).")
        return 2
    from bench.timing import FULL, QUICK, Timer, machine

    timer = Timer(QUICK if args.quick else FULL, args.seed, log=print)
    ceiling = timer.ceiling_copy()
    print(f"{timer.dev.name}: copy ceiling {ceiling.value / 1e9:.0f} GB/s ({ceiling.detail})", flush=True)
    variants = measure(timer, plan(), ceiling.value, args.ptx, log=lambda s: print(s, flush=True), once=args.once)
    if args.once:
        return 0 if all(v.status == "launched once" for v in variants) else 1
    record = {
        "machine": machine(),
        "elements": timer.sizes.stream_n,
        "copy_ceiling_gb_per_s": round(ceiling.value / 1e9, 1),
        "ceiling_detail": ceiling.detail,
        "variants": [asdict(v) for v in variants],
    }
    if args.ncu_csv and Path(args.ncu_csv).is_file():  # no ncu on this host: the record says nothing of it
        attach_ncu(record, Path(args.ncu_csv).read_text())
        record["ncu_command"] = (
            f"ncu --csv {ncu_args()} python3 bench/streaming.py --once (caches flushed between kernels: "
            "absolute rates are lower than the timed run's)"
        )
    if args.out:
        path = Path(args.out) / f"streaming-{slug(str(timer.dev.name))}.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(record, indent=1) + "\n")
        print(f"wrote {path}")
    return 0 if all(v.status == "ok" for v in variants) else 1


if __name__ == "__main__":
    sys.exit(main())
