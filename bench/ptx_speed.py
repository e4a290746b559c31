"""How fast the CPU PTX interpreter (helpers.ptx) runs two course kernels; NVRTC compile time excluded.

Targets on a 2-core machine: SAXPY over 1,024 threads <= 1 s; 16x16-tiled 64x64 matmul <= 5 s.
"""

import time

import numpy as np

from helpers.ptx import compile_source, run

SAXPY_SRC = r"""
extern "C" __global__ void saxpy(float a, const float* x, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}"""
MATMUL_SRC = r"""
#define TILE 16
extern "C" __global__ void matmul(const float* A, const float* B, float* C, int n) {
  __shared__ float As[TILE][TILE];
  __shared__ float Bs[TILE][TILE];
  int row = blockIdx.y * TILE + threadIdx.y, col = blockIdx.x * TILE + threadIdx.x;
  float acc = 0.0f;
  for (int t = 0; t < n / TILE; ++t) {
    As[threadIdx.y][threadIdx.x] = A[row * n + t * TILE + threadIdx.x];
    Bs[threadIdx.y][threadIdx.x] = B[(t * TILE + threadIdx.y) * n + col];
    __syncthreads();
    for (int k = 0; k < TILE; ++k) acc += As[threadIdx.y][k] * Bs[k][threadIdx.x];
    __syncthreads();
  }
  C[row * n + col] = acc;
}"""


def timed(ptx, source, *a, **k):
    t = time.perf_counter()
    r = run(ptx, *a, source=source, **k)
    return time.perf_counter() - t, r


def main():
    n = 1000
    x, y = np.random.rand(n).astype(np.float32), np.ones(n, np.float32)
    dt, r = timed(compile_source(SAXPY_SRC), SAXPY_SRC, "saxpy", 4, 256, (np.float32(2), x, y, np.int32(n)))
    print(f"saxpy     1,024 threads : {dt:.3f} s  ({r.steps:,} thread-instructions, {r.table.shape[1]:,} accesses)")
    m = 64
    A, B, C = (
        np.random.rand(m, m).astype(np.float32),
        np.random.rand(m, m).astype(np.float32),
        np.zeros((m, m), np.float32),
    )
    dt, r = timed(compile_source(MATMUL_SRC), MATMUL_SRC, "matmul", (4, 4), (16, 16), (A, B, C, np.int32(m)))
    ok = np.allclose(C, A @ B, rtol=1e-4)
    print(
        f"matmul 64x64, 16x16 tiles: {dt:.3f} s  ({r.steps:,} thread-instructions, {r.table.shape[1]:,} accesses, "
        f"{'correct' if ok else 'WRONG'})"
    )


if __name__ == "__main__":
    main()
