"""bench/tensor_gemm.py without a GPU: the bf16/fp16 rounding it feeds the tensor cores, the launch
geometry of each variant, and that every variant's CUDA C compiles for Hopper with NVRTC."""

import numpy as np
import pytest

from bench import tensor_gemm as tg


def test_bf16_rounds_to_nearest_even():
    x = np.array([1.0, 1.0 + 2**-8, 1.0 + 3 * 2**-8, 1.0 + 2**-8 + 2**-20, -2.5], dtype=np.float32)
    back = tg.from_bits(np, tg.to_bits(np, x, "bf16"), "bf16")
    # 1 + 2^-8 is halfway between 1 and 1 + 2^-7 (bf16 keeps 7 mantissa bits): a tie goes to the even
    # mantissa, 1.0; 1 + 3 * 2^-8 is a tie between 1 + 2^-7 and 1 + 2^-6: to 1 + 2^-6; above a tie, up.
    assert back.tolist() == [1.0, 1.0, 1.0 + 2**-6, 1.0 + 2**-7, -2.5]


def test_bf16_error_is_within_half_a_unit_in_the_last_place():
    x = np.random.default_rng(1).uniform(-1, 1, 10_000).astype(np.float32)
    back = tg.from_bits(np, tg.to_bits(np, x, "bf16"), "bf16")
    assert np.max(np.abs(back - x) / np.abs(x)) <= 2.0**-8


def test_fp16_goes_through_numpys_half():
    x = np.array([0.1, 65504.0, 1e-8], dtype=np.float32)
    np.testing.assert_array_equal(tg.from_bits(np, tg.to_bits(np, x, "fp16"), "fp16"), x.astype(np.float16))


@pytest.mark.parametrize("label, macros", tg.VARIANTS)
def test_each_variant_has_whole_warps_and_fits_shared_memory(label, macros):
    assert tg.threads(macros) % 32 == 0 and tg.threads(macros) <= 1024
    assert tg.shared_bytes(macros) <= 227 * 1024  # Hopper's opt-in limit per block
    assert macros["WM"] % 16 == 0 and macros["WN"] % 16 == 0  # m16 tiles, pairs of n8 tiles per ldmatrix


@pytest.mark.parametrize("precision", ["bf16", "fp16"])
@pytest.mark.parametrize("label, macros", tg.VARIANTS)
def test_each_variant_compiles_for_hopper(label, macros, precision):
    from helpers import cuda_c

    defs = [f"-D{k}={v}" for k, v in macros.items()] + (["-DHALF=1"] if precision == "fp16" else [])
    text = cuda_c.compile(tg.SOURCE.read_text(), target="ptx", arch="sm_90", options=tuple(defs)).decode()
    cubin = cuda_c.compile(tg.SOURCE.read_text(), target="cubin", arch="sm_90", options=tuple(defs))
    assert cuda_c.cubin_arch(cubin) == "sm_90"  # what the benchmark loads
    t = {"bf16": "bf16", "fp16": "f16"}[precision]  # PTX's name of the type
    assert f"mma.sync.aligned.m16n8k16.row.col.f32.{t}.{t}.f32" in text
    assert "ldmatrix.sync.aligned.m8n8.x4" in text and "cp.async.cg.shared.global" in text


@pytest.mark.parametrize("label, macros", tg.WGMMA_VARIANTS)
def test_each_wgmma_variant_fits_and_divides_the_benchmark_size(label, macros):
    bm, bn, bk = tg.tile(macros)
    assert tg.threads(macros) == 128 * macros["WGS"] and bm == 64 * macros["WGS"] and bk == 64
    # the ring plus the 1024 bytes the kernel may skip to align it, within Hopper's opt-in limit per block
    assert tg.shared_bytes(macros) == macros["STAGES"] * (bm + bn) * 64 * 2 + 1024 <= 227 * 1024
    assert 8192 % bm == 0 and 8192 % bn == 0  # the size bench/tensor_gemm.py times
    assert macros["STAGES"] - 1 - macros["INFLIGHT"] >= 1  # at least one k-tile loaded ahead


@pytest.mark.parametrize("precision", ["bf16", "fp16"])
@pytest.mark.parametrize("label, macros", tg.WGMMA_VARIANTS)
def test_each_wgmma_variant_compiles_for_sm_90a(label, macros, precision):
    from helpers import cuda_c

    defs = [f"-D{k}={v}" for k, v in macros.items()] + (["-DHALF=1"] if precision == "fp16" else [])
    text = cuda_c.compile(tg.WGMMA_SOURCE.read_text(), target="ptx", arch="sm_90a", options=tuple(defs)).decode()
    t = {"bf16": "bf16", "fp16": "f16"}[precision]
    assert f"wgmma.mma_async.sync.aligned.m64n{macros['BN']}k16.f32.{t}.{t}" in text
    # cp.async writes through the generic proxy, wgmma reads through the async proxy: the fence between them
    assert "fence.proxy.async.shared::cta" in text and "cp.async.cg.shared.global" in text
    assert f"wgmma.wait_group.sync.aligned {macros['INFLIGHT']}" in text


def test_wgmma_needs_the_architecture_specific_target():
    """wgmma exists on sm_90a only: compile_kernel asks for it, and plain sm_90 refuses the kernel."""
    from helpers import cuda_c

    with pytest.raises(cuda_c.CompileError, match=r"wgmma.* not supported on .target 'sm_90'"):
        cuda_c.compile(tg.WGMMA_SOURCE.read_text(), target="cubin", arch="sm_90")
    assert cuda_c.compile(tg.WGMMA_SOURCE.read_text(), target="cubin", arch="sm_90a")


def test_the_report_table_has_every_row_and_says_why_one_failed():
    """make bench appends tensor_gemm.markdown to the report: a row per kernel, a share only where cuBLAS ran."""
    record = {
        "size": 8192,
        "rows": [
            {"name": "cuBLAS bf16", "status": "ok", "tflops": 741.5, "error_vs_fp64_of_fp32_inputs": 1.4e-4},
            {
                "name": "course wgmma bf16, 128x256x64 tile",
                "status": "ok",
                "tflops": 541.9,
                "of_cublas": 0.7309,
                "registers": 174,
                "blocks_per_sm": 1,
                "error_vs_fp64_of_fp32_inputs": 1.4e-4,
            },
            {"name": "course wgmma bf16, 192x128x64 tile", "status": "failed", "error": "ValueError: the size"},
        ],
    }
    lines = tg.markdown(record).splitlines()
    assert lines[0] == "## Tensor-core GEMM, 8192³ (`bench/tensor_gemm.py`)"
    assert "| cuBLAS bf16 | 741.5 | — | — | — | 1.4e-04 |" in lines
    assert "| course wgmma bf16, 128x256x64 tile | 541.9 | 73 % | 174 | 1 | 1.4e-04 |" in lines
    assert "| course wgmma bf16, 192x128x64 tile | failed: ValueError: the size | | | | |" in lines
