"""bench/streaming.py and bench/streaming_kernels.py in CPU mode: the k-elements-per-thread
kernels trace clean and compute the right numbers for sizes that are not a multiple of a
block's tile, and the PTX Numba's real compiler makes for them has k independent 32-bit loads
and no local memory (what the benchmark's explanation rests on)."""

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
from numba import cuda

from bench import streaming, timing
from bench import streaming_kernels as SK
from helpers.tracer import trace

ROOT = Path(__file__).resolve().parents[2]
RNG = np.random.default_rng(3)


def _clean(t):
    assert t.verdicts == [], [str(v) for v in t.verdicts]


@pytest.mark.parametrize("k", streaming.KS)
def test_k_per_thread_kernels_trace_clean_and_right(k):
    n = 1000  # not a multiple of 64 * k: the last block's tile is partly outside
    x, y = RNG.random(n, dtype=np.float32), RNG.random(n, dtype=np.float32)
    grid, block = SK.tile_launch(n, k, 64)
    out = np.zeros(n, np.float32)
    _clean(trace(SK.make_copy(k), grid, block, x, out, outputs=("dst",)))
    np.testing.assert_array_equal(out, x)
    out = np.zeros(n, np.float32)
    _clean(trace(SK.make_vector_add(k), grid, block, x, y, out, outputs=("out",)))
    np.testing.assert_allclose(out, x + y, rtol=1e-6)
    out = np.zeros(n, np.float32)
    _clean(trace(SK.make_saxpy(k), grid, block, np.float32(1.5), x, y, out, outputs=("out",)))
    np.testing.assert_allclose(out, np.float32(1.5) * x + y, rtol=1e-6)


def test_grid_stride_and_64_bit_copies_are_right():
    n = 1000
    x = RNG.random(n, dtype=np.float32)
    out = np.zeros(n, np.float32)
    _clean(trace(SK.copy_grid_stride, (3,), (64,), x, out, outputs=("dst",)))  # fewer threads than elements
    np.testing.assert_array_equal(out, x)
    out = np.zeros(n, np.float32)
    grid, block = SK.tile_launch(n // 2, 4, 64)
    _clean(trace(SK.make_copy_u64(4), grid, block, x.view(np.uint64), out.view(np.uint64), outputs=("dst",)))
    np.testing.assert_array_equal(out, x)


def test_a_tile_launch_covers_every_element():
    for n, k, t in ((1, 4, 256), (256 * 4, 4, 256), (256 * 4 + 1, 4, 256), (10**6, 8, 128)):
        (blocks,), (threads,) = SK.tile_launch(n, k, t)
        assert blocks * threads * k >= n > (blocks - 1) * threads * k


def test_record_name_per_gpu_kind():
    assert timing.slug("NVIDIA H200") == "h200"
    assert timing.slug("NVIDIA H100 80GB HBM3") == "h100-80gb"
    assert timing.slug("") == "gpu"


def test_the_script_refuses_cpu_mode_plainly():
    env = {**os.environ, "COURSE_MODE": "cpu"}
    r = subprocess.run([sys.executable, "bench/streaming.py"], cwd=ROOT, env=env, capture_output=True, text=True)
    assert r.returncode == 2 and "needs an NVIDIA GPU" in r.stdout and "Traceback" not in r.stderr


PTX = textwrap.dedent(
    """
    import json, re, sys
    import numpy as np
    sys.path.insert(0, sys.argv[1])
    from numba import cuda, float32, complex128, from_dtype
    from numba.cuda import compile_ptx
    from bench import streaming_kernels as SK

    def accesses(fn, sig):
        ptx, _ = compile_ptx(fn, sig, cc=(9, 0))
        return {"ld": re.findall(r"ld\\.global\\.[\\w.]+", ptx), "local": len(re.findall(r"\\.local", ptx))}

    def copy(src, dst):
        i = cuda.grid(1)
        if i < dst.size:
            dst[i] = src[i]

    rec = from_dtype(np.dtype([(c, np.float32) for c in "abcd"], align=True))
    out = {f"k{k}": accesses(SK.make_copy(k).py_func, (float32[::1], float32[::1])) for k in (1, 4, 8)}
    out["complex128"] = accesses(copy, (complex128[::1], complex128[::1]))
    out["record4"] = accesses(copy, (rec[::1], rec[::1]))
    for u in (False, True):  # the transpose with signed and with unsigned indices: instructions, selects
        mat = float32[:, ::1]
        ptx, _ = compile_ptx(SK.make_transpose(64, 8, unsigned=u).py_func, (mat, mat), cc=(9, 0))
        ops = [ln.split()[0] for ln in ptx.splitlines() if ln.startswith("\t") and ln.strip()[0] not in "/.{}$"]
        out[f"transpose_unsigned_{u}"] = [len(ops), sum(op.startswith("selp") for op in ops)]
    print(json.dumps(out))
    """
)


def test_numba_ptx_has_k_loads_and_none_wider_than_64_bits():
    """What notebook 07 says about load width, checked on numba-cuda's real compiler: k separate
    ld.global.f32 in registers (no local memory), and neither a complex128 nor a 16-byte record
    becomes a 128-bit load."""
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_ENABLE_CUDASIM"}
    r = subprocess.run([sys.executable, "-c", PTX, str(ROOT)], env=env, capture_output=True, text=True, timeout=300)
    if r.returncode and "nvvm" in r.stderr.lower():
        pytest.skip("no NVVM here (the nvidia-nvvm wheel is not installed): Numba's compiler cannot run")
    assert r.returncode == 0, r.stderr[-2000:]
    got = json.loads(r.stdout.strip().splitlines()[-1])
    for k in (1, 4, 8):
        assert got[f"k{k}"] == {"ld": ["ld.global.f32"] * k, "local": 0}
    assert set(got["complex128"]["ld"]) == {"ld.global.f64"}
    assert not any(".v4" in ld or ".v2" in ld or "b128" in ld for ld in got["record4"]["ld"])
    # make_transpose's docstring: a signed index costs a wrap-around select per access, 663 against 250
    assert got["transpose_unsigned_False"] == [663, 45] and got["transpose_unsigned_True"] == [250, 0]


class _SimTimer:
    """bench.timing.Timer with NumPy for CuPy and the simulator for the GPU: tiny sizes, no timing loop."""

    def __init__(self, stream_n=1000, transpose=70):
        from numba import cuda

        from bench.timing import Sizes

        self.cp, self.cuda, self.sm_count = np, cuda, 2
        self.sizes = Sizes(stream_n, 0, transpose, 0, 1, 0.0, 0.0)
        self.rng = np.random.default_rng(5)

    def rand(self, shape):
        return self.rng.random(shape, dtype=np.float32) * np.float32(2) - np.float32(1)

    def nb(self, a):
        return a

    def time(self, launch):
        launch()
        return 1e-3, 1


def test_every_variant_verifies_on_the_simulator():
    """Each variant's result is checked the way the GPU run checks it (a SAXPY's fused multiply-add
    differs from NumPy's by an ulp and must still pass)."""
    variants = streaming.measure(_SimTimer(), streaming.plan(), ceiling=1e9, log=lambda s: None)
    assert {v.status for v in variants} == {"ok"}, [(v.key, v.error) for v in variants if v.status != "ok"]
    assert {v.kernel for v in variants} == {"copy", "vector_add", "saxpy", "transpose"}


@cuda.jit
def forgets_a(a, x, y, out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = x[i] + y[i]


def test_a_wrong_kernel_is_recorded_failed_never_timed(monkeypatch):
    monkeypatch.setattr(SK, "make_saxpy", lambda k: forgets_a)  # a wrong result
    monkeypatch.setattr(SK, "make_copy", lambda k: SK.make_vector_add(k))  # the wrong arguments: raises
    picked = [v for v in streaming.plan() if v.key in ("copy_k1", "saxpy_k1", "vector_add_k1")]
    got = {v.key: (v.status, v.error, v.gb_per_s) for v in streaming.measure(_SimTimer(), picked, 1e9, log=print)}
    assert got["saxpy_k1"] == ("failed", "wrong result before timing", None)
    assert got["copy_k1"][0] == "failed" and got["copy_k1"][2] is None
    assert got["vector_add_k1"][0] == "ok"


HEADER = "ID,Process ID,Process Name,Host Name,Kernel Name,Context,Stream,Block Size,Grid Size,Device,CC,"
HEADER += "Section Name,Metric Name,Metric Unit,Metric Value"


def _ncu_row(launch, metric, value):
    cells = [launch, "1", "python3", "h", "copy_k", "1", "7", "(256, 1, 1)", "(4, 1, 1)", "0", "9.0", "metrics"]
    return ",".join(f'"{c}"' for c in [*cells, metric, "-", value])


NCU_CSV = "\n".join(
    [
        "==PROF== Connected to process 1",
        ",".join(f'"{h}"' for h in HEADER.split(",")),
        _ncu_row("0", "dram__throughput.avg.pct_of_peak_sustained_elapsed", "64.67"),
        _ncu_row("0", "smsp__inst_executed_op_global_ld.sum", "2,097,152"),
        _ncu_row("1", "dram__throughput.avg.pct_of_peak_sustained_elapsed", "81.22"),
        _ncu_row("1", "gpu__time_duration.sum", "12"),
    ]
)


def test_ncu_figures_attach_to_the_variants_in_launch_order():
    record = {"variants": [{"key": "copy_k1"}, {"key": "copy_k2"}]}
    streaming.attach_ncu(record, NCU_CSV)
    assert record["variants"][0]["ncu"] == {
        "DRAM throughput % of peak": 64.67,
        "global load instructions (warp)": 2097152.0,
    }
    assert record["variants"][1]["ncu"] == {"DRAM throughput % of peak": 81.22}
    with pytest.raises(ValueError, match="2 kernel launches for 3 variants"):
        streaming.attach_ncu({"variants": [{}, {}, {}]}, NCU_CSV)


def test_records_name_the_host_cpu(tmp_path):
    """Launch costs and CPU baselines depend on the host: every record's machine names its CPU."""
    info = tmp_path / "cpuinfo"
    info.write_text("processor\t: 0\nmodel name\t: Example CPU 9000\nprocessor\t: 1\nmodel name\t: Example CPU 9000\n")
    assert timing.host_cpu(str(info)) == f"Example CPU 9000 x {os.cpu_count()}"
    assert timing.host_cpu(str(tmp_path / "missing")).endswith(f" x {os.cpu_count()}")


def test_ncu_profiles_exactly_the_variants_kernels():
    """make bench runs bench/streaming.py --once under ncu with ncu_args(): its kernel filter must take every
    variant's kernel (attach_ncu refuses a CSV with a different count) and no other."""
    import re

    t = _SimTimer()
    n, s = t.sizes.stream_n, t.sizes.transpose
    x, m = t.rand(n), t.rand((s, s))
    data = {"x": x, "out": np.zeros(n, np.float32), "a": np.float32(2), "x_": x, "y_": x, "out_": x}
    data.update(m=m, mt=m.copy(), m_=m, mt_=m.copy())
    pattern = streaming.NCU_KERNELS.removeprefix("regex:")
    names = {streaming._setup(t, v, data)[0].py_func.__name__ for v in streaming.plan()}
    assert all(re.search(pattern, name) for name in names), names
    assert not re.search(pattern, "cupy_random_x_mod_1") and not re.search(pattern, "gen_sequenced")
    assert streaming.ncu_args().split()[-1] == ",".join(streaming.NCU_METRICS)
