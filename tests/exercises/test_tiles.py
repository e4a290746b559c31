"""helpers.exercises.tiles: a tile-kernel exercise names a wrong answer by the output it matches, refuses what
is not CUDA C in one sentence, and passes the reference run from its PTX (nb18.wmma_gemm is the course's one)."""

from __future__ import annotations

import numpy as np

from helpers.exercises.tiles import TileKernelExercise
from helpers.problems import nb18


def _values():
    return nb18._inputs(np.random.default_rng(0), False)[0]


def test_a_known_mistake_gets_its_sentence_and_anything_else_the_first_wrong_element():
    ex = TileKernelExercise(oracle=nb18._gemm, mistakes=((nb18._no_c, "no C here."),))
    v = _values()
    assert ex._judge(v, nb18._no_c(v), "here", "x").message == "no C here."
    got = nb18._gemm(v)
    got[17, 3] += 1
    g = ex._judge(v, got, "here", "x")
    assert g.status == "failed" and g.message.startswith("C[17, 3] is ") and "tile row 1, column 0" in g.message
    assert ex._judge(v, nb18._gemm(v), "here", "x").status == "passed"


def test_an_answer_that_is_not_a_string_is_refused_in_one_sentence():
    r = nb18.wmma_gemm.grade(42)
    assert r.status == "failed" and "give the CUDA C as a string, not int" in r.message


def test_the_reference_passes_run_from_its_ptx(monkeypatch):
    from helpers import env

    monkeypatch.setattr(env, "on_gpu", lambda: False)  # the interpreter's run, in either mode
    r = nb18.wmma_gemm.grade(nb18._WMMA_GEMM_SRC, seed=1)
    assert r.status == "passed" and "M = 32, N = 48, K = 64" in r.message and "K = 32784" in r.message


class GarbageRegisters:
    """A stand-in GPU for the tile kernel: the answer runs from its PTX on the interpreter, but an accumulator
    never given a value holds garbage (as a GPU's registers do, different on every run) instead of zeros."""

    def __init__(self):
        from helpers.exercises.executor import LOCAL

        self.compile_cuda, self.launched = LOCAL.compile_cuda, 0

    def launch_cuda_c(self, runner, answer, values, block):
        from helpers import ptx

        self.launched += 1
        M, N, K = (int(values[k]) for k in ("M", "N", "K"))
        c = values["c"].copy()
        args = (values["a"], values["b"], c, np.int32(M), np.int32(N), np.int32(K))
        ptx.run(answer, values["kernel"], (N // 16, M // 16), 32, args, nvrtc=self.compile_cuda)
        if "load_matrix_sync(acc" not in answer and "fill_fragment(acc" not in answer:
            c += np.float32(1e30) * (np.arange(c.size).reshape(c.shape) % 3)  # what uninitialised registers held
        return c, True


def test_wrong_gpu_numbers_of_an_unset_accumulator_are_named_by_the_interpreter(monkeypatch):
    from helpers import env

    monkeypatch.setattr(env, "on_gpu", lambda: True)
    unset = nb18._WMMA_GEMM_SRC.replace(next(x for x in nb18._WMMA_GEMM_SRC.splitlines() if "(acc, c_tile" in x), "")
    gpu = GarbageRegisters()
    got = nb18.wmma_gemm.grade(unset, seed=1, executor=gpu)
    assert got.status == "failed" and "the accumulator must start from C" in got.message, got.line()
    assert gpu.launched == 1
    # a wrong answer the interpreter does not name keeps the GPU's own sentence: the first wrong element
    short = nb18._WMMA_GEMM_SRC.replace("k < K; k += 16", "k < K - 16; k += 16")
    got = nb18.wmma_gemm.grade(short, seed=1, executor=GarbageRegisters())
    assert got.status == "failed" and got.message.startswith("C[") and "M = 128" not in got.message, got.line()
    # right answers pass on the stand-in GPU, at the GPU's sizes
    got = nb18.wmma_gemm.grade(nb18._WMMA_GEMM_SRC, seed=1, executor=GarbageRegisters())
    assert got.status == "passed" and "on the GPU (6 x 8 blocks of one warp, M = 128" in got.message, got.line()


def test_a_kernel_that_never_ends_or_strays_is_stopped_by_the_interpreter_and_never_launched(monkeypatch):
    from helpers import env

    monkeypatch.setattr(env, "on_gpu", lambda: True)
    gpu = GarbageRegisters()
    endless = nb18._WMMA_GEMM_SRC.replace("k < K; k += 16", "k < K; k = 16")  # k never reaches K: a GPU hangs
    got = nb18.wmma_gemm.grade(endless, seed=1, executor=gpu)
    assert got.status == "error" and "stopped your kernel" in got.message and "line 13" in got.message, got.line()
    strays = nb18._WMMA_GEMM_SRC.replace("a + tile_row * 16 * K + k, K", "a + tile_row * 17 * K + k, K")
    got = nb18.wmma_gemm.grade(strays, seed=1, executor=gpu)
    assert got.status == "failed" and "outside A, B or C" in got.message, got.line()
    assert gpu.launched == 0
