"""Test-suite wiring shared by the unit tests and the notebook tests (nbval).

- CPU mode unless COURSE_MODE=gpu: the simulator flag is set before anything imports Numba.
- Every notebook cell's outputs are inspected: a printed traceback fails the cell even when
  the cell itself did not raise (a learner must never see one), and "[GPU only]" lines are
  counted per notebook.
- At the end, one table: per notebook, cells, result, time and GPU-only cells skipped; with
  COURSE_REPORT=path the same goes to JSON (make test-gpu turns it into docs/gpu-test-record.md).
"""

from __future__ import annotations

import json
import os
import time
from collections import defaultdict

import pytest

if os.environ.get("COURSE_MODE", "").lower() != "gpu":
    os.environ.setdefault("NUMBA_ENABLE_CUDASIM", "1")
if "COURSE_PROGRESS_FILE" not in os.environ:  # test runs must not touch a learner's progress file
    import tempfile

    os.environ["COURSE_PROGRESS_FILE"] = os.path.join(tempfile.mkdtemp(prefix="course-test-"), "progress.json")
import helpers  # noqa: E402,F401 - decides the mode (and re-reads Numba's config) before any test imports numba

GPU_ONLY_MARK = "[GPU only]"
TRACEBACK_MARK = "Traceback (most recent call last)"


def _stream_text(outputs) -> str:
    parts = []
    for out in outputs or ():
        if out.get("output_type") == "stream":
            parts.append(out.get("text", ""))
        elif out.get("output_type") in ("execute_result", "display_data"):
            parts.append(out.get("data", {}).get("text/plain", ""))
    return "".join(parts)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    outputs = getattr(item, "test_outputs", None)
    if report.when != "call" or outputs is None:  # not a notebook cell
        return
    text = _stream_text(outputs)
    report.user_properties.append(("gpu_only", text.count(GPU_ONLY_MARK)))
    if report.passed and TRACEBACK_MARK in text:
        report.outcome = "failed"
        report.longrepr = f"the cell printed a traceback (learners must see one plain line instead):\n{text[-3000:]}"


class _NotebookReport:
    def __init__(self):
        self.rows = defaultdict(lambda: {"cells": 0, "failed": 0, "seconds": 0.0, "gpu_only": 0})
        self.started = time.time()

    @pytest.hookimpl
    def pytest_runtest_logreport(self, report):
        path = report.nodeid.split("::")[0]
        if not path.endswith(".ipynb"):
            return
        row = self.rows[path]
        row["seconds"] += report.duration
        if report.when == "call":
            row["cells"] += 1
            row["gpu_only"] += dict(report.user_properties).get("gpu_only", 0)
        if report.failed:
            row["failed"] += 1

    @pytest.hookimpl
    def pytest_terminal_summary(self, terminalreporter):
        if not self.rows:
            return
        tr = terminalreporter
        tr.section("notebooks")
        tr.write_line(f"{'notebook':44} {'cells':>5} {'result':>7} {'time':>8} {'GPU-only skipped':>17}")
        for path in sorted(self.rows):
            r = self.rows[path]
            result = "FAILED" if r["failed"] else "passed"
            tr.write_line(f"{path:44} {r['cells']:>5} {result:>7} {r['seconds']:>7.1f}s {r['gpu_only']:>17}")
        dest = os.environ.get("COURSE_REPORT")
        if dest:
            os.makedirs(os.path.dirname(dest) or ".", exist_ok=True)
            with open(dest, "w") as f:
                json.dump({"notebooks": self.rows, "wall_seconds": time.time() - self.started}, f, indent=1)


def _end_to_end(item) -> bool:
    """A test that shares a module- or session-scoped fixture of the suite's own (a class graded by
    the real CLI, a fuzz kernel) is an end-to-end run: `make test` runs it, `make test-fast` (the
    quick loop while editing helpers/) leaves it out with `-m "not slow"`."""
    defs = getattr(getattr(item, "_fixtureinfo", None), "name2fixturedefs", {})
    return any(d.scope in ("module", "package", "session") and d.baseid for ds in defs.values() for d in ds)


NBVAL_OUTPUT_TIMEOUT = 120  # seconds nbval waits for a cell's outputs after its reply (nbval's own: 5)


@pytest.hookimpl(tryfirst=True)  # before the mark plugin deselects by -m
def pytest_collection_modifyitems(config, items):
    for item in items:
        if _end_to_end(item):
            item.add_marker(pytest.mark.slow)
        if hasattr(item, "output_timeout"):  # an nbval cell: on a busy machine its outputs can come late
            item.output_timeout = max(item.output_timeout, NBVAL_OUTPUT_TIMEOUT)


def pytest_configure(config):
    # Only the controller aggregates (xdist workers forward their reports to it).
    if not hasattr(config, "workerinput"):
        config.pluginmanager.register(_NotebookReport(), "course-notebook-report")
