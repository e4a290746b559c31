#!/usr/bin/env python3
"""Time the course's reference kernels on a GPU and write docs/benchmarks-<gpu>.md.

    COURSE_MODE=gpu python bench/run.py --out docs/benchmarks-<gpu>.md    (what `make bench` runs)
    python bench/run.py --quick                                       (smaller, faster; prints the report)
    python bench/run.py --only vector_add,sgemm_regblock

Every kernel's bandwidth (or FLOP/s) is reported as a fraction of a ceiling measured in the
same run: device-to-device copy for memory-bound kernels, cuBLAS float32 SGEMM (TF32 off)
for the matrix multiplies. Results are checked against CuPy before timing counts; a kernel
that fails (wrong result, compile error, out of memory) marks its row failed and the others
still run. Needs an NVIDIA GPU; in CPU mode it says so in one line and exits with status 2.
"""

from __future__ import annotations

import argparse
import datetime
import math
import os
import platform
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

# TF32 off for the SGEMM ceiling, before CuPy (and cuBLAS) load: CuPy 14 picks cuBLAS compute
# type 32F for float32 unless CUPY_TF32 > 0 (cupy/_core/_routines_linalg.pyx, get_compute_type);
# NVIDIA_TF32_OVERRIDE=0 also forbids TF32 inside cuBLAS whatever the caller asks for.
os.environ["CUPY_TF32"] = "0"
os.environ["NVIDIA_TF32_OVERRIDE"] = "0"

from bench import record, report  # noqa: E402  (pure Python: fine without a GPU)
from bench.timing import FULL, QUICK, Sizes, Timer  # noqa: E402  (imports CuPy only when a Timer is made)

KEYS = (
    "copy_kernel",
    "copy_k4",
    "vector_add",
    "vector_add_k4",
    "saxpy",
    "saxpy_k4",
    "transpose_naive",
    "transpose_tiled",
    "transpose_padded",
    "transpose_padded_fast",
    "transpose_t64",
    "transpose_t64_u",
    "reduction",
    "sgemm_naive",
    "sgemm_tiled",
    "sgemm_regblock",
    "sgemm_gen",
    "sgemm_gen_db",
    "sgemm_tuned",
    "sgemm_vl",
    "sgemm_c",
)


def parse_args(argv=None):
    ap = argparse.ArgumentParser(
        prog="bench/run.py",
        description="Time the course's reference kernels on an NVIDIA GPU against ceilings measured in the "
        "same run (device-to-device copy; cuBLAS float32 SGEMM with TF32 off) and write a Markdown report.",
        epilog="Needs a GPU: in CPU mode it prints one line and exits with status 2. `make bench` runs "
        "`COURSE_MODE=gpu python bench/run.py --out docs/benchmarks-<gpu>.md`.",
    )
    ap.add_argument("--out", metavar="PATH", help="write the Markdown report here (default: print it)")
    ap.add_argument("--record", metavar="DIR", help="also write DIR/bench-<gpu>.json (a full run only)")
    ap.add_argument("--quick", action="store_true", help="smaller sizes, fewer repetitions (a quarter of the time)")
    ap.add_argument("--only", metavar="KEYS", default="", help=f"comma-separated subset of kernels: {', '.join(KEYS)}")
    ap.add_argument("--seed", type=int, default=None, help="random seed for the inputs (default: fresh)")
    args = ap.parse_args(argv)
    only = [k.strip() for k in args.only.split(",") if k.strip()]
    unknown = [k for k in only if k not in KEYS]
    if unknown:
        ap.error(f"unknown kernel(s) {', '.join(unknown)}; choose from {', '.join(KEYS)}")
    args.only = only
    return args


# ------------------------------------------------------------------------------ the course's kernels


class Bench(Timer):
    """The timer (bench/timing.py) plus one method per course kernel (`k_<key>`)."""

    def __init__(self, sizes: Sizes, seed: int, log=print):
        super().__init__(sizes, seed, log)  # CuPy and Numba first, then the kernels' module
        from bench import kernels

        self.k = kernels

    # -- kernels -------------------------------------------------------------------------------
    def run_kernel(self, key) -> report.Row:
        return getattr(self, "k_" + key)()

    def _measure(self, row, launch, check):
        """Launch once, check, time, check again: any exception marks only this row failed."""
        launch()
        self.cuda.synchronize()
        ok, detail = check()
        if not ok:
            row.status, row.error = "failed", f"wrong result before timing ({detail})"
            return row
        row.seconds, row.samples = self.time(launch)
        ok, detail = check()
        if not ok:
            row.status, row.error, row.seconds = "failed", f"wrong result after timing ({detail})", None
            return row
        row.status = "ok"
        return row

    def _stream_check(self, got, want, tol=1e-6):
        err = report.max_scaled_error(got, want, self.cp.maximum(self.cp.abs(want), 1.0), xp=self.cp)
        return err <= tol, f"max scaled error {err:.2e}, allowed {tol:.0e}"

    def k_copy_kernel(self):
        cp, k = self.cp, self.k
        n = self.sizes.stream_n
        src, dst = self.rand(n), cp.zeros(n, dtype=cp.float32)
        s_, d_ = self.nb(src), self.nb(dst)
        grid, block = k.streaming_launch(n)
        row = report.Row(
            "copy_kernel", "copy (Numba kernel)", "bandwidth", f"2^{int(math.log2(n))} float32", work=2 * 4 * n
        )
        return self._measure(row, lambda: k.copy_kernel[grid, block](s_, d_), lambda: self._stream_check(dst, src, 0.0))

    def k_vector_add(self):
        cp, k = self.cp, self.k
        n = self.sizes.stream_n
        a, b, out = self.rand(n), self.rand(n), cp.zeros(n, dtype=cp.float32)
        a_, b_, o_ = self.nb(a), self.nb(b), self.nb(out)
        grid, block = k.streaming_launch(n)
        row = report.Row("vector_add", "vector add", "bandwidth", f"2^{int(math.log2(n))} float32", work=3 * 4 * n)
        return self._measure(row, lambda: k.vector_add[grid, block](a_, b_, o_), lambda: self._stream_check(out, a + b))

    def k_saxpy(self):
        import numpy as np

        cp, k = self.cp, self.k
        n = self.sizes.stream_n
        x, y, out = self.rand(n), self.rand(n), cp.zeros(n, dtype=cp.float32)
        a = np.float32(1.5)
        x_, y_, o_ = self.nb(x), self.nb(y), self.nb(out)
        grid, block = k.streaming_launch(n)
        row = report.Row("saxpy", "SAXPY", "bandwidth", f"2^{int(math.log2(n))} float32", work=3 * 4 * n)
        return self._measure(
            row, lambda: k.saxpy[grid, block](a, x_, y_, o_), lambda: self._stream_check(out, a * x + y)
        )

    def _k_per_thread(self, kernel: str, label: str, k: int = 4):
        """The streaming kernel with k elements per thread (bench/streaming_kernels.py)."""
        from bench import streaming_kernels as sk

        cp, n = self.cp, self.sizes.stream_n
        x, y, out, a = self.rand(n), self.rand(n), cp.zeros(n, dtype=cp.float32), cp.float32(1.5)
        x_, y_, o_ = self.nb(x), self.nb(y), self.nb(out)
        make, args, want, reads = {
            "copy": (sk.make_copy, (x_, o_), x, 1),
            "vector_add": (sk.make_vector_add, (x_, y_, o_), x + y, 2),
            "saxpy": (sk.make_saxpy, (a, x_, y_, o_), a * x + y, 2),
        }[kernel]
        fn, (grid, block) = make(k), sk.tile_launch(n, k)
        size = f"2^{int(math.log2(n))} float32"
        row = report.Row(f"{kernel}_k{k}", label, "bandwidth", size, work=(reads + 1) * 4 * n)
        tol = 0.0 if kernel == "copy" else 1e-6
        return self._measure(row, lambda: fn[grid, block](*args), lambda: self._stream_check(out, want, tol))

    def k_copy_k4(self):
        return self._k_per_thread("copy", "copy, 4 elements per thread")

    def k_vector_add_k4(self):
        return self._k_per_thread("vector_add", "vector add, 4 elements per thread")

    def k_saxpy_k4(self):
        return self._k_per_thread("saxpy", "SAXPY, 4 elements per thread")

    def k_transpose_t64(self):
        return self._transpose_tiles("transpose_t64", 64, 16, unsigned=False)

    def k_transpose_t64_u(self):
        return self._transpose_tiles("transpose_t64_u", 64, 8, unsigned=True)

    def _transpose_tiles(self, key, tile, per_thread, unsigned):
        from bench import streaming_kernels as sk

        label = f"transpose, {tile} x {tile} padded tile, {per_thread} elements per thread"
        kernel = sk.make_transpose(tile, per_thread, unsigned)
        launch = lambda r, c: sk.transpose_tiles_launch(r, c, tile, per_thread)  # noqa: E731
        return self._transpose(key, label + (", unsigned indices" if unsigned else ""), kernel, launch)

    def _transpose(self, key, label, kernel, launch=None):
        cp, k = self.cp, self.k
        s = self.sizes.transpose
        inp, out = self.rand((s, s)), cp.zeros((s, s), dtype=cp.float32)
        i_, o_ = self.nb(inp), self.nb(out)
        grid, block = (launch or k.transpose_launch)(s, s)
        row = report.Row(key, label, "bandwidth", f"{s} x {s} float32", work=2 * 4 * s * s)

        def check():
            same = bool((out == inp.T).all())
            return same, "exact" if same else "out != inp.T"

        return self._measure(row, lambda: kernel[grid, block](i_, o_), check)

    def k_transpose_naive(self):
        return self._transpose("transpose_naive", "transpose, naive (strided writes)", self.k.transpose_naive)

    def k_transpose_tiled(self):
        return self._transpose("transpose_tiled", "transpose, tiled (32-way bank conflicts)", self.k.transpose_tiled)

    def k_transpose_padded(self):
        return self._transpose("transpose_padded", "transpose, tiled + padded", self.k.transpose_padded)

    def k_transpose_padded_fast(self):
        return self._transpose(
            "transpose_padded_fast",
            "transpose, tiled + padded, no checks on interior tiles",
            self.k.transpose_padded_fast,
            self.k.transpose_fast_launch,
        )

    def k_reduction(self):
        cp, k = self.cp, self.k
        n = self.sizes.reduce_n
        x = self.rand(n, 0.0, 1.0)  # positive: a relative tolerance means something
        blocks = k.reduction_blocks(n, self.sm_count)
        partial, result = cp.zeros(blocks, dtype=cp.float32), cp.zeros(1, dtype=cp.float32)
        x_, p_, r_ = self.nb(x), self.nb(partial), self.nb(result)
        want = float(x.sum(dtype=cp.float64))
        row = report.Row(
            "reduction",
            f"block reduction (sum, two passes, {blocks} blocks)",
            "bandwidth",
            f"2^{int(math.log2(n))} float32",
            work=4 * n,
        )

        def check(tol=1e-5):
            got = float(result[0])
            err = abs(got - want) / want
            return err <= tol, f"sum {got:.7g} vs {want:.7g}, relative error {err:.1e}"

        return self._measure(row, lambda: k.reduce_sum(x_, p_, r_), check)

    def _sgemm(self, key, label, kernel, grid_block):
        cp = self.cp
        s = self.sizes.sgemm
        A, B, C = self.rand((s, s)), self.rand((s, s)), cp.zeros((s, s), dtype=cp.float32)
        a_, b_, c_ = self.nb(A), self.nb(B), self.nb(C)
        grid, block = grid_block(s, s)
        row = report.Row(key, label, "flops", f"{s}³ float32", work=2.0 * s**3)
        tol = s * 2.0**-24  # the worst-case bound for float32 sums of s products

        def check():
            err = self.sgemm_error(A, B, C)
            return err <= tol, f"scaled error {err:.1e}, allowed {tol:.1e}"

        return self._measure(row, lambda: kernel[grid, block](a_, b_, c_), check)

    def k_sgemm_naive(self):
        return self._sgemm(
            "sgemm_naive", "SGEMM 1: naive (one element per thread)", self.k.sgemm_naive, self.k.sgemm_launch
        )

    def k_sgemm_tiled(self):
        return self._sgemm(
            "sgemm_tiled", "SGEMM 2: shared-memory tiles (32 x 32)", self.k.sgemm_tiled, self.k.sgemm_launch
        )

    def k_sgemm_regblock(self):
        k = self.k
        return self._sgemm(
            "sgemm_regblock",
            f"SGEMM 3: register blocking ({k.BM}x{k.BN} tiles, {k.TM}x{k.TN} per thread)",
            k.sgemm_regblock,
            k.sgemm_regblock_launch,
        )

    # Steps 4-7: generated kernels (bench/sgemm.py says why each helps); step 6 is the fastest
    # config of the last bench/sgemm_tune.py run (docs/data/sgemm_tune.json), step 7 adds 128-bit shared reads.
    def _sgemm_gen(self, key, label, pick):
        from bench import sgemm

        s, cfg = self.sizes.sgemm, pick(sgemm)
        kern, grid, block = sgemm.launch(cfg, s, s, s)
        return self._sgemm(key, f"{label} ({cfg.name()})", kern, lambda m, n: (grid, block))

    def k_sgemm_gen(self):
        return self._sgemm_gen(
            "sgemm_gen", "SGEMM 4: unsigned 32-bit indices, unrolled scalars", lambda g: g.Config(DB=0)
        )

    def k_sgemm_gen_db(self):
        return self._sgemm_gen("sgemm_gen_db", "SGEMM 5: + double-buffered shared tiles", lambda g: g.Config())

    def k_sgemm_tuned(self):
        return self._sgemm_gen("sgemm_tuned", "SGEMM 6: autotuned tile shape", lambda g: g.tuned())

    def k_sgemm_vl(self):
        return self._sgemm_gen("sgemm_vl", "SGEMM 7: 128-bit shared reads (@intrinsic)", lambda g: g.VECTOR)

    def k_sgemm_c(self):
        """The same tile in CUDA C with float4 loads, through cuda.core (bench/sgemm_c.py)."""
        from cuda.core import Device

        from bench import sgemm_c

        cp, s = self.cp, self.sizes.sgemm
        dev = Device(0)
        dev.set_current()
        label, macros = sgemm_c.VARIANTS[0]
        kern = sgemm_c.compile_kernel(macros, f"sm_{dev.arch}")
        A, B, C = self.rand((s, s)), self.rand((s, s)), cp.zeros((s, s), dtype=cp.float32)
        row = report.Row("sgemm_c", f"SGEMM C: {label} (cuda.core)", "flops", f"{s}³ float32", work=2.0 * s**3)
        tol = s * 2.0**-24

        def check():
            err = self.sgemm_error(A, B, C)
            return err <= tol, f"scaled error {err:.1e}, allowed {tol:.1e}"

        return self._measure(row, sgemm_c.launcher(kern, s, s, s, A, B, C, macros), check)


def _one_line(e: BaseException) -> str:
    text = str(e).strip().splitlines()
    first = text[0] if text else ""
    return f"{type(e).__name__}: {first}"[:200]


def collect_rows(bench, keys, ceilings, log=print) -> list:
    """One row per kernel; an exception marks only that row failed and the next kernel runs."""
    rows = []
    for key in keys:
        t0 = time.perf_counter()
        try:
            row = bench.run_kernel(key)
        except Exception as e:  # one failing kernel must not stop the others
            row = report.Row(
                key, key, "flops" if key.startswith("sgemm") else "bandwidth", "—", status="failed", error=_one_line(e)
            )
        finally:
            try:
                bench.free()
            except Exception:  # a sticky CUDA error; later rows will say so
                pass
        rows.append(row)
        frac = report.fraction(row, ceilings)
        log(
            f"  {row.label:58} {row.status:6} {report.format_rate(row.kind, row.rate):>16} "
            f"{report.format_fraction(frac):>5}  ({time.perf_counter() - t0:.1f} s)"
            + (f"  {row.error}" if row.error else "")
        )
    return rows


def _metadata(bench: Bench, args, helpers_env) -> dict:
    info = helpers_env.MODE.info
    v = helpers_env.library_versions()
    libs = ", ".join(
        f"{k} {v[k]}" for k in ("numba", "numba-cuda", "numpy", "cupy", "cuda-bindings", "cuda-core") if v.get(k)
    )
    try:
        runtime = bench.cp.cuda.runtime.runtimeGetVersion()
        libs += f"; CUDA runtime (CuPy) {runtime // 1000}.{runtime % 1000 // 10}"
    except Exception:  # informational only: the report leaves the runtime version out
        pass
    cc = bench.dev.compute_capability
    cmd = (
        "python bench/run.py"
        + (" --quick" if args.quick else "")
        + (f" --only {','.join(args.only)}" if args.only else "")
    )
    return {
        "command": cmd,
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "quick": args.quick,
        "GPU": f"{bench.dev.name} (sm_{cc[0]}{cc[1]}, {bench.sm_count} SMs)",
        "Driver": f"{info.driver_version or 'version unknown'} (supports CUDA {info.driver_cuda})",
        "Libraries": libs,
        "Python": platform.python_version(),
        "Timing": "CUDA events, warm-up, median of batches (see Method)",
        "seed": bench.seed,
    }


def main(argv=None) -> int:
    args = parse_args(argv)  # --help and bad options work without a GPU
    try:
        import helpers
    except Exception as e:  # COURSE_MODE=gpu without a GPU raises GPURequired here
        print(f"bench/run.py needs an NVIDIA GPU: {e}")
        return 2
    if not helpers.on_gpu():
        print(f"bench/run.py needs an NVIDIA GPU; this is CPU mode ({helpers.MODE.reason}).")
        return 2

    seed = args.seed if args.seed is not None else int.from_bytes(os.urandom(3), "little")
    sizes = QUICK if args.quick else FULL
    began = time.perf_counter()
    bench = Bench(sizes, seed, log=lambda s: print(s, flush=True))
    print(f"{bench.dev.name}: {'quick' if args.quick else 'full'} run, seed {seed}", flush=True)

    ceilings = {}
    for key, fn, unit in (("copy", bench.ceiling_copy, "bandwidth"), ("sgemm", bench.ceiling_sgemm, "flops")):
        wanted = {
            "copy": [k for k in KEYS if not k.startswith("sgemm")],
            "sgemm": [k for k in KEYS if k.startswith("sgemm")],
        }[key]
        if args.only and not any(k in args.only for k in wanted):
            continue
        try:
            ceilings[key] = fn()
            print(f"  ceiling {ceilings[key].label}: {report.format_rate(unit, ceilings[key].value)}", flush=True)
        except Exception as e:  # reported as a failed ceiling
            label = "Device-to-device copy" if key == "copy" else "cuBLAS SGEMM (float32, TF32 off)"
            ceilings[key] = report.Ceiling(key, label, None, "", _one_line(e))
            print(f"  ceiling {key}: failed ({_one_line(e)})", flush=True)
            bench.free()

    rows = collect_rows(
        bench, [k for k in KEYS if not args.only or k in args.only], ceilings, log=lambda s: print(s, flush=True)
    )

    verdicts = report.judge(
        rows, ceilings, [t for t in report.TARGETS if not args.only or any(k in args.only for k in t.keys)]
    )
    meta = _metadata(bench, args, helpers.env)
    text = report.render_markdown(meta, ceilings, rows, verdicts)
    if args.out:
        out = Path(args.out)
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(text)
        print(f"wrote {out} ({time.perf_counter() - began:.0f} s)")
    else:
        print(text)
    if args.record and not (args.quick or args.only):  # a partial run must not replace a GPU's record
        print(f"wrote {record.write(args.record, meta, ceilings, rows, verdicts)}")
    for v in verdicts:
        print(f"  target {v.result:12} {report.format_fraction(v.value):>5}  {v.target.name}")
    return 0 if all(r.status == "ok" for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
