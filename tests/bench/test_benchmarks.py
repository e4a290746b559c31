"""Everything under bench/ (the GPU benchmark of notebooks 05-07 and the interop benchmark), in CPU mode.

- bench/kernels.py: every benchmark kernel passes the CPU tracer with no verdict (zero false
  positives) and computes the right numbers.
- bench/report.py, pure logic: checking results, fractions, pass/miss, the Markdown report.
- bench/run.py, orchestration on the simulator with NumPy standing in for CuPy: one failing kernel
  does not stop the others, wrong numbers mark a row failed; the script's --help and CPU-mode exit.
- bench/interop.py refuses CPU mode with one plain line.
"""

import math
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from bench import kernels as K
from bench import report
from helpers.tracer import trace

ROOT = Path(__file__).resolve().parents[2]
RNG = np.random.default_rng(0)


def _f32(*shape):
    return RNG.random(shape, dtype=np.float32)


# ----------------------------------------------------------------------------- bench/kernels.py, traced


def _clean(t):
    assert t.verdicts == [], [str(v) for v in t.verdicts]


@pytest.mark.parametrize("kernel,launch", [(K.vector_add, None), (K.saxpy, None), (K.copy_kernel, None)])
def test_streaming_kernels_trace_clean(kernel, launch):
    n = 300
    a, b, out = _f32(n), _f32(n), np.zeros(n, np.float32)
    grid, block = K.streaming_launch(n, 128)
    if kernel is K.saxpy:
        _clean(trace(kernel, grid, block, np.float32(2), a, b, out, outputs=("out",)))
        np.testing.assert_allclose(out, 2 * a + b, rtol=1e-6)
    elif kernel is K.vector_add:
        _clean(trace(kernel, grid, block, a, b, out, outputs=("out",)))
        np.testing.assert_allclose(out, a + b, rtol=1e-6)
    else:
        _clean(trace(kernel, grid, block, a, out, outputs=("dst",)))
        np.testing.assert_array_equal(out, a)


@pytest.mark.parametrize("name", ["transpose_naive", "transpose_tiled", "transpose_padded"])
def test_transposes_trace_clean(name):
    inp, out = _f32(40, 70), np.zeros((70, 40), np.float32)
    t = trace(getattr(K, name), *K.transpose_launch(40, 70), inp, out, outputs=("out",))
    _clean(t)
    np.testing.assert_array_equal(out, inp.T)
    if name == "transpose_tiled":
        assert t.metrics.bank_ways_max == 32  # what the padded version fixes
    if name == "transpose_padded":
        assert t.metrics.bank_ways_max == 1 and t.metrics.coalescing > 0.8


def test_fast_transpose_traces_clean_with_interior_and_edge_tiles():
    # 70 x 100: interior tiles take the unchecked path, the edge tiles the checked one.
    inp, out = _f32(70, 100), np.zeros((100, 70), np.float32)
    t = trace(K.transpose_padded_fast, *K.transpose_fast_launch(70, 100), inp, out, outputs=("out",))
    _clean(t)
    np.testing.assert_array_equal(out, inp.T)
    assert t.metrics.bank_ways_max == 1


def test_two_pass_reduction_traces_clean():
    x = _f32(5000)
    partial, result = np.zeros(K.reduction_blocks(x.size, 1), np.float32), np.zeros(1, np.float32)
    _clean(trace(K.block_sum, partial.size, K.RED_THREADS, x, partial, outputs=("partial",)))
    _clean(trace(K.block_sum, 1, K.RED_THREADS, partial, result, outputs=("partial",)))
    assert abs(result[0] - x.sum(dtype=np.float64)) < 1e-3


@pytest.mark.parametrize(
    "name,shape", [("sgemm_naive", (37, 20, 45)), ("sgemm_tiled", (37, 20, 45)), ("sgemm_regblock", (130, 9, 131))]
)
def test_sgemm_steps_trace_clean(name, shape):
    m, k, n = shape
    A, B, C = _f32(m, k), _f32(k, n), np.zeros((m, n), np.float32)
    launch = K.sgemm_regblock_launch if name == "sgemm_regblock" else K.sgemm_launch
    _clean(trace(getattr(K, name), *launch(m, n), A, B, C, outputs=("C",)))
    np.testing.assert_allclose(C, A @ B, rtol=1e-5, atol=1e-5)


# ----------------------------------------------------------------------------- benchmark: pure logic


def test_max_scaled_error():
    want = np.array([1.0, 2.0, 4.0])
    assert report.max_scaled_error(want, want) == 0.0
    assert math.isclose(report.max_scaled_error(want * 1.01, want), 0.01, rel_tol=1e-9)
    assert report.max_scaled_error(np.array([1.0, np.nan, 4.0]), want) == math.inf
    assert report.max_scaled_error(want[:2], want) == math.inf


def _ceilings(copy=2e12, sgemm=50e12):
    return {
        "copy": report.Ceiling("copy", "Device-to-device copy", copy, "test"),
        "sgemm": report.Ceiling("sgemm", "cuBLAS SGEMM", sgemm, "test"),
    }


def _row(key, seconds, work, kind="bandwidth", status="ok", error=""):
    return report.Row(key, key, kind, "size", status=status, seconds=seconds, work=work, samples=5, error=error)


def test_fractions_and_verdicts_come_from_the_measurements():
    ceilings = _ceilings()
    rows = [
        _row("vector_add_k4", 1e-3, 0.93 * 2e12 * 1e-3),  # 93% of copy: pass (target 92%)
        _row("saxpy_k4", 1e-3, 0.91 * 2e12 * 1e-3),  # 91%: miss
        _row("transpose_padded", 1e-3, 0.92 * 2e12 * 1e-3),  # exactly 92%: pass
        _row("reduction", None, None, status="failed", error="boom"),
        _row("sgemm_naive", 1.0, 5e12, "flops"),
        _row("sgemm_regblock", 1.0, 40e12, "flops"),
    ]
    assert math.isclose(report.fraction(rows[0], ceilings), 0.93)
    verdicts = {v.target.keys[0]: v for v in report.judge(rows, ceilings)}
    assert verdicts["vector_add_k4"].result == "pass"
    assert verdicts["saxpy_k4"].result == "miss"
    assert verdicts["transpose_padded"].result == "pass"
    assert verdicts["copy_k4"].result == "not measured"
    assert verdicts["reduction"].result == "not measured" and "boom" in verdicts["reduction"].detail
    best = verdicts["sgemm_naive"]  # the SGEMM target takes the best step
    assert best.result == "pass" and best.best_key == "sgemm_regblock" and math.isclose(best.value, 0.8)


def _records(prepared_us, correct=True, graph_us=0.9, tensor=0.6):
    launch = {"rows": [{"way": "Numba, device arrays wrapped once", "correct": True, "host_us": 48.0}]}
    if prepared_us is not None:
        launch["rows"].append({"way": report.PREPARED_WAY, "correct": correct, "host_us": prepared_us})
    graphs = {"launch_cost": {"numba": {"graph": {"done_us": graph_us}}}} if graph_us is not None else None
    gemm = {"rows": [{"kernel": "cublas", "precision": "bf16", "status": "ok"}]}
    if tensor is not None:  # the best bf16 row counts; fp16 and failed rows do not
        gemm["rows"] += [
            {"kernel": "course", "precision": "bf16", "status": "ok", "of_cublas": tensor},
            {"kernel": "course", "precision": "bf16", "status": "ok", "of_cublas": tensor / 2},
            {"kernel": "course", "precision": "fp16", "status": "ok", "of_cublas": 0.99},
            {"kernel": "course", "precision": "bf16", "status": "wrong result"},
        ]
    return {"launch_cost": launch, "streams_graphs": graphs, "tensor_gemm": gemm}


@pytest.mark.parametrize(
    "prepared, correct, graph, tensor, results",
    [
        (3.1, True, 0.9, 0.62, ["pass", "pass", "pass"]),
        (5.2, True, 2.4, 0.45, ["miss", "miss", "miss"]),
        (3.1, False, 0.9, 0.5, ["not measured", "pass", "pass"]),  # a wrong result is never a pass
        (None, True, None, None, ["not measured", "not measured", "not measured"]),
    ],
)
def test_limits_come_from_the_records(prepared, correct, graph, tensor, results):
    verdicts = report.judge_limits(_records(prepared, correct, graph, tensor))
    assert [v.result for v in verdicts] == results
    page = report.render_limits(verdicts)
    assert page.count("**miss**") == results.count("miss")
    if prepared is not None and correct:
        assert f"{prepared:.2f} µs" in page
    if tensor is not None:
        assert f"{100 * tensor:.0f}% of cuBLAS" in page


def test_missing_ceiling_means_not_measured():
    ceilings = _ceilings()
    ceilings["sgemm"] = report.Ceiling("sgemm", "cuBLAS SGEMM", None, "", "CUBLASError: no")
    v = [
        v
        for v in report.judge([_row("sgemm_regblock", 1.0, 30e12, "flops")], ceilings)
        if "sgemm_regblock" in v.target.keys
    ][0]
    assert v.result == "not measured" and "ceiling" in v.detail


def test_report_names_machine_ceilings_rows_and_misses():
    ceilings = _ceilings()
    rows = [
        _row("vector_add_k4", 1e-3, 0.5 * 2e12 * 1e-3),
        _row("sgemm_tiled", None, None, "flops", "failed", "wrong result before timing"),
    ]
    meta = {
        "date": "2030-01-01 00:00 UTC",
        "GPU": "Test GPU (sm_90, 132 SMs)",
        "Driver": "999 (supports CUDA 13.0)",
        "Libraries": "numba-cuda 0.30.4",
        "Python": "3.12",
        "seed": 7,
        "quick": True,
    }
    text = report.render_markdown(meta, ceilings, rows, report.judge(rows, ceilings))
    for phrase in (
        "Test GPU",
        "999",
        "numba-cuda 0.30.4",
        "2030-01-01",
        "2,000 GB/s",
        "50.0 TFLOP/s",
        "| 50% |",
        "**miss**",
        "failed: wrong result before timing",
        "Quick mode",
        "Seed: 7",
        "usual causes",
    ):
        assert phrase in text, phrase


# ---------------------------------------------------------------------------- benchmark: orchestration on the simulator


class _SimBench:
    """bench.run.Bench with NumPy for CuPy and the simulator for the GPU; tiny sizes, no timing loop."""

    def __new__(cls, **overrides):
        from numba import cuda

        from bench import run

        class SimBench(run.Bench):
            def __init__(self):
                self.cp, self.cuda, self.k = np, cuda, K
                self.sizes = run.Sizes(
                    stream_n=300,
                    reduce_n=3000,
                    transpose=40,
                    sgemm=20,
                    repeats=1,
                    batch_seconds=0.0,
                    budget_seconds=0.0,
                )
                self.seed, self.rng, self.sm_count, self.log = 1, np.random.default_rng(1), 2, print

            def nb(self, a):
                return a

            def free(self):
                pass

            def time(self, launch):
                launch()
                return 1e-3, 1

        for name, fn in overrides.items():
            setattr(SimBench, name, fn)
        return SimBench()


@pytest.mark.parametrize(
    "key",
    [
        "copy_kernel",
        "copy_k4",
        "vector_add",
        "vector_add_k4",
        "saxpy",
        "saxpy_k4",
        "transpose_naive",
        "transpose_padded",
        "transpose_padded_fast",
        "transpose_t64",
        "transpose_t64_u",
        "reduction",
        "sgemm_naive",
        "sgemm_tiled",
    ],
)
def test_bench_rows_verify_on_the_simulator(key):
    row = _SimBench().run_kernel(key)
    assert row.status == "ok", row.error
    assert row.seconds == 1e-3 and row.work > 0


def test_bench_wrong_result_and_exception_mark_only_their_rows():
    from bench import run

    def broken_add(self):
        row = report.Row("vector_add", "vector add", "bandwidth", "tiny", work=1.0)
        out = np.zeros(4, np.float32)
        return self._measure(row, lambda: None, lambda: self._stream_check(out, np.ones(4, np.float32)))

    def crash(self):
        raise RuntimeError("CUDA_ERROR_ILLEGAL_ADDRESS")

    bench = _SimBench(k_vector_add=broken_add, k_saxpy=crash)
    rows = run.collect_rows(bench, ["vector_add", "saxpy", "copy_kernel"], _ceilings(), log=lambda s: None)
    assert [r.status for r in rows] == ["failed", "failed", "ok"]
    assert "wrong result before timing" in rows[0].error
    assert "CUDA_ERROR_ILLEGAL_ADDRESS" in rows[1].error


def _run_script(*args, mode="cpu"):
    env = dict(os.environ, COURSE_MODE=mode)
    env.pop("NUMBA_ENABLE_CUDASIM", None)
    return subprocess.run(
        [sys.executable, str(ROOT / "bench" / "run.py"), *args], capture_output=True, text=True, env=env, timeout=120
    )


def test_bench_help_and_cpu_mode_exit():
    h = _run_script("--help")
    assert h.returncode == 0 and "--quick" in h.stdout and "--out" in h.stdout
    r = _run_script("--quick")
    assert r.returncode == 2
    lines = [line for line in (r.stdout + r.stderr).splitlines() if line.strip()]
    assert len(lines) == 1 and "needs an NVIDIA GPU" in lines[0], lines
    bad = _run_script("--only", "nonsense")
    assert bad.returncode == 2 and "unknown kernel" in bad.stderr


# ----------------------------------------------------------------------------- bench/interop.py


def test_bench_interop_refuses_cpu_mode_plainly(tmp_path):
    out = tmp_path / "frag.md"
    env = dict(os.environ, COURSE_MODE="cpu")
    r = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "interop.py"), "--out", str(out)],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        cwd=ROOT,
    )
    assert r.returncode == 2 and "needs a GPU" in r.stderr and "Traceback" not in r.stderr
    assert not out.exists()
