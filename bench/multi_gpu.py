#!/usr/bin/env python3
"""Several GPUs (notebook 13): a reduction split over 1 .. N GPUs, and copy bandwidth per device count.

For each device count k = 1 .. N (the GPUs this process sees, after CUDA_VISIBLE_DEVICES):

- split reduction: n float32 elements, chunk d already on GPU d, CuPy's sum (float64) on each GPU's own
  stream, then every stream synchronised and the partial sums added on the host; host clock around
  the whole (CUDA events time one device), after a warm-up, median of --repeats; every result checked
  against the sum on one GPU. Speed-up and efficiency are against k = 1.
- host to device: --copy-mb from pinned host memory to each of the k GPUs at once (one stream each);
  aggregate GB/s = k x bytes / time.
- GPU to GPU (k >= 2): a ring, GPU d copies --copy-mb to GPU (d + 1) % k, all at once, with peer access
  enabled both ways where deviceCanAccessPeer allows it (else the driver stages through the host);
  aggregate GB/s, and which route each pair took.

GPU only. Writes DIR/multi_gpu.json and DIR/multi_gpu.md (a Markdown fragment for
docs/multi-gpu-record.md or docs/benchmarks-<gpu>.md); --record also puts it into docs/multi-gpu-record.md:

    COURSE_MODE=gpu .venv/bin/python bench/multi_gpu.py --out build/multi-gpu [--record]
"""

from __future__ import annotations

import argparse
import datetime
import json
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # `import helpers` from a checkout
RECORD = Path(__file__).resolve().parent.parent / "docs" / "multi-gpu-record.md"


def chunks(n: int, k: int) -> list[tuple[int, int]]:
    """k (start, stop) ranges covering 0 .. n in order, without overlap, sizes differing by at most one."""
    return [(d * n // k, (d + 1) * n // k) for d in range(k)]


def render(result: dict) -> str:
    """The Markdown fragment for one run (no GPU needed: tests feed it a result)."""
    m, s = result["machine"], result["settings"]
    names = ", ".join(f"GPU {d['id']} {d['name']}" for d in m["devices"])
    lines = [
        "### Several GPUs: a split reduction and copy bandwidth (`bench/multi_gpu.py`)",
        "",
        f"Measured on {len(m['devices'])} GPU(s) ({names}), driver {m.get('driver') or '?'}, CUDA "
        f"{m.get('cuda') or '?'}, {m['date']}; {m.get('libraries', '')}; Python {m['python']}.",
        "",
        f"Reduction: {s['n']:,} float32 elements split evenly, chunk d already on GPU d, CuPy `sum` (float64) on each "
        f"GPU's stream, host clock around queue-all-then-synchronise-all, median of {s['repeats']} after a warm-up, "
        f"checked against one GPU's sum. Copies: {s['copy_mb']} MB per GPU at once, median of {s['copy_repeats']}; "
        "host to device from pinned memory; GPU to GPU as a ring d → d+1.",
        "",
        "| GPUs | reduction ms | reduction GB/s | speed-up | efficiency | correct | H2D GB/s (all GPUs) | "
        "GPU→GPU GB/s (ring) | GPU→GPU route |",
        "|---:|---:|---:|---:|---:|---|---:|---:|---|",
    ]
    for r in result["rows"]:
        p2p = "—" if r.get("p2p_gbps") is None else f"{r['p2p_gbps']:.0f}"
        lines.append(
            f"| {r['devices']} | {r['reduce_ms']:.3f} | {r['reduce_gbps']:.0f} | {r['speedup']:.2f} | "
            f"{r['efficiency']:.0%} | {'yes' if r['correct'] else '**no**'} | {r['h2d_gbps']:.0f} | {p2p} | "
            f"{r.get('p2p_route') or '—'} |"
        )
    peer = result.get("peer") or []
    if len(peer) > 1:
        pairs = [f"{i}→{j}" for i, row in enumerate(peer) for j, ok in enumerate(row) if ok]
        lines += ["", f"Peer access (deviceCanAccessPeer): {', '.join(pairs) or 'none'}."]
    else:
        lines += ["", "One GPU: the table has one row; the GPU-to-GPU columns need two."]
    return "\n".join(lines) + "\n"


def _ms(fn, repeats: int) -> float:
    fn()  # warm-up
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times) * 1e3


def _enable_peer(cp, i, j):
    with cp.cuda.Device(i):
        try:
            cp.cuda.runtime.deviceEnablePeerAccess(j)
        except cp.cuda.runtime.CUDARuntimeError as e:
            if "AlreadyEnabled" not in str(e):
                raise


def measure(cp, n_dev: int, n: int, repeats: int, copy_mb: int, copy_repeats: int) -> tuple[list, list]:
    """(rows, peer table) for k = 1 .. n_dev."""
    rt = cp.cuda.runtime
    peer = [[i != j and bool(rt.deviceCanAccessPeer(i, j)) for j in range(n_dev)] for i in range(n_dev)]
    for i in range(n_dev):
        for j in range(n_dev):
            if peer[i][j] and peer[j][i]:
                _enable_peer(cp, i, j)
    with cp.cuda.Device(0):
        cp.random.seed(1)
        x = cp.random.random(n, dtype=cp.float32)
        reference = float(x.sum(dtype=cp.float64))
    streams = []
    for d in range(n_dev):
        with cp.cuda.Device(d):
            streams.append(cp.cuda.Stream(non_blocking=True))
    nbytes = copy_mb << 20
    pinned = [cp.cuda.alloc_pinned_memory(nbytes) for _ in range(n_dev)]
    bufs, ring = [], []
    for d in range(n_dev):
        with cp.cuda.Device(d):
            bufs.append(cp.zeros(nbytes, dtype=cp.uint8))
            ring.append(cp.zeros(nbytes, dtype=cp.uint8))

    def sync(k):
        for d in range(k):
            streams[d].synchronize()

    rows, base, placed = [], None, []  # placed: chunk d of x on GPU d, for the current k
    for k in range(1, n_dev + 1):
        for d, (lo, hi) in enumerate(chunks(n, k)):
            with cp.cuda.Device(d):
                part = cp.empty(hi - lo, cp.float32)
                rt.memcpyPeer(part.data.ptr, d, x[lo:hi].data.ptr, 0, part.nbytes)
                placed.append(part)
        got = []

        def reduce():
            sums = []
            for d, part in enumerate(placed):
                with cp.cuda.Device(d), streams[d]:
                    sums.append(part.sum(dtype=cp.float64))
            sync(k)
            got[:] = [sum(float(s.get()) for s in sums)]

        ms = _ms(reduce, repeats)
        base = base or ms
        correct = abs(got[0] - reference) <= 1e-9 * abs(reference)

        def h2d():
            for d in range(k):
                with cp.cuda.Device(d):
                    rt.memcpyAsync(bufs[d].data.ptr, pinned[d].ptr, nbytes, rt.memcpyHostToDevice, streams[d].ptr)
            sync(k)

        h2d_ms = _ms(h2d, copy_repeats)
        row = {
            "devices": k,
            "reduce_ms": ms,
            "reduce_gbps": 4 * n / ms / 1e6,
            "speedup": base / ms,
            "efficiency": base / ms / k,
            "correct": correct,
            "h2d_gbps": k * nbytes / h2d_ms / 1e6,
            "p2p_gbps": None,
            "p2p_route": None,
        }
        if k >= 2:

            def p2p():
                for d in range(k):
                    dst = (d + 1) % k
                    with cp.cuda.Device(d):
                        rt.memcpyPeerAsync(ring[dst].data.ptr, dst, bufs[d].data.ptr, d, nbytes, streams[d].ptr)
                sync(k)

            p2p_ms = _ms(p2p, copy_repeats)
            routes = {"peer" if peer[d][(d + 1) % k] and peer[(d + 1) % k][d] else "host" for d in range(k)}
            row.update(p2p_gbps=k * nbytes / p2p_ms / 1e6, p2p_route=" and ".join(sorted(routes)))
        rows.append(row)
        placed.clear()
        for d in range(n_dev):
            with cp.cuda.Device(d):
                cp.get_default_memory_pool().free_all_blocks()
    return rows, peer


def machine(cp) -> dict:
    import helpers

    info = helpers.MODE.info
    devices = []
    for d in range(cp.cuda.runtime.getDeviceCount()):
        props = cp.cuda.runtime.getDeviceProperties(d)
        name = props["name"].decode() if isinstance(props["name"], bytes) else str(props["name"])
        devices.append({"id": d, "name": name, "pci_bus_id": cp.cuda.runtime.deviceGetPCIBusId(d)})
    versions = helpers.env.library_versions()
    return {
        "devices": devices,
        "driver": info.driver_version,
        "cuda": info.driver_cuda,
        "date": datetime.date.today().isoformat(),
        "libraries": ", ".join(f"{k} {v}" for k, v in versions.items() if v),
        "python": sys.version.split()[0],
    }


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True, help="folder for multi_gpu.json and multi_gpu.md")
    ap.add_argument("--n", type=int, default=2**30, help="float32 elements in the reduction (default 2**30, 4 GiB)")
    ap.add_argument("--repeats", type=int, default=30, help="timed reductions per device count (median)")
    ap.add_argument("--copy-mb", type=int, default=1024, help="MB copied to or from each GPU per copy (default 1024)")
    ap.add_argument("--copy-repeats", type=int, default=10, help="timed copies per device count (median)")
    ap.add_argument("--record", action="store_true", help="also put the table into docs/multi-gpu-record.md")
    args = ap.parse_args(argv)

    import helpers

    if not helpers.on_gpu():
        print(f"bench/multi_gpu.py needs a GPU ({helpers.MODE.reason}); run it on a GPU machine.", file=sys.stderr)
        return 2
    import cupy as cp

    n_dev = cp.cuda.runtime.getDeviceCount()
    rows, peer = measure(cp, n_dev, args.n, args.repeats, args.copy_mb, args.copy_repeats)
    result = {
        "machine": machine(cp),
        "settings": {k: getattr(args, k) for k in ("n", "repeats", "copy_mb", "copy_repeats")},
        "peer": peer,
        "rows": rows,
    }
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "multi_gpu.json").write_text(json.dumps(result, indent=1))
    text = render(result)
    (out / "multi_gpu.md").write_text(text)
    print(text)
    if args.record:
        from helpers._files import replace_section

        replace_section(RECORD, "bench", text, title="# Several GPUs: measured and verified")
        print(f"written to {RECORD}")
    return 0 if all(r["correct"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
