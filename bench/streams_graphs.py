"""Host time per kernel launched one by one and replayed from a CUDA graph, and copy/compute overlap on streams.

    COURSE_MODE=gpu python bench/streams_graphs.py --out docs/data/streams_graphs.json

The figures notebook 16 quotes. Two measurements, each on warmed-up kernels, as the median of --rounds
rounds, each result checked before it is recorded:

1. Launch cost. N one-block kernels (x[i] += 1 on 128 floats) queued one by one on a stream, against the
   same N launches captured once into a CUDA graph (stream capture) and replayed with one call. For each
   way: "queued", host time until the last launch call returns, / N; "done", until the stream has
   finished, / N (perf_counter: host time is what a graph saves). CuPy RawKernel, and a Numba kernel
   launched on the capturing CuPy stream through cuda.external_stream (recorded as an error if capture
   refuses it).
2. Overlap. x (float32, --elements) copied to the GPU, 2x + 1 computed, copied back: one stream with
   pageable memory, one stream with pinned memory, and --chunks streams each doing a chunk with pinned
   memory. Timed with CUDA events: start recorded on a gate stream every other stream waits for, one end
   event per stream, the time to the last end.
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

THREADS = 128
ADD_ONE_SRC = r"""
extern "C" __global__ void add_one(float* a, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) a[i] += 1.0f;
}
"""


def per_kernel(run, sync, n_kernels: int, rounds: int) -> dict:
    """Median host time per kernel of `run()` (queued) and of `run(); sync()` (done), in µs."""
    queued, done = [], []
    for _ in range(rounds):
        t0 = time.perf_counter()
        run()
        queued.append(time.perf_counter() - t0)
        sync()
        done.append(time.perf_counter() - t0)
    return {
        "queued_us": statistics.median(queued) / n_kernels * 1e6,
        "done_us": statistics.median(done) / n_kernels * 1e6,
    }


def launch_cost(cp, cuda, np, n_kernels: int, rounds: int) -> dict:
    """Each library's one-by-one and graph-replay host time per kernel, with the count of increments checked."""

    import numba

    @cuda.jit
    def add_one_numba(a):
        i = cuda.grid(1)
        if i < a.size:
            a[i] += numba.float32(1.0)

    raw = cp.RawKernel(ADD_ONE_SRC, "add_one")
    out = {}
    for lib in ("cupy", "numba"):
        s = cp.cuda.Stream(non_blocking=True)
        with s:
            a = cp.zeros(THREADS, dtype=cp.float32)  # zeroed on s: a non-blocking stream does not wait for stream 0
        ns = cuda.external_stream(s.ptr)  # Numba launches queued on the same CUDA stream
        # a Numba view made once, without sync: passing the CuPy array would make Numba synchronize the stream
        # named in its __cuda_array_interface__ at every launch, which a capture forbids
        a_nb = cuda.as_cuda_array(a, sync=False)

        def launch(a=a, a_nb=a_nb, lib=lib, ns=ns):
            if lib == "cupy":
                raw((1,), (THREADS,), (a, np.int32(THREADS)))
            else:
                add_one_numba[1, THREADS, ns](a_nb)

        def one_by_one(launch=launch):
            for _ in range(n_kernels):
                launch()

        row = {}
        with s:
            launch()  # warm-up: compiled and loaded before anything is timed or captured
            s.synchronize()
            expected = 1
            row["one by one"] = per_kernel(one_by_one, s.synchronize, n_kernels, rounds)
            expected += rounds * n_kernels
            try:
                s.begin_capture()
                try:
                    one_by_one()
                finally:
                    graph = s.end_capture()
                graph.upload(s)
                s.synchronize()
                row["graph"] = per_kernel(lambda g=graph, s=s: g.launch(s), s.synchronize, n_kernels, rounds)
                expected += rounds * n_kernels
            except Exception as e:  # recorded: a library whose launches a capture refuses
                row["graph"] = {"error": f"{type(e).__name__}: {e}"}
        got = float(a[0])
        if got != expected:
            raise SystemExit(f"{lib}: a[0] is {got} after the launches, expected {expected}: a launch went missing")
        out[lib] = row
    return out


def overlap(cp, cuda, np, elements: int, chunks: int, rounds: int) -> dict:
    """ms for the copy in, the kernel and the copy out, three ways, each result checked."""

    import numba

    @cuda.jit
    def twice_plus_one(x, out):
        i = cuda.grid(1)
        if i < out.size:
            out[i] = numba.float32(2.0) * x[i] + numba.float32(1.0)

    x = np.random.default_rng(0).uniform(-4, 4, elements).astype(np.float32)
    x_pinned, out_pinned = cuda.pinned_array_like(x), cuda.pinned_array_like(x)
    x_pinned[:] = x
    out_pageable = np.empty_like(x)

    d_x, d_y = cuda.device_array_like(x), cuda.device_array_like(x)  # allocated once: cuMemAlloc is not timed

    def run(n_streams, src, dst):
        gate = cuda.stream()
        streams = [cuda.stream() for _ in range(n_streams)]
        start = cuda.event()
        start.record(gate)
        ends = []
        bounds = [elements * k // n_streams for k in range(n_streams + 1)]  # nothing the size of the data on the host
        for s, a, b in zip(streams, bounds[:-1], bounds[1:]):
            start.wait(s)
            d_in, d_out = d_x[a:b], d_y[a:b]
            d_in.copy_to_device(src[a:b], stream=s)
            twice_plus_one[(b - a + THREADS - 1) // THREADS, THREADS, s](d_in, d_out)
            d_out.copy_to_host(dst[a:b], stream=s)
            end = cuda.event()
            end.record(s)
            ends.append(end)
        for end in ends:
            end.synchronize()
        return max(start.elapsed_time(end) for end in ends)

    ways = {
        "one stream, pageable": (1, x, out_pageable),
        "one stream, pinned": (1, x_pinned, out_pinned),
        f"{chunks} streams, pinned": (chunks, x_pinned, out_pinned),
    }
    want = 2.0 * x + 1.0
    result = {}
    for label, (n_streams, src, dst) in ways.items():
        run(n_streams, src, dst)  # warm-up
        ms = statistics.median(run(n_streams, src, dst) for _ in range(rounds))
        if not np.allclose(dst, want, rtol=1e-6, atol=1e-6):
            raise SystemExit(f"{label}: wrong result")
        result[label] = {"ms": ms, "GB_per_s": 2 * x.nbytes / ms / 1e6}
    return result


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default="docs/data/streams_graphs.json", help="JSON record to write")
    ap.add_argument("--kernels", type=int, default=1000, help="launches per round (and nodes in the graph)")
    ap.add_argument("--rounds", type=int, default=7, help="rounds per measurement (median)")
    ap.add_argument("--elements", type=int, default=1 << 26, help="float32 elements for the overlap")
    ap.add_argument("--chunks", type=int, default=4, help="streams (and chunks) in the overlapped way")
    args = ap.parse_args(argv)

    import helpers

    if not helpers.on_gpu():
        print(
            f"bench/streams_graphs.py needs a GPU ({helpers.MODE.reason}); run it on a GPU machine with "
            "COURSE_MODE=gpu.",
            file=sys.stderr,
        )
        return 2
    import cupy as cp
    import numpy as np
    from numba import cuda

    from bench.timing import machine

    record = {
        "machine": machine(),
        "settings": vars(args),
        "launch_cost": launch_cost(cp, cuda, np, args.kernels, args.rounds),
        "overlap": overlap(cp, cuda, np, args.elements, args.chunks, args.rounds),
    }
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(record, indent=1) + "\n")
    print(f"{record['machine']['GPU']}, {args.kernels} one-block kernels, median of {args.rounds}:")
    for lib, row in record["launch_cost"].items():
        for way, r in row.items():
            text = r["error"] if "error" in r else f"queued {r['queued_us']:.2f} µs, done {r['done_us']:.2f} µs"
            print(f"  {lib:5s} {way:10s}: {text} per kernel")
    print(f"copy in, 2x + 1, copy out of {args.elements:,} float32:")
    for way, r in record["overlap"].items():
        print(f"  {way:22s}: {r['ms']:8.2f} ms ({r['GB_per_s']:.1f} GB/s of copies)")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
