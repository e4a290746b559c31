"""Notebook 17's claims, checked against the installed numba-cuda and cuda.core sources and the benchmark's record,
and the pointer that sends notebook 04's learner to it for warp divergence (it used to name notebook 07, which
never taught it).

Read as text, not imported: the test process runs numba-cuda's simulator, whose `cuda` is not the real module.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[2]
FOLDERS = ("solutions", "notebooks")
NUMBA_CUDA = next((ROOT / ".venv" / "lib").glob("python3*/site-packages/numba_cuda/numba/cuda"), None)
RECORD = ROOT / "docs" / "data" / "warp_divergence.json"
needs_numba_source = pytest.mark.skipif(NUMBA_CUDA is None, reason="numba-cuda's source is not in .venv")


def _markdown(folder: str, number: str) -> str:
    path = next((ROOT / folder).glob(f"{number}_*.ipynb"))
    nb = nbformat.read(path, as_version=4)
    return re.sub(r"\s+", " ", "\n".join(c.source for c in nb.cells if c.cell_type == "markdown"))


def _source(rel: str) -> str:
    return (NUMBA_CUDA / rel).read_text()


@pytest.mark.parametrize("folder", FOLDERS)
def test_notebook_04_sends_warp_divergence_to_notebook_17(folder):
    pointers = re.findall(r"warp divergence[^()]{0,80}?notebook (\d\d)", _markdown(folder, "04"), re.I)
    assert pointers == ["17"], pointers
    text = _markdown(folder, "17")
    assert "## 1. Divergence" in text and "bench/warp_divergence.py" in text


@pytest.mark.parametrize("folder", FOLDERS)
def test_the_divergence_figures_are_the_record_or_none(folder):
    text = _markdown(folder, "17")
    if not RECORD.exists():
        assert "it has not been made on a GPU yet, so no figure is quoted here" in text
        assert not re.search(r"\d\.\d+ ?ms|\d(\.\d+)?× as long", text)
        return
    record = json.loads(RECORD.read_text())
    gpu = record["machine"]["GPU"].split(" (")[0]
    assert f"(`docs/data/warp_divergence.json`, an {gpu})" in text
    assert f"{record['by_lane_over_by_warp']:.1f}× as long" in text
    assert "has not been made on a GPU yet" not in text


@needs_numba_source
def test_the_simulator_has_no_warp_calls_and_one_block_cooperative_grids():
    api = _source("simulator/kernelapi.py")
    for call in ("shfl_sync", "shfl_up_sync", "shfl_down_sync", "ballot_sync", "syncwarp", "match_any_sync"):
        assert f"def {call}" not in api and call not in api, call
    assert "only support cooperative grids with one" in api
    kernel = _source("simulator/kernel.py")
    body = kernel.split("def max_cooperative_grid_blocks", 1)[1].split("\n\n", 1)[0]
    assert "return 1" in body


@needs_numba_source
def test_numba_launches_grid_sync_kernels_cooperatively_and_reports_the_block_limit():
    assert "this_grid" in _source("cg.py") and "use_cooperative = True" in _source("cg.py")
    dispatcher = _source("dispatcher.py")
    assert "self.cooperative = lib.use_cooperative" in dispatcher
    assert "is_cooperative=self.cooperative" in dispatcher  # cuda.core's LaunchConfig
    assert "lib.needs_cudadevrt = True" in dispatcher  # "links CUDA's device runtime"
    kernel_class = dispatcher.split("class _Kernel", 1)[1].split("\nclass ", 1)[0]
    assert "def max_cooperative_grid_blocks(self, blockdim, dynsmemsize=0)" in kernel_class


@needs_numba_source
def test_numba_has_no_cluster_launch_only_the_launch_bounds_hint():
    mentions = set()
    for path in NUMBA_CUDA.rglob("*.py"):
        rel = path.relative_to(NUMBA_CUDA).as_posix()
        if rel.startswith(("tests/", "cloudpickle/")):
            continue
        if re.search(r"cluster", path.read_text(errors="replace"), re.I):
            mentions.add(rel)
    assert mentions == {"decorators.py", "compiler.py", "cudadrv/nvvm.py"}, mentions
    assert "The maximum number of blocks per cluster." in _source("decorators.py")  # launch_bounds' third item


@needs_numba_source
def test_numba_has_only_the_sync_forms_and_shfl_up_returns_its_own_value_outside_the_warp():
    intrinsics, stubs = _source("intrinsics.py"), _source("stubs.py")
    for old in ("shfl", "ballot", "any", "all"):
        assert not re.search(rf"^(def|class) {old}\b", intrinsics + stubs, re.M), old
    shfl_up = intrinsics.split("def shfl_up_sync", 1)[1].split('"""', 2)[1]
    assert "If this is outside the warp, then the given value is" in shfl_up
    ballot = intrinsics.split("def ballot_sync", 1)[1].split("\ndef ", 1)[0]
    assert "sig_outer = signature(types.i4, mask_type, predicate_type)" in ballot  # "Numba types it int32"


def test_cuda_core_grid_counts_clusters_when_a_cluster_is_given():
    from cuda.core import LaunchConfig

    doc = re.sub(r"\s+", " ", LaunchConfig.__doc__)
    assert "When cluster is specified, the grid parameter represents the number of clusters (not blocks)" in doc


def test_nvrtc_has_no_unmasked_shuffle_any_more():
    from helpers import cuda_c

    src = 'extern "C" __global__ void k(int* a) {{ int v = a[threadIdx.x]; a[threadIdx.x] = {}; }}'
    with pytest.raises(cuda_c.CompileError, match='identifier "__shfl_down" is undefined'):
        cuda_c.compile(src.format("__shfl_down(v, 1)"), target="ptx", arch="sm_90")
    assert b"shfl.sync.down" in cuda_c.compile(src.format("__shfl_down_sync(0xffffffffu, v, 1)"), arch="sm_90")
