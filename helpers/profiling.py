"""Nsight Compute from a notebook: run ``ncu`` on a script, read its CSV, say plainly why it could not run.

    rows = profiling.ncu(["python", "my_kernels.py"], profiling.BASIC)   # one dict per kernel launch
    profiling.show(rows)

Why a module: ``ncu --csv`` prints one line per (launch, metric) with thousands separators, and it
fails in ways a learner cannot read (no ``ncu`` on PATH, ``ERR_NVGPUCTRPERM`` when the driver keeps
performance counters to administrators, no GPU). Each failure is one sentence with its fix.
"""

from __future__ import annotations

import csv
import io
import shutil
import subprocess

from .errors import GPURequired, LearnerError, LearnerTypeError, shown

# What notebook 15 asks of every kernel: time, DRAM traffic and throughput, occupancy, registers.
BASIC = {
    "gpu__time_duration.sum": "time (ns)",
    "dram__bytes_read.sum": "DRAM read (bytes)",
    "dram__bytes_write.sum": "DRAM written (bytes)",
    "dram__throughput.avg.pct_of_peak_sustained_elapsed": "DRAM throughput (% of peak)",
    "sm__warps_active.avg.pct_of_peak_sustained_active": "achieved occupancy (%)",
    "launch__registers_per_thread": "registers per thread",
}

NO_NCU = (
    "Nsight Compute (ncu) is not on PATH: it ships with the CUDA toolkit (bin/ncu) or as the nsight-compute package; "
    "add its folder to PATH and run the cell again."
)
NO_PERMISSION = (
    "ncu reported ERR_NVGPUCTRPERM: this driver lets only administrators read the GPU's performance counters; run as "
    "root, or have an administrator set the nvidia module option NVreg_RestrictProfilingToAdminUsers=0."
)


def parse(text: str, metrics=None) -> list[dict]:
    """``ncu --csv`` output -> one dict per kernel launch (in launch order): kernel name plus numeric metrics."""
    if isinstance(text, bytes):
        text = text.decode(errors="replace")
    if not isinstance(text, str):
        raise LearnerTypeError(f"parse() reads the text ncu --csv printed (a string), not {shown(text)}.")
    if "ERR_NVGPUCTRPERM" in text:
        raise LearnerError(NO_PERMISSION)
    start = text.find('"ID"')
    if start < 0:
        raise LearnerError(
            "ncu profiled no kernel: the script launched none (check it runs on its own), or a --kernel-name filter "
            "matched nothing."
        )
    launches: dict[str, dict] = {}
    for r in csv.DictReader(io.StringIO(text[start:])):
        rec = launches.setdefault(r["ID"], {"kernel": (r.get("Kernel Name") or "").split("(")[0][:48]})
        name = r.get("Metric Name", "")
        if metrics is None or name in metrics:
            value = (r.get("Metric Value") or "").replace(",", "")
            try:
                rec[name] = float(value)
            except ValueError:
                rec[name] = value
    return [launches[k] for k in sorted(launches, key=_launch_order)]


def _launch_order(launch_id):
    """ncu numbers launches 0, 1, 2...; anything else (a hand-edited CSV) goes after them, in text order."""
    text = str(launch_id)
    return (0, int(text), "") if text.isdigit() else (1, 0, text)


def ncu(command: list[str], metrics=BASIC, kernel_regex: str | None = None, timeout: float = 300) -> list[dict]:
    """Run ``ncu --csv --metrics ... command`` and return ``parse``'s rows; failures are one sentence."""
    if not shutil.which("ncu"):
        raise GPURequired(NO_NCU)
    cmd = ["ncu", "--csv", "--metrics", ",".join(metrics)]
    if kernel_regex:
        cmd += ["--kernel-name", f"regex:{kernel_regex}"]
    try:
        p = subprocess.run(cmd + list(command), capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        raise LearnerError(
            f"ncu took longer than {timeout:.0f} s: profile a smaller problem or fewer kernels."
        ) from None
    return parse(p.stdout + p.stderr, metrics)


def show(rows: list[dict], metrics=BASIC) -> None:
    """Print the rows as a table, one line per launch, with the metrics' readable names."""
    if not isinstance(rows, (list, tuple)) or not all(isinstance(r, dict) and "kernel" in r for r in rows):
        raise LearnerTypeError(
            "show() takes the rows ncu() or parse() returned (a list of dicts, each with a 'kernel'), "
            f"not {shown(rows)}."
        )
    names = [metrics[m] for m in metrics]
    print(f"{'kernel':48s}" + "".join(f"{n[:22]:>24s}" for n in names))
    for r in rows:
        cells = "".join(
            f"{r[m]:>24,.1f}" if isinstance(r.get(m), float) else f"{str(r.get(m, '-')):>24s}" for m in metrics
        )
        print(f"{r['kernel']:48s}" + cells)
