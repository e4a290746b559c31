"""bench/mixed_precision.py (notebook 18's figures): its arithmetic (TFLOP/s, the error in rounding-bound units,
the size rule) and its refusal of CPU mode in one plain line, writing nothing."""

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from bench.mixed_precision import check_size, relative_error, tflops

ROOT = Path(__file__).resolve().parents[2]


def test_tflops_counts_two_operations_per_term():
    assert tflops(1000, 1000, 1000, 1.0) == pytest.approx(2.0)  # 2e9 operations in 1 ms
    with pytest.raises(ValueError, match="positive"):
        tflops(16, 16, 16, 0.0)


def test_relative_error_is_zero_for_the_exact_product_and_scales_with_a_perturbation():
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((8, 32)), rng.standard_normal((32, 8))
    assert relative_error(a @ b, a, b) == 0.0
    scale = np.abs(a) @ np.abs(b)
    got = a @ b
    got[2, 3] += 1e-3 * scale[2, 3]
    assert relative_error(got, a, b) == pytest.approx(1e-3)


def test_size_must_be_a_multiple_of_the_tile():
    assert check_size(4096) == 4096
    for bad in (0, 100, -16):
        with pytest.raises(ValueError, match="multiple of 16"):
            check_size(bad)


def test_bench_refuses_cpu_mode_plainly(tmp_path):
    out = tmp_path / "mp.json"
    r = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "mixed_precision.py"), "--out", str(out)],
        capture_output=True,
        text=True,
        env=dict(os.environ, COURSE_MODE="cpu"),
        timeout=120,
        cwd=ROOT,
    )
    assert r.returncode == 2 and "needs a GPU" in r.stderr and "Traceback" not in r.stderr
    assert not out.exists()
