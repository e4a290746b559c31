"""Tile-kernel exercises: a CUDA C kernel in which one warp computes one 16x16 tile of C = A B + C
(nvcuda::wmma), launched on a 2-D grid of one-warp blocks: (N / 16, M / 16) blocks of 32 threads.

Why a kind of its own: CudaCExercise launches one thread per element on a 1-D grid, which a warp-wide
matrix instruction cannot use. It is a CudaCExercise still: its answer is CUDA C source text, which the
batch grader's judge compiles and runs itself. In CPU mode the answer runs from its PTX on the interpreter
(helpers/ptx/mma.py models wmma.load/mma/store); on a GPU cuda_runners.run_wmma_tile launches it with
CuPy. The inputs are small integers, so every correct order of summation gives the same float32 numbers,
and a wrong answer is named by the output it matches (``mistakes``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from .. import cuda_c, env
from ..errors import UnsupportedByTracer
from .cuda_runners import run_wmma_tile
from .executor import LOCAL
from .libraries import CudaCExercise
from .results import Graded

TILE = 16
OUTSIDE = "it reads or writes outside A, B or C: check each pointer's tile offset."
WARP_MISUSE = "a warp instruction ran without the whole warp: "


def max_steps(k: int) -> int:
    """Steps one thread may run: the reference runs about 20 per 16-deep step of K (81 at K = 64), so a loop
    without its exit stops in seconds (each wmma step is a warp's worth of work for the interpreter)."""
    return 200 + 40 * (k // TILE)


def _launch(M, N, K) -> str:
    return f"{N // TILE} x {M // TILE} blocks of one warp, M = {M}, N = {N}, K = {K}"


@dataclass(eq=False, repr=False)
class TileKernelExercise(CudaCExercise):
    kind: str = "tile"  # helpers/mutation reads it to mutate the reference as CUDA C
    kernel: str = "kernel"
    c_params: str = ""
    reference: str = ""
    make_inputs: Callable = None  # (rng, on_gpu) -> launches: [{"a", "b", "c", "M", "N", "K"}, ...]
    oracle: Callable = None  # values -> C after the kernel
    mistakes: tuple = ()  # (values -> the output a known mistake gives, sentence)

    def reference_answer(self):
        return self.reference

    def _solution_text(self):
        return self.reference

    def _compiled(self, answer, executor):
        """None when the answer compiles with the right signature; else the failing Graded."""
        if not isinstance(answer, str):
            return Graded("failed", f"give the CUDA C as a string, not {type(answer).__name__}.")
        try:
            ptx = executor.compile_cuda(answer + cuda_c.signature_probe(self.kernel, self.c_params), name="tile.cu")
        except cuda_c.CompileError as e:
            msg = str(e)
            if f'identifier "{self.kernel}" is undefined' in msg:
                return Graded(
                    "failed", f"there is no kernel named {self.kernel}: the exercise looks it up by that name."
                )
            if "SIGNATURE:" in msg:
                return Graded(
                    "failed", f"the kernel's parameters are wrong: declare it as {self.kernel}({self.c_params})."
                )
            return Graded("failed", f"NVRTC rejects it: {msg.split(': ', 1)[-1]}")
        if self.kernel not in cuda_c.entry_points(ptx):
            return Graded("failed", f'{self.kernel} is not exported by that name: declare it extern "C".')
        return None

    def _grade(self, answer, rng, executor=LOCAL) -> Graded:
        if bad := self._compiled(answer, executor):
            return bad
        traced = self._preflight(answer, executor) if env.on_gpu() else []
        if traced and self._unsafe(traced[-1]):
            return traced[-1]
        passed = []
        for values in self.make_inputs(rng, env.on_gpu()):
            graded = self._one(answer, values, executor, traced)
            if graded.status != "passed":
                return graded
            passed.append(graded.message)
        return Graded("passed", f"C = A B + C is right for every tile, run {'; '.join(passed)}.", None, {})

    def _one(self, answer, values, executor, traced=()) -> Graded:
        """One launch on `values`: "passed" (its message says where it ran) or the failing Graded. On a GPU,
        ``traced``: the interpreter's runs of the CPU-sized launches (``_preflight``)."""
        if not env.on_gpu():
            return self._interpreted(answer, values, executor)
        M, N, K = (int(values[k]) for k in ("M", "N", "K"))
        got, _ = executor.launch_cuda_c(run_wmma_tile, answer, {**values, "kernel": self.kernel}, 32)
        graded = self._judge(values, np.asarray(got), "on the GPU", _launch(M, N, K))
        if graded.status == "failed" and not self._named(graded):
            # A GPU's wrong numbers named by the interpreter: an accumulator never given a value holds whatever
            # its registers hold on a GPU (different on every run, sometimes zero), zero in the interpreter,
            # whose run then matches that mistake's output.
            return next((t for t in traced if t.status == "failed" and self._named(t)), graded)
        return graded

    def _preflight(self, answer, executor) -> list:
        """Before a GPU launch, the CPU-sized launches run on the interpreter, up to the first that fails: a
        kernel that never ends (a loop counter that wraps, a step that does not advance) would hang the GPU
        and the check with it, and one that strays outside A, B or C poisons the process's CUDA context; the
        interpreter stops the first (its step limit raises, naming the line) and names the second."""
        traced = []
        for values in self.make_inputs(np.random.default_rng(0), False):
            traced.append(self._interpreted(answer, values, executor))
            if traced[-1].status != "passed":
                break
        return traced

    @staticmethod
    def _unsafe(graded) -> bool:
        return graded.message == OUTSIDE or graded.message.startswith(WARP_MISUSE)

    def _named(self, graded) -> bool:
        return any(graded.message == sentence for _, sentence in self.mistakes)

    def _interpreted(self, answer, values, executor) -> Graded:
        """One launch on `values` from the answer's PTX on the interpreter (CPU mode's run)."""
        from .. import ptx

        M, N, K = (int(values[k]) for k in ("M", "N", "K"))
        c = values["c"].copy()
        args = (values["a"], values["b"], c, np.int32(M), np.int32(N), np.int32(K))
        try:
            r = ptx.run(
                answer,
                self.kernel,
                (N // TILE, M // TILE),
                32,
                args,
                nvrtc=executor.compile_cuda,
                max_steps=max_steps(K),
            )
        except UnsupportedByTracer as e:
            return Graded(
                "unchecked",
                f"it compiles, but the numbers could not be run here: {e}",
                None,
                {"numbers_checked": False},
            )
        if r.out_of_bounds:
            return Graded("failed", OUTSIDE)
        if r.warp_misuse:
            return Graded("failed", f"{WARP_MISUSE}{r.warp_misuse[0]['why']}.")
        return self._judge(values, c, "on the CPU from its PTX", _launch(M, N, K))

    def _judge(self, values, got, where, launch) -> Graded:
        want = self.oracle(values)
        if got.shape == want.shape and np.array_equal(got, want):
            return Graded("passed", f"{where} ({launch})", None, {})
        for wrong, sentence in self.mistakes:
            w = wrong(values)
            if np.array_equal(got, w.astype(got.dtype)):
                return Graded("failed", sentence)
        bad = np.argwhere(got != want)[0]
        return Graded(
            "failed",
            f"C[{bad[0]}, {bad[1]}] is {got[tuple(bad)]:g}, expected {want[tuple(bad)]:g} (tile row {bad[0] // TILE}, "
            f"column {bad[1] // TILE}): check which tile each warp loads and where it stores.",
        )
