"""bench/warp_divergence.py (notebook 17's figures): refuses CPU mode in one plain line, and its result check
holds: the simulator runs the benchmark's kernel and agrees with the host's float64 steps on each layout's
paths, while a layout checked against the other layout's paths fails."""

import os
import subprocess
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]


def _run(code_or_script, *args):
    cmd = [sys.executable, *(["-c", code_or_script] if "\n" in code_or_script else [code_or_script]), *args]
    return subprocess.run(
        cmd, capture_output=True, text=True, env=dict(os.environ, COURSE_MODE="cpu"), timeout=600, cwd=ROOT
    )


def test_bench_warp_divergence_refuses_cpu_mode_plainly(tmp_path):
    out = tmp_path / "warp_divergence.json"
    r = _run(str(ROOT / "bench" / "warp_divergence.py"), "--out", str(out))
    assert r.returncode == 2 and "needs a GPU" in r.stderr and "Traceback" not in r.stderr
    assert not out.exists()


def test_the_kernel_matches_the_host_steps_in_every_layout():
    r = _run(
        "import json\nimport helpers\nfrom bench import warp_divergence as w\n"
        "print(json.dumps(w.measure(n=96, iters=25, rounds=1, samples=40)))\n"
    )
    assert r.returncode == 0, r.stderr[-2000:]
    layouts = __import__("json").loads(r.stdout.strip().splitlines()[-1])["layouts"]
    assert sorted(layouts) == sorted(("uniform A", "uniform B", "by warp", "by lane"))
    assert all(v["max_error"] < 1e-5 for v in layouts.values())


def test_the_two_paths_end_far_apart_so_a_wrong_layout_is_caught():
    sys.path.insert(0, str(ROOT))
    from bench.warp_divergence import MODE, host_steps, path

    i = np.arange(256)
    x = np.random.default_rng(0).uniform(0.0, 0.5, i.size).astype(np.float32)  # as the bench draws them
    by_lane = host_steps(x, path(MODE["by lane"], i), 2000)
    by_warp = host_steps(x, path(MODE["by warp"], i), 2000)
    differ = path(MODE["by lane"], i) != path(MODE["by warp"], i)
    assert differ.any() and np.abs(by_lane - by_warp)[differ].min() > 1e-3  # the bench's tolerance
    assert (path(MODE["by warp"], i)[:32] == 0).all() and (path(MODE["by warp"], i)[32:64] == 1).all()
    assert list(path(MODE["by lane"], i)[:4]) == [0, 1, 0, 1]
