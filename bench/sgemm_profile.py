"""Nsight Compute evidence for the SGEMM ladder: why each step is as fast as it is.

On the GPU host:
    ncu --csv -k regex:sgemm --metrics $(python bench/sgemm_profile.py --metrics) \
        python bench/sgemm_profile.py --run > build/ncu.csv
    python bench/sgemm_profile.py --parse build/ncu.csv --gpu "NVIDIA H200" --out docs/data/sgemm_ncu.json

`--run` launches each step once at 4096^3, in LADDER order (ncu reports kernels in launch
order, which is how the parser names them: Numba's mangled kernel names are not readable).
Kernels without "sgemm" in their name (CuPy's random number generators filling the inputs,
when ncu was not given ``-k regex:sgemm``) are left out before the steps are named.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

os.environ.setdefault("CUPY_TF32", "0")
os.environ.setdefault("NVIDIA_TF32_OVERRIDE", "0")
ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

METRICS = {
    "sm__throughput.avg.pct_of_peak_sustained_elapsed": "SM throughput % of peak",
    "sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active": "FMA pipe busy %",
    "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed": "memory throughput % of peak",
    "sm__warps_active.avg.pct_of_peak_sustained_active": "achieved occupancy %",
    "launch__registers_per_thread": "registers per thread",
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum": "shared load bank conflicts",
    "smsp__inst_executed.sum": "instructions executed (warp)",
    "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum": "FFMA thread instructions",
    "gpu__time_duration.sum": "duration (ns)",
}
LADDER = (
    "regblock (step 3)",
    "generated, BK 8 (step 4)",
    "generated + double buffer (step 5)",
    "tuned (step 6)",
    "128-bit shared reads, 128x256 tile (step 7)",
    "CUDA C, float4, 128x256 tile",
)


def launches(size=4096):
    """(label, zero-argument launch) for each step, on shared CuPy arrays."""
    import cupy as cp
    from numba import cuda

    from bench import kernels, sgemm, sgemm_c

    A = cp.random.random((size, size), dtype=cp.float32)
    B = cp.random.random((size, size), dtype=cp.float32)
    C = cp.empty((size, size), dtype=cp.float32)
    a_, b_, c_ = (cuda.as_cuda_array(x) for x in (A, B, C))
    out = []
    g, blk = kernels.sgemm_regblock_launch(size, size)
    out.append((LADDER[0], lambda: kernels.sgemm_regblock[g, blk](a_, b_, c_)))
    steps = ((LADDER[1], sgemm.Config(DB=0)), (LADDER[2], sgemm.Config()), (LADDER[3], sgemm.tuned()))
    for label, cfg in (*steps, (LADDER[4], sgemm.VECTOR)):
        k, g2, b2 = sgemm.launch(cfg, size, size, size)
        out.append((label, lambda k=k, g2=g2, b2=b2: k[g2, b2](a_, b_, c_)))
    from cuda.core import Device

    dev = Device(0)
    dev.set_current()
    kern = sgemm_c.compile_kernel(sgemm_c.VARIANTS[0][1], f"sm_{dev.arch}")
    out.append((LADDER[5], sgemm_c.launcher(kern, size, size, size, A, B, C, sgemm_c.VARIANTS[0][1])))
    return out


def parse(text: str) -> list[dict]:
    """ncu --csv output -> one dict per kernel launch, in launch order, with the ladder's labels."""
    from helpers import profiling

    try:
        recs = profiling.parse(text, METRICS)
    except Exception as e:  # LearnerError: keep this tool's contract (ValueError)
        raise ValueError(f"no ncu CSV table found: {e}") from None
    recs = [r for r in recs if "sgemm" in r.get("kernel", "")]
    if len(recs) > len(LADDER):
        raise ValueError(f"{len(recs)} SGEMM kernels profiled for {len(LADDER)} ladder steps: launch each step once")
    for label, rec in zip(LADDER, recs):
        rec["step"] = label
    return recs


def ladder(reports: list[str]) -> dict:
    """The SGEMM rows of several `bench/run.py` reports (Markdown) -> docs/data/sgemm_ladder.json."""
    import statistics

    steps: dict[str, list] = {}
    head = {}
    for text in reports:
        for line in text.splitlines():
            cells = [c.strip() for c in line.split("|")]
            if len(cells) > 7 and cells[1].startswith("SGEMM") and cells[7] == "ok":
                steps.setdefault(cells[1], []).append(float(cells[5].rstrip("%")) / 100)
            if cells[1:2] == ["GPU"]:
                head["GPU"] = cells[2]
            if len(cells) > 3 and cells[1].startswith("cuBLAS SGEMM"):
                head.setdefault("cublas", []).append(cells[2])
    if not steps:
        raise ValueError("no SGEMM rows with status ok in these reports")
    return {
        "what": "fraction of cuBLAS FP32 (TF32 off, measured in the same run) per SGEMM step, one entry per "
        "full bench/run.py run; the median is what notebook 07 shows",
        **head,
        "runs": len(reports),
        "steps": [{"step": k, "of_cublas": v, "median": statistics.median(v)} for k, v in steps.items()],
    }


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--metrics", action="store_true", help="print the metric list for ncu --metrics")
    p.add_argument("--run", action="store_true", help="launch each ladder step once (run this under ncu)")
    p.add_argument("--parse", help="ncu --csv output to parse")
    p.add_argument("--ladder", nargs="+", metavar="REPORT", help="bench/run.py reports -> the ladder JSON")
    p.add_argument("--out", default="docs/data/sgemm_ncu.json")
    p.add_argument("--gpu", default="", help="the GPU the CSV was profiled on, stored with the steps")
    a = p.parse_args(argv)
    if a.metrics:
        print(",".join(METRICS))
    elif a.run:
        from numba import cuda

        steps = launches()
        for _, go in steps:  # compile everything first, so ncu's launches are only the kernels
            go()
        cuda.synchronize()
        for label, go in steps:
            print("profiling", label, file=sys.stderr)
    elif a.ladder:
        data = ladder([Path(r).read_text() for r in a.ladder])
        Path(a.out).write_text(json.dumps(data, indent=1) + "\n")
        print(f"wrote {a.out}: {len(data['steps'])} steps from {data['runs']} runs")
    elif a.parse:
        recs = parse(Path(a.parse).read_text())
        Path(a.out).write_text(json.dumps({"GPU": a.gpu, "metrics": METRICS, "steps": recs}, indent=1) + "\n")
        for r in recs:
            print(r.get("step"), {METRICS[k]: v for k, v in r.items() if k in METRICS})
    else:
        p.print_help()
    return 0


if __name__ == "__main__":
    sys.exit(main())
