"""CUDA C answers in CPU mode: run through helpers.ptx, never a green tick for numbers not run.

Covers the "unchecked" status (an instruction the CPU runner refuses), the PtxRun -> Trace
adapter's sentences, and a small shared-memory block sum (race, missing __syncthreads()) checked
through the same CudaCExercise path as the notebook exercises.
"""

import numpy as np
import pytest

import helpers
from helpers import ptx
from helpers.exercises import progress
from helpers.exercises.libraries import CudaCExercise
from helpers.grading import report
from helpers.problems import nb08

pytestmark = pytest.mark.skipif(helpers.on_gpu(), reason="CPU-mode behaviour")


@pytest.fixture(autouse=True)
def _progress(tmp_path, monkeypatch):
    monkeypatch.setenv("COURSE_PROGRESS_FILE", str(tmp_path / "progress.json"))


BLOCK_SUM = r"""
extern "C" __global__ void block_sum(const float* x, float* out, int n)
{
    __shared__ float s[128];
    int t = threadIdx.x, i = blockIdx.x * blockDim.x + t;
    s[t] = i < n ? x[i] : 0.0f;
    __syncthreads();
    for (int k = 64; k > 0; k >>= 1) {
        if (t < k) s[t] += s[t + k];
        __syncthreads();
    }
    if (t == 0) out[blockIdx.x] = s[0];
}
"""


def _sum_inputs(rng):
    n = 128 * 3 + 37
    return {"x": rng.uniform(-1, 1, n).astype(np.float32), "n": np.int32(n)}


def _sums(v):
    x = np.concatenate([v["x"], np.zeros(-len(v["x"]) % 128, np.float32)])
    return x.reshape(-1, 128).sum(axis=1, dtype=np.float64).astype(np.float32)


block_sum = CudaCExercise(
    prompt="block sums through shared memory",
    kind="raw",
    kernel="block_sum",
    c_params="const float* x, float* out, int n",
    reference=BLOCK_SUM,
    block=128,  # __shared__ float s[128]
    make_inputs=_sum_inputs,
    oracle=_sums,
    output="out",
)
block_sum.name = "test_block_sum"


def test_block_sum_reference_passes():
    r = block_sum.grade(BLOCK_SUM, seed=1)
    assert r.status == "passed" and r.metrics["numbers_checked"], r.line()


@pytest.mark.parametrize(
    "wrong,says",
    [
        (BLOCK_SUM.replace("        __syncthreads();\n    }", "    }"), "Race on shared s"),
        (BLOCK_SUM.replace("    __syncthreads();\n    for", "    for"), "Race on shared s"),
        (BLOCK_SUM.replace("if (t < k) s[t] += s[t + k];", "s[t] += s[t + k];"), "Out of bounds"),
        (BLOCK_SUM.replace("        __syncthreads();\n    }", "        if (t < k) __syncthreads();\n    }"), "barrier"),
    ],
    ids=["no sync in loop", "no sync after load", "read past shared", "divergent barrier"],
)
def test_block_sum_mistakes_fail_with_their_sentence(wrong, says):
    r = block_sum.grade(wrong, seed=1)
    assert r.status == "failed" and says in r.message, r.line()


def test_refused_instruction_is_unchecked_not_passed(monkeypatch):
    from helpers.errors import UnsupportedByTracer

    def refuse(*a, **k):
        raise UnsupportedByTracer("The CPU runner of CUDA C does not know the PTX instruction `tex.2d`.")

    monkeypatch.setattr(ptx, "run", refuse)
    r = nb08.clamp.grade(nb08.clamp.reference, seed=1)
    assert r.status == "unchecked" and not r.passed and r.points == 0, r.line()
    assert "tex.2d" in r.message and "run this check on a GPU" in r.message
    assert r.line().startswith("?")
    progress.record_result(nb08.clamp.id, r)
    row = next(x for x in progress.rows([nb08.clamp]) if x["exercise"] == nb08.clamp.id)
    assert row["status"] == "unchecked" and row["points"].startswith("0/")


def test_exercise_without_cpu_runner_is_unchecked():
    ex = CudaCExercise(prompt="p", kind="raw", kernel="block_sum", c_params=block_sum.c_params, reference=BLOCK_SUM)
    ex.name = "test_no_runner"
    r = ex.grade(BLOCK_SUM, seed=1)
    assert r.status == "unchecked" and "GPU" in r.message


def test_grader_shows_unchecked_as_not_passed():
    recs = [
        {
            "student": "s",
            "notebook": "08",
            "outcome": "completed",
            "exercises": [{"exercise": "nb08.clamp", "status": "unchecked"}],
        },
    ]
    assert report.scored(recs, {"nb08.clamp": 1.0})[0]["points"] == 0.0
    assert report.MARK["unchecked"] != report.MARK["passed"] and report.STATUS_WORDS["unchecked"] == "unchecked"


def test_trace_adapter_gives_c_sentences():
    n = 200
    x, out = np.ones(n, np.float32), np.full(n, np.nan, np.float32)
    src = BLOCK_SUM.replace("s[t] = i < n ? x[i] : 0.0f;", "s[t] = x[i - 1];")
    t = ptx.trace(src, "block_sum", 2, 128, x, out, np.int32(n), outputs=("out",))
    oob = [v for v in t.verdicts if v.kind == "out_of_bounds"]
    assert oob and "negative: in CUDA C that is out of bounds" in oob[0].message
    assert "`s[t] = x[i - 1];`" in oob[0].message
    assert t.metrics is not None and len(t.accesses) > 0


def test_trace_adapter_names_stray_addresses_and_warp_misuse():
    from helpers.tracer import Trace

    r = ptx.run(BLOCK_SUM, "block_sum", 1, 32, (np.ones(32, np.float32), np.zeros(1, np.float32), np.int32(32)))
    code = r.locations[0].code
    r.out_of_bounds = [(-1, (0x10,), 0, (3, 0), code, 4)]
    r.warp_misuse = [
        {"block": 0, "warp": 0, "lane": 3, "mask": 0xF, "line": 4, "code": code, "what": "__shfl_down_sync",
         "missing": [1, 2], "exited": [], "why": "lanes named in the mask did not arrive"}
    ]  # fmt: skip
    t = ptx.to_trace(r)
    assert isinstance(t, Trace)
    kinds = {v.kind: v.message for v in t.verdicts}
    assert "none of the kernel's arrays" in kinds["out_of_bounds"]
    assert "__shfl_down_sync" in kinds["warp_misuse"] and "0x0000000f" in kinds["warp_misuse"]


def test_signature_keeps_const_and_pointer_order():
    swapped = nb08.clamp.reference.replace("const float* x, float* y", "float* y, const float* x")
    assert "parameters are wrong" in nb08.clamp.grade(swapped, seed=1).message
    no_const = nb08.clamp.reference.replace("const float* x", "float* x")
    assert "parameters are wrong" in nb08.clamp.grade(no_const, seed=1).message


def test_scalars_packed_as_the_library_would():
    from helpers.exercises.cuda_run import pack
    from helpers.problems import nb09

    v = nb09.lincomb.make_inputs(np.random.default_rng(0))
    args, _, _ = pack(nb09.lincomb, v, np.zeros(5, np.float32), len(v["x"]))
    assert type(args[0]) is np.float32 and type(args[-1]) is np.uint64  # PyCUDA: numpy scalars, n unsigned long
    v = nb08.leaky_relu.make_inputs(np.random.default_rng(0))
    assert isinstance(v["alpha"], float)  # CuPy takes a Python float and casts it to float32
    args, _, _ = pack(nb08.leaky_relu, v, np.zeros(5, np.float32), len(v["x"]))
    assert args[1].dtype == np.float32 and type(args[-1]) is np.int64
