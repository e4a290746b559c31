"""bench/streams_graphs.py (notebook 16's figures) refuses CPU mode in one plain line and writes nothing."""

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_bench_streams_graphs_refuses_cpu_mode_plainly(tmp_path):
    out = tmp_path / "streams_graphs.json"
    r = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "streams_graphs.py"), "--out", str(out)],
        capture_output=True,
        text=True,
        env=dict(os.environ, COURSE_MODE="cpu"),
        timeout=120,
        cwd=ROOT,
    )
    assert r.returncode == 2 and "needs a GPU" in r.stderr and "Traceback" not in r.stderr
    assert not out.exists()
