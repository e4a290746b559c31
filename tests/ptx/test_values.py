"""helpers/ptx/values.py: a global's initialiser keeps its bits, and kernels that include the CUDA headers whose
globals are initialised that way (cooperative_groups.h pulls in cuda::std) run; clusters are refused in a sentence."""

from __future__ import annotations

import numpy as np
import pytest

from helpers.errors import UnsupportedByTracer
from helpers.ptx.values import init_bytes

pytest.importorskip("cuda.bindings.nvrtc")


def test_a_negative_literal_in_an_unsigned_global_keeps_its_twos_complement_bits():
    assert init_bytes([-125], np.uint32).view(np.uint32)[0] == 2**32 - 125
    assert list(init_bytes([1, -1], np.int16).view(np.int16)) == [1, -1]
    assert init_bytes([2**64 - 1], np.uint64).view(np.uint64)[0] == 2**64 - 1
    assert init_bytes([1.5, -2.25], np.float32).view(np.float32).tolist() == [1.5, -2.25]


BLOCK_SUM = r"""
#include <cooperative_groups.h>
namespace cg = cooperative_groups;

extern "C" __global__ void %s(const float* x, float* out, int n)
{
    cg::thread_block block = cg::this_thread_block();
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = 2.0f * x[i];
    block.sync();
    %s
}
"""


def test_a_kernel_including_cooperative_groups_runs_and_a_cluster_is_refused():
    from helpers.ptx import run

    x = np.arange(70, dtype=np.float32)
    out = np.zeros_like(x)
    run(BLOCK_SUM % ("twice", ""), "twice", 3, 32, (x, out, np.int32(70)))
    assert np.array_equal(out, 2 * x)
    cluster = "cg::this_cluster().sync();"
    with pytest.raises(UnsupportedByTracer, match=r"barrier\.cluster.*run this kernel on a GPU"):
        run(BLOCK_SUM % ("twice_in_clusters", cluster), "twice_in_clusters", 3, 32, (x, out, np.int32(70)))
