"""cuda.compute (CCCL's CUB algorithms from Python) against the course's kernels and CuPy.

    COURSE_MODE=gpu python bench/cccl.py --out docs/data/cccl.json

Per algorithm and size: median time per call (CUDA events around a queued batch, warm-up first),
the result verified against NumPy/CuPy before timing, and the device-to-device copy bandwidth
measured in the same run as the ceiling. Also records which cuda.compute features work in this
environment (custom Python operators need numba-cuda-mlir; OpKind operators do not).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import traceback
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

SIZES = (1 << 20, 1 << 24, 1 << 27)


def _one_line(e):
    return f"{type(e).__name__}: {str(e).strip().splitlines()[0][:240] if str(e).strip() else ''}"


def markdown(record: dict) -> str:
    """The record as the section make bench appends to docs/benchmarks-<gpu>.md."""
    m = record["machine"]
    lines = [
        "### cuda.compute against the course's reduction and CuPy (notebook 14)",
        "",
        f"`python bench/cccl.py` on {m['GPU']}, {record['date']}; cuda-cccl {record['features'].get('cuda-cccl')}; "
        f"copy ceiling {record['copy_gbs']:,.0f} GB/s in the same run. Effective bandwidth = bytes the algorithm must "
        "read and write / median time (CUDA events, queued batch); each result verified first.",
        "",
        "| Algorithm | Library | Elements | Median time | GB/s | Of copy |",
        "|---|---|---:|---:|---:|---:|",
    ]
    for r in record["rows"]:
        if r["status"] == "ok":
            lines.append(
                f"| {r['algorithm']} | {r['library']} | 2^{r['n'].bit_length() - 1} | {r['seconds'] * 1e6:,.1f} µs | "
                f"{r['gbs']:,.0f} | {100 * r['of_copy']:.0f}% |"
            )
        else:
            lines.append(f"| {r['algorithm']} | {r['library']} | 2^{r['n'].bit_length() - 1} | {r['status']} | | |")
    lines += ["", "Features:", ""]
    lines += [f"- {k}: {v}" for k, v in record["features"].items()]
    for k, v in record.get("features_with_numba_cuda_mlir", {}).items():
        lines.append(f"- with numba-cuda-mlir installed, {k}: {v}")
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", default="docs/data/cccl.json")
    p.add_argument("--seed", type=int, default=20261124)
    p.add_argument("--docs", help="append the table to this Markdown file (docs/benchmarks-<gpu>.md)")
    p.add_argument("--render", help="only render this recorded JSON as Markdown (no GPU)")
    a = p.parse_args(argv)
    if a.render:
        print(markdown(json.loads(Path(a.render).read_text())), end="")
        return 0
    import dataclasses

    import cuda.compute as cc
    import cupy as cp
    import numpy as np

    from bench import kernels as K
    from bench.timing import FULL, Timer, machine

    sizes = dataclasses.replace(FULL, repeats=9, budget_seconds=1.5)
    b = Timer(sizes, a.seed, log=lambda *x: None)
    copy = b.ceiling_copy().value
    rows, features = [], {}
    try:
        import importlib.metadata as md

        features["cuda-cccl"] = md.version("cuda-cccl")
    except Exception as e:  # the version is recorded as the error: the timings still run
        features["cuda-cccl"] = _one_line(e)

    def row(algo, lib, n, bytes_moved, launch, check):
        rec = {"algorithm": algo, "library": lib, "n": n}
        try:
            launch()
            cp.cuda.Device().synchronize()
            ok, detail = check()
            if not ok:
                rec.update(status="wrong result", error=detail)
            else:
                secs, runs = b.time(launch)
                rec.update(
                    status="ok",
                    seconds=secs,
                    runs=runs,
                    gbs=bytes_moved / secs / 1e9,
                    of_copy=bytes_moved / secs / copy,
                )
        except Exception as e:  # one failing row must not stop the others
            rec.update(status="failed", error=_one_line(e))
        rows.append(rec)
        print(
            f"{algo:14s} {lib:28s} 2^{n.bit_length() - 1:<3d} {rec['status']:6s} "
            f"{rec.get('gbs', 0):8.0f} GB/s {rec.get('error', '')}",
            flush=True,
        )

    for n in SIZES:
        x = b.rand(n)
        want = float(cp.sum(x.astype(cp.float64)))
        out = cp.empty(1, dtype=cp.float32)
        h_init = np.zeros(1, dtype=np.float32)

        def close(got, n=n, want=want):
            return abs(got - want) <= 1e-5 * max(1.0, abs(want)) + n * 1e-7, f"{got} vs {want}"

        row(
            "reduce (sum)",
            "cuda.compute reduce_into",
            n,
            4 * n,
            lambda x=x, out=out, n=n: cc.reduce_into(d_in=x, d_out=out, num_items=n, op=cc.OpKind.PLUS, h_init=h_init),
            lambda out=out: close(float(out[0])),
        )
        # the two-phase object API: build once, query temp storage, then call without re-dispatch
        try:
            red = cc.make_reduce_into(d_in=x, d_out=out, op=cc.OpKind.PLUS, h_init=h_init)
            tmp_bytes = red(temp_storage=None, d_in=x, d_out=out, num_items=n, op=cc.OpKind.PLUS, h_init=h_init)
            tmp = cp.empty(max(1, int(tmp_bytes)), dtype=cp.uint8)
            row(
                "reduce (sum)",
                "cuda.compute make_reduce_into",
                n,
                4 * n,
                lambda red=red, tmp=tmp, x=x, out=out, n=n: red(
                    temp_storage=tmp, d_in=x, d_out=out, num_items=n, op=cc.OpKind.PLUS, h_init=h_init
                ),
                lambda out=out: close(float(out[0])),
            )
        except Exception as e:  # an API this cuda-cccl lacks is a finding, recorded in features
            features.setdefault("make_reduce_into", _one_line(e))
        partial = cp.empty(K.reduction_blocks(n, b.sm_count), dtype=cp.float32)
        res = cp.empty(1, dtype=cp.float32)
        xn, pn, rn = b.nb(x), b.nb(partial), b.nb(res)
        row(
            "reduce (sum)",
            "course two-pass kernel (Numba)",
            n,
            4 * n,
            lambda: K.reduce_sum(xn, pn, rn),
            lambda res=res: close(float(res[0])),
        )
        row(
            "reduce (sum)",
            "cupy.sum",
            n,
            4 * n,
            lambda x=x, out=out: cp.sum(x, out=out.reshape(())),
            lambda out=out: close(float(out[0])),
        )
        y = cp.empty_like(x)
        ref = cp.cumsum(x.astype(cp.float64))

        def scan_ok(y=y, ref=ref, n=n):
            err = float(cp.max(cp.abs(y.astype(cp.float64) - ref)))
            return err <= 1e-6 * n, f"max error {err:.2e}"

        row(
            "inclusive scan",
            "cuda.compute inclusive_scan",
            n,
            8 * n,
            lambda x=x, y=y, n=n: cc.inclusive_scan(d_in=x, d_out=y, op=cc.OpKind.PLUS, init_value=None, num_items=n),
            scan_ok,
        )
        row("inclusive scan", "cupy.cumsum", n, 8 * n, lambda x=x, y=y: cp.cumsum(x, out=y), scan_ok)
        keys = (b.rng.random(n, dtype=cp.float32) * 1e6).astype(cp.uint32)
        sk = cp.empty_like(keys)
        want_sorted = cp.sort(keys)
        row(
            "radix sort (uint32)",
            "cuda.compute radix_sort",
            n,
            8 * n,
            lambda keys=keys, sk=sk, n=n: cc.radix_sort(
                d_in_keys=keys, d_out_keys=sk, num_items=n, order=cc.SortOrder.ASCENDING
            ),
            lambda sk=sk, w=want_sorted: (bool(cp.all(sk == w)), "not sorted like cupy.sort"),
        )
        row(
            "radix sort (uint32)",
            "cupy.sort",
            n,
            8 * n,
            lambda keys=keys, sk=sk: sk.__setitem__(slice(None), cp.sort(keys)),
            lambda sk=sk, w=want_sorted: (bool(cp.all(sk == w)), "differs"),
        )
        x = y = keys = sk = out = partial = res = None
        b.free()

    # Features: a custom Python operator (needs numba-cuda-mlir) and iterators.
    def probe(name, fn):
        try:
            features[name] = fn()
        except Exception as e:  # a feature that fails is the finding: recorded with its error
            features[name] = "fails: " + _one_line(e)
            traceback.print_exc(limit=2)

    def custom_op():
        def max_abs(p, q):
            return max(abs(p), abs(q))

        v = cp.asarray(np.array([3, -7, 5], dtype=np.float32))
        o = cp.empty(1, dtype=cp.float32)
        cc.reduce_into(d_in=v, d_out=o, num_items=3, op=max_abs, h_init=np.zeros(1, np.float32))
        return f"works: max |x| of [3, -7, 5] = {float(o[0])}"

    def counting():
        o = cp.empty(1, dtype=cp.int64)
        it = cc.CountingIterator(np.int64(1))
        cc.reduce_into(d_in=it, d_out=o, num_items=100, op=cc.OpKind.PLUS, h_init=np.zeros(1, np.int64))
        return f"works: sum of 1..100 = {int(o[0])}"

    probe("custom Python operator (reduce with max_abs)", custom_op)
    probe("CountingIterator with OpKind.PLUS", counting)
    try:
        import importlib.util

        features["numba-cuda-mlir installed"] = importlib.util.find_spec("numba_cuda_mlir") is not None
    except Exception as e:  # recorded as the answer: the JSON is still written
        features["numba-cuda-mlir installed"] = _one_line(e)
    out = {
        "machine": machine(),
        "copy_gbs": copy / 1e9,
        "rows": rows,
        "features": features,
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
    }
    Path(a.out).parent.mkdir(parents=True, exist_ok=True)
    Path(a.out).write_text(json.dumps(out, indent=1) + "\n")
    for k, v in features.items():
        print(f"feature: {k}: {v}")
    if a.docs:
        with open(a.docs, "a") as f:
            f.write("\n" + markdown(out))
    return 0 if any(r["status"] == "ok" for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
