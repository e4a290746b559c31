#!/usr/bin/env python3
"""Write docs/gpu-test-record.md from a `make test-gpu` run, so learners see what the course was verified on.

Inputs: the per-notebook JSON report written by conftest.py (COURSE_REPORT), the log of
helpers.gpu_only calls (COURSE_GPU_ONLY_LOG) and pytest's JUnit XML of the same run, which
counts the other test files (the GPU tests and the CPU/GPU agreement suite). Exit 1 when a
notebook or a test failed or any GPU-only cell was skipped: on a GPU, every cell must run.
"""

from __future__ import annotations

import datetime as dt
import json
import re
import sys
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def static_gpu_only_cells(path: Path) -> int:
    import nbformat

    nb = nbformat.read(path, as_version=4)
    return sum(1 for c in nb.cells if c.cell_type == "code" and re.search(r"\bgpu_only\(", c.source))


@dataclass(frozen=True)
class TestFile:
    path: str
    passed: int
    failed: int
    skipped: int
    failures: tuple = ()  # the failed cases' names: the record says which, not only how many


def test_files(junit_path: str) -> list[TestFile]:
    """The run's test files other than notebooks, from pytest's JUnit XML (xunit1: each case
    names its file); [] when there is no XML."""
    if not junit_path or not Path(junit_path).exists():
        return []
    counts: dict[str, list[int]] = {}
    names: dict[str, list[str]] = {}
    for case in ET.parse(junit_path).getroot().iter("testcase"):
        path = case.get("file") or case.get("classname", "").replace(".", "/")
        if not path or path.endswith(".ipynb") or ".ipynb" in path:
            continue
        row = counts.setdefault(path, [0, 0, 0])
        kinds = {child.tag for child in case}
        row[1 if kinds & {"failure", "error"} else 2 if "skipped" in kinds else 0] += 1
        if kinds & {"failure", "error"}:
            names.setdefault(path, []).append(case.get("name", "?"))
    return [TestFile(p, *c, tuple(names.get(p, ()))) for p, c in sorted(counts.items())]


def main(report_path: str, log_path: str, out_path: str, junit_path: str = "") -> int:
    from helpers import env

    report = json.loads(Path(report_path).read_text()) if Path(report_path).exists() else {"notebooks": {}}
    calls = [json.loads(line) for line in Path(log_path).read_text().splitlines()] if Path(log_path).exists() else []
    skipped = [c["what"] for c in calls if not c["ran"]]
    rows = report["notebooks"]
    failed = [p for p, r in rows.items() if r["failed"]]
    files = test_files(junit_path)
    failed += [f.path for f in files if f.failed]
    info = env.MODE.info
    v = env.library_versions()
    lines = [
        "# GPU test record",
        "",
        "Written by `make test-gpu` (tools/gpu_record.py); do not edit by hand.",
        "",
        f"- **Date:** {dt.datetime.now(dt.timezone.utc).strftime('%Y-%m-%d %H:%M UTC')}",
        f"- **GPU:** {info.name or 'none'} (compute capability {info.compute_capability})",
        f"- **Driver:** {info.driver_version or 'unknown'}, CUDA {info.driver_cuda}",
        f"- **Python:** {sys.version.split()[0]}",
        "- **Libraries:** " + ", ".join(f"{k} {val}" for k, val in v.items() if val),
        f"- **Result:** {'PASSED' if rows and not failed and not skipped else 'FAILED'} — "
        f"{len(rows)} notebooks, {sum(r['cells'] for r in rows.values())} cells, "
        f"{len(calls)} GPU-only cells run, {len(skipped)} skipped; "
        f"{sum(f.passed for f in files)} other tests passed, {sum(f.failed for f in files)} failed",
        "",
        "| Notebook | Cells | Result | Time (s) | GPU-only cells |",
        "|---|---:|---|---:|---:|",
    ]
    for path in sorted(rows):
        r = rows[path]
        gpu_cells = static_gpu_only_cells(ROOT / path)
        lines.append(
            f"| {path} | {r['cells']} | {'failed' if r['failed'] else 'passed'} | {r['seconds']:.1f} | {gpu_cells} |"
        )
    if files:
        lines += ["", "| Test file | Passed | Failed | Skipped |", "|---|---:|---:|---:|"]
        lines += [f"| {f.path} | {f.passed} | {f.failed} | {f.skipped} |" for f in files]
        if failures := [f"- `{f.path}::{name}`" for f in files for name in f.failures]:
            lines += ["", "Failed tests:", *failures]
    if skipped:
        lines += ["", "Skipped GPU-only cells (must be none):", *[f"- {s}" for s in skipped]]
    Path(out_path).write_text("\n".join(lines) + "\n")
    print(
        f"wrote {out_path}: {len(rows)} notebooks and {len(files)} test files, {len(failed)} of them failed, "
        f"{len(skipped)} GPU-only cells skipped"
    )
    if not rows:
        print("no notebook results found: did the test run start?", file=sys.stderr)
    return 0 if rows and not failed and not skipped else 1


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:5]))
