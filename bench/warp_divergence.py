"""Warp divergence, measured: one branch that splits the lanes of every warp against the same branch
splitting whole warps.

    COURSE_MODE=gpu python bench/warp_divergence.py --out docs/data/warp_divergence.json

The figures notebook 17 quotes. One kernel, two paths of the same length (--iters dependent float32
steps each, different arithmetic, so the compiler cannot merge them), and a key that picks the path:

- "uniform A" / "uniform B": every thread takes one path (the cost of each path alone);
- "by warp": warps of even number take A, odd warps B: every warp runs one path;
- "by lane": even lanes take A, odd lanes B: every warp runs both paths, one after the other, with half
  its lanes idle in each.

Every thread does the same amount of work in all four. Each layout is launched once to warm up (and
compile), then timed with CUDA events over --rounds rounds (the median is recorded); its output is
checked against the same steps done in float64 on the host for --samples elements, each on its own path.
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import helpers  # noqa: E402, I001  (decides CPU or GPU mode before Numba is imported)
import numba  # noqa: E402
import numpy as np  # noqa: E402
from numba import cuda  # noqa: E402

THREADS = 256
LAYOUTS = ("uniform A", "uniform B", "by warp", "by lane")
MODE = {"uniform A": 0, "uniform B": 1, "by warp": 2, "by lane": 3}


def path(mode: int, i):
    """0 (path A) or 1 (path B) for element i (a NumPy array or an int) under layout `mode`."""
    if mode in (0, 1):
        return np.full(np.shape(i), mode)
    if mode == 2:
        return (i // 32) % 2
    return i % 2


def host_steps(x, which, iters: int):
    """The kernel's two paths in float64 on the host, for checking."""
    v = x.astype(np.float64)
    a, b = v[which == 0], v[which == 1]
    for _ in range(iters):
        a = a * 0.999 + 0.001  # path A: one multiply-add, towards 1
        b = np.sqrt(b * 0.5 + 0.5)  # path B: a multiply-add and a square root, towards 1
    v[which == 0], v[which == 1] = a, b
    return v


@cuda.jit
def branchy(x, out, iters, mode):
    i = cuda.grid(1)
    if i < x.size:
        v = x[i]
        if mode == 0:
            key = 0
        elif mode == 1:
            key = 1
        elif mode == 2:
            key = (i // 32) % 2  # the warp's number: whole warps take one side
        else:
            key = i % 2  # the lane's number: every warp splits
        if key == 0:
            for _ in range(iters):
                v = v * numba.float32(0.999) + numba.float32(0.001)
        else:
            for _ in range(iters):
                v = math.sqrt(v * numba.float32(0.5) + numba.float32(0.5))
        out[i] = v


def measure(n: int = 1 << 22, iters: int = 2000, rounds: int = 9, samples: int = 4096, seed: int = 0) -> dict:
    """Median kernel time per layout (ms), each layout's output checked; raises on a wrong result."""
    kernel = branchy
    x = np.random.default_rng(seed).uniform(0.0, 0.5, n).astype(np.float32)  # path A ends 0.07+ below B
    d_x, d_out = cuda.to_device(x), cuda.device_array(n, np.float32)
    blocks = (n + THREADS - 1) // THREADS
    pick = np.sort(np.random.default_rng(seed + 1).choice(n, size=min(samples, n), replace=False))
    result = {}
    for label in LAYOUTS:
        mode = MODE[label]
        kernel[blocks, THREADS](d_x, d_out, iters, mode)  # warm-up: compiled and loaded
        cuda.synchronize()
        got = d_out.copy_to_host()[pick]
        want = host_steps(x[pick], path(mode, pick), iters)
        err = float(np.max(np.abs(got - want)))
        if not err < 1e-3:  # float32 steps against float64: the two paths end 0.1 or more apart
            raise SystemExit(f"{label}: wrong result (largest error {err:.2e} against float64 on the host)")
        times = []
        for _ in range(rounds):
            start, end = cuda.event(), cuda.event()  # timing=True is the default
            start.record()
            kernel[blocks, THREADS](d_x, d_out, iters, mode)
            end.record()
            end.synchronize()
            times.append(start.elapsed_time(end))
        result[label] = {"ms": statistics.median(times), "max_error": err}
    by_warp, by_lane = result["by warp"]["ms"], result["by lane"]["ms"]
    both = result["uniform A"]["ms"] + result["uniform B"]["ms"]
    return {
        "layouts": result,
        "by_lane_over_by_warp": by_lane / by_warp,
        "by_lane_over_a_plus_b": by_lane / both,
    }


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default="docs/data/warp_divergence.json", help="JSON record to write")
    ap.add_argument("--elements", type=int, default=1 << 22, help="threads (one element each)")
    ap.add_argument("--iters", type=int, default=2000, help="dependent steps on each path")
    ap.add_argument("--rounds", type=int, default=9, help="timed launches per layout (median)")
    ap.add_argument("--samples", type=int, default=4096, help="elements checked on the host")
    args = ap.parse_args(argv)

    if not helpers.on_gpu():
        print(
            f"bench/warp_divergence.py needs a GPU ({helpers.MODE.reason}); run it on a GPU machine with "
            "COURSE_MODE=gpu.",
            file=sys.stderr,
        )
        return 2
    from bench.timing import machine

    record = {
        "machine": machine(),
        "settings": {"threads_per_block": THREADS, **vars(args)},
        **measure(args.elements, args.iters, args.rounds, args.samples),
    }
    if not all(math.isfinite(r["ms"]) for r in record["layouts"].values()):
        raise SystemExit("a layout's time is not finite")
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(record, indent=1) + "\n")
    print(
        f"{record['machine']['GPU']}, {args.elements:,} threads, {args.iters} steps per path, median of {args.rounds}:"
    )
    for label, r in record["layouts"].items():
        print(f"  {label:10s}: {r['ms']:8.3f} ms")
    print(
        f"  split by lane / split by warp: {record['by_lane_over_by_warp']:.2f}x; "
        f"by lane / (A + B): {record['by_lane_over_a_plus_b']:.2f}"
    )
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
