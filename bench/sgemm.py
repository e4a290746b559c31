"""SGEMM steps 4+ of the ladder: kernels GENERATED from a tile configuration.

Why generate source text instead of writing one kernel with loops? Three things cost the
hand-written register-blocked kernel (step 3) most of its speed, and all three come from how
Numba lowers Python (read in its PTX; `python bench/sgemm_tune.py --ptx` prints the counts):

1. every index is a signed 64-bit integer, so each shared/global access carries Numba's
   negative-index wrap-around and 64-bit address arithmetic; unsigned 32-bit indices compile
   to one `mul.wide.u32` + `add`;
2. `cuda.local.array` accumulators and a `for k in range(BK)` loop that LLVM does not unroll
   (the body is too big) leave address arithmetic inside the hot loop; named scalars in fully
   unrolled code put all TM*TN accumulators in registers and every shared offset is hoisted;
3. bounds checks on every load: a launch whose sizes are multiples of the tile uses a variant
   without them (the guarded variant handles ragged sizes).

A config is (BM, BN, BK, TM, TN, LX, DB): block tile BM x BN, depth BK, TM x TN outputs per
thread, LX lanes of a warp side by side in x (warp tiling: a warp covers LX x 32/LX threads),
DB = 1 for double-buffered shared tiles (one barrier per step, the next tile's global loads
issued before the current tile's math).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from pathlib import Path

from numba import cuda, float32, uint32

from bench import vector_loads

SMEM_LIMIT = 48 * 1024  # static shared memory every GPU accepts
PAD = 4  # sA row padding: the transposed stores of the A tile are then conflict-free


@dataclass(frozen=True)
class Config:
    BM: int = 128
    BN: int = 128
    BK: int = 8
    TM: int = 8
    TN: int = 8
    LX: int = 16
    DB: int = 1
    VL: int = 0  # 1: the inner loop reads its A and B values from shared memory 4 at a time (bench/vector_loads.py)

    @property
    def threads(self) -> int:
        return (self.BM // self.TM) * (self.BN // self.TN)

    @property
    def smem_bytes(self) -> int:
        return 4 * (1 + self.DB) * self.BK * (self.BM + PAD + self.BN)

    def problem(self) -> str | None:
        """Why this config cannot run, or None."""
        nty, ntx = self.BM // self.TM, self.BN // self.TN
        if self.BM % self.TM or self.BN % self.TN:
            return "tile not divisible by the thread tile"
        nt = nty * ntx
        if nt % 32 or nt > 1024 or nt < 64:
            return f"{nt} threads per block"
        if 32 % self.LX or self.LX > ntx or ntx % self.LX or nty % (32 // self.LX):
            return "warp shape does not tile the block"
        if (self.BM * self.BK) % nt or (self.BK * self.BN) % nt:
            return "tile loads do not divide among the threads"
        if nt % self.BK or (self.BN % nt if self.BN >= nt else nt % self.BN):
            return "the tile loads do not map onto the threads"
        if self.smem_bytes > SMEM_LIMIT:
            return f"{self.smem_bytes} B of static shared memory"
        if self.TM * self.TN > 128:
            return "more than 128 accumulators per thread"
        if self.VL and (self.TM % 4 or self.TN % 4):
            return "128-bit reads need thread tiles in groups of 4"
        return None

    def name(self) -> str:
        flags = (" db" if self.DB else "") + (" vl" if self.VL else "")
        return f"{self.BM}x{self.BN}x{self.BK} t{self.TM}x{self.TN} lx{self.LX}{flags}"

    def as_dict(self) -> dict:
        return asdict(self)


def _source(cfg: Config, guarded: bool) -> str:
    BM, BN, BK, TM, TN, LX, DB = cfg.BM, cfg.BN, cfg.BK, cfg.TM, cfg.TN, cfg.LX, cfg.DB
    NTY, NTX = BM // TM, BN // TN
    NT = NTX * NTY
    LY = 32 // LX
    WX = NTX // LX  # warps side by side in x
    A_PER = BM * BK // NT  # A-tile elements each thread loads
    B_PER = BK * BN // NT
    A_ROWS_STEP = NT // BK  # A tile: thread t loads row t // BK (+ r * NT/BK), column t % BK
    L = []
    w = L.append
    w("def kernel(A, B, C):")
    nb = 2 if DB else 1
    align = ", alignment=ALIGN" if cfg.VL else ""  # rows of BM + PAD and BN floats keep 16-byte alignment
    w(f"    sA = cuda.shared.array(({nb}, {BK}, {BM + PAD}), float32{align})")
    w(f"    sB = cuda.shared.array(({nb}, {BK}, {BN}), float32{align})")
    w("    t = uint32(cuda.threadIdx.x)")
    w("    lane = t % uint32(32)")
    w("    warp = t // uint32(32)")
    w(f"    tc = (warp % uint32({WX})) * uint32({LX}) + lane % uint32({LX})")
    w(f"    tr = (warp // uint32({WX})) * uint32({LY}) + lane // uint32({LX})")
    w(f"    m0 = uint32(cuda.blockIdx.y) * uint32({BM})")
    w(f"    n0 = uint32(cuda.blockIdx.x) * uint32({BN})")
    w("    M = uint32(C.shape[0])")
    w("    N = uint32(C.shape[1])")
    w("    K = uint32(A.shape[1])")
    w(f"    la_m = t // uint32({BK})")
    w(f"    la_k = t % uint32({BK})")
    if BN >= NT:
        w("    lb_k = uint32(0)")
        w("    lb_n = t")
    else:
        w(f"    lb_k = t // uint32({BN})")
        w(f"    lb_n = t % uint32({BN})")
    for i in range(TM):
        for j in range(TN):
            w(f"    c{i}_{j} = float32(0.0)")

    def load_regs(k0):
        # global -> registers (ra*, rb*)
        for r in range(A_PER):
            row = f"m0 + la_m + uint32({r * A_ROWS_STEP})"
            col = f"{k0} + la_k"
            if guarded:
                w(f"        ra{r} = A[{row}, {col}] if ({row}) < M and ({col}) < K else float32(0.0)")
            else:
                w(f"        ra{r} = A[{row}, {col}]")
        for r in range(B_PER):
            if BN >= NT:
                krow = f"{k0} + uint32({(r * NT) // BN}) "
                ncol = f"n0 + lb_n + uint32({(r * NT) % BN})"
            else:
                krow = f"{k0} + lb_k + uint32({r * (NT // BN)})"
                ncol = "n0 + lb_n"
            if guarded:
                w(f"        rb{r} = B[{krow}, {ncol}] if ({krow}) < K and ({ncol}) < N else float32(0.0)")
            else:
                w(f"        rb{r} = B[{krow}, {ncol}]")

    def store_regs(buf):
        for r in range(A_PER):
            w(f"        sA[{buf}, la_k, la_m + uint32({r * A_ROWS_STEP})] = ra{r}")
        for r in range(B_PER):
            if BN >= NT:
                w(f"        sB[{buf}, uint32({(r * NT) // BN}), lb_n + uint32({(r * NT) % BN})] = rb{r}")
            else:
                w(f"        sB[{buf}, lb_k + uint32({r * (NT // BN)}), lb_n] = rb{r}")

    # with VL, thread (tr, tc) owns rows tr*4 + {0..3} of each of the TM/4 row groups (BM / (TM/4) apart),
    # and the same for columns: four neighbours, one 128-bit shared read, no bank conflicts within a warp
    def row_of(i):
        return (
            f"tr * uint32(4) + uint32({(i // 4) * (BM // (TM // 4)) + i % 4})" if cfg.VL else f"tr + uint32({i * NTY})"
        )

    def col_of(j):
        return (
            f"tc * uint32(4) + uint32({(j // 4) * (BN // (TN // 4)) + j % 4})" if cfg.VL else f"tc + uint32({j * NTX})"
        )

    def compute(buf):
        for kk in range(BK):
            if cfg.VL:
                for g in range(TM // 4):
                    a = ", ".join(f"a{4 * g + q}" for q in range(4))
                    w(f"        {a} = load4(sA[{buf}, uint32({kk})], tr * uint32(4) + uint32({g * (BM // (TM // 4))}))")
                for g in range(TN // 4):
                    b = ", ".join(f"b{4 * g + q}" for q in range(4))
                    w(f"        {b} = load4(sB[{buf}, uint32({kk})], tc * uint32(4) + uint32({g * (BN // (TN // 4))}))")
                for i in range(TM):
                    for j in range(TN):
                        w(f"        c{i}_{j} += a{i} * b{j}")
                continue
            for i in range(TM):
                w(f"        a{i} = sA[{buf}, uint32({kk}), tr + uint32({i * NTY})]")
            for j in range(TN):
                w(f"        b{j} = sB[{buf}, uint32({kk}), tc + uint32({j * NTX})]")
            for i in range(TM):
                for j in range(TN):
                    w(f"        c{i}_{j} += a{i} * b{j}")

    if DB:
        w("    if True:")
        load_regs("uint32(0)")
        store_regs("uint32(0)")
        w("    cuda.syncthreads()")
        w("    buf = uint32(0)")
        w("    k0 = uint32(0)")
        w("    while k0 < K:")
        w(f"        nxt = k0 + uint32({BK})")
        w("        if nxt < K:")
        # indent the loads one level deeper
        start = len(L)
        load_regs("nxt")
        for idx in range(start, len(L)):
            L[idx] = "    " + L[idx]
        compute("buf")
        w("        if nxt < K:")
        start = len(L)
        store_regs("buf ^ uint32(1)")
        for idx in range(start, len(L)):
            L[idx] = "    " + L[idx]
        w("        cuda.syncthreads()")
        w("        buf ^= uint32(1)")
        w("        k0 = nxt")
    else:
        w("    k0 = uint32(0)")
        w("    while k0 < K:")
        load_regs("k0")
        store_regs("uint32(0)")
        w("        cuda.syncthreads()")
        compute("uint32(0)")
        w("        cuda.syncthreads()")
        w(f"        k0 += uint32({BK})")
    for i in range(TM):
        w(f"    row = m0 + {row_of(i)}")
        for j in range(TN):
            col = f"n0 + {col_of(j)}"
            if guarded:
                w(f"    if row < M and {col} < N:")
                w(f"        C[row, {col}] = c{i}_{j}")
            else:
                w(f"    C[row, {col}] = c{i}_{j}")
    return "\n".join(L) + "\n"


_CACHE: dict = {}


def make_kernel(cfg: Config, guarded: bool, fastmath: bool = False, jit_options: tuple = ()):
    """The @cuda.jit kernel for cfg (cached): guarded handles any size, unguarded needs multiples.
    ``jit_options``: more of cuda.jit's keywords as (name, value) pairs, e.g. (("max_registers", 128),)."""
    key = (cfg, guarded, fastmath, jit_options)
    if key not in _CACHE:
        why = cfg.problem()
        if why:
            raise ValueError(f"config {cfg.name()} cannot run: {why}")
        src = _source(cfg, guarded)
        ns = {"cuda": cuda, "float32": float32, "uint32": uint32, "load4": vector_loads.load4}
        ns["ALIGN"] = vector_loads.ALIGN
        code = compile(src, f"<sgemm {cfg.name()}{' guarded' if guarded else ''}>", "exec")
        exec(code, ns)  # noqa: S102 - our own generated source, see _source
        fn = ns["kernel"]
        # ncu and error messages show this name (Numba mangles __qualname__ into the kernel's symbol)
        fn.__name__ = fn.__qualname__ = "sgemm_gen_" + ("g_" if guarded else "") + cfg.name().replace(" ", "_")
        _CACHE[key] = cuda.jit(fn, fastmath=fastmath, **dict(jit_options))
    return _CACHE[key]


def fits(cfg: Config, m: int, n: int, k: int) -> bool:
    return m % cfg.BM == 0 and n % cfg.BN == 0 and k % cfg.BK == 0


def launch(cfg: Config, m: int, n: int, k: int):
    """(kernel, grid, block): the unguarded kernel when the sizes are multiples of the tile."""
    kern = make_kernel(cfg, guarded=not fits(cfg, m, n, k))
    return kern, (math.ceil(n / cfg.BN), math.ceil(m / cfg.BM)), (cfg.threads,)


DEFAULT = Config()
# Step 7: step 5's double buffering with a 128 x 256 tile, 8 x 16 outputs per thread and 128-bit shared reads
# (VL): 45.4 TFLOP/s, 88.5% of cuBLAS on an H200, where the same shape with 32-bit reads spills or loses
# (docs/data/sgemm_tune.json); with VL a thread issues 6 shared loads per 128 FMAs instead of 24.
VECTOR = Config(BM=128, BN=256, BK=8, TM=8, TN=16, LX=16, DB=1, VL=1)


def search_space() -> list[Config]:
    out = []
    for bm, bn, tm, tn in ((128, 128, 8, 8), (128, 64, 8, 4), (64, 128, 4, 8), (64, 64, 4, 4), (128, 256, 8, 16)):
        for bk in (8, 16):
            for lx in (16, 8, 4):
                for db in (1, 0):
                    c = Config(bm, bn, bk, tm, tn, lx, db)
                    if c.problem() is None:
                        out.append(c)
    return out


TUNE_FILE = Path(__file__).resolve().parents[1] / "docs" / "data" / "sgemm_tune.json"


def tuned(path=TUNE_FILE) -> Config:
    """The fastest config of the last `bench/sgemm_tune.py` run on a GPU (DEFAULT without one)."""
    import json

    try:
        best = json.loads(path.read_text())["best"]
        cfg = Config(**best)
    except (OSError, ValueError, KeyError, TypeError):
        return DEFAULT
    return cfg if cfg.problem() is None else DEFAULT
