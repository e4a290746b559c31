// SGEMM in CUDA C: the best Numba step (bench/sgemm.py, 128x128 tiles, BK 16, 8x8 per thread,
// double-buffered shared tiles) plus what the Numba steps do not use: 128-bit (float4) loads and stores
// of global and shared memory (Numba's indexing emits 32-bit ones), __launch_bounds__ (Numba's
// launch_bounds= emits the same PTX directives), and __restrict__ pointers.
// Sizes must be multiples of the tile (M, N of BM/BN, K of BK); the launcher checks.
#ifndef BM
#define BM 128
#endif
#ifndef BN
#define BN 128
#endif
#ifndef BK
#define BK 16
#endif
#define TM 8
#ifndef TN
#define TN 8  // 8 or 16 columns per thread, as TN / 4 float4 groups BN / (TN / 4) apart
#endif
#ifndef FRAGDB
#define FRAGDB 0  // 1: the next k-step's shared reads issue before this k-step's FMAs
#endif
#define TG (TN / 4)
#define NT ((BM / TM) * (BN / TN))
#define APAD 4  // As rows padded: the transposed scalar stores hit 2 banks, not 8
#define A_PER (BM * BK / 4 / NT)  // float4 loads of the A tile per thread
#define B_PER (BK * BN / 4 / NT)

#ifndef MINB
#define MINB 2
#endif
extern "C" __global__ void __launch_bounds__(NT, MINB)
sgemm_vec(int M, int N, int K, const float* __restrict__ A, const float* __restrict__ B,
          float* __restrict__ C) {
    __shared__ __align__(16) float As[2][BK][BM + APAD];  // As[k][m] = A[m0 + m][k0 + k]
    __shared__ __align__(16) float Bs[2][BK][BN];
    const int tid = threadIdx.x;
    const int tcol = tid % (BN / TN);
    const int trow = tid / (BN / TN);
    A += (size_t)blockIdx.y * BM * K;
    B += (size_t)blockIdx.x * BN;
    C += (size_t)blockIdx.y * BM * N + (size_t)blockIdx.x * BN;

    float acc[TM][TN] = {};
    float4 la[A_PER], lb[B_PER];

#define LOAD(k0)                                                                 \
    _Pragma("unroll") for (int q = 0; q < A_PER; ++q) {                          \
        int idx = tid + q * NT, r = idx / (BK / 4), c4 = idx % (BK / 4);         \
        la[q] = *reinterpret_cast<const float4*>(&A[(size_t)r * K + (k0) + c4 * 4]); \
    }                                                                            \
    _Pragma("unroll") for (int q = 0; q < B_PER; ++q) {                          \
        int idx = tid + q * NT, r = idx / (BN / 4), c4 = idx % (BN / 4);         \
        lb[q] = *reinterpret_cast<const float4*>(&B[(size_t)((k0) + r) * N + c4 * 4]); \
    }
#define STORE(buf)                                                               \
    _Pragma("unroll") for (int q = 0; q < A_PER; ++q) {                          \
        int idx = tid + q * NT, r = idx / (BK / 4), c4 = idx % (BK / 4);         \
        As[buf][c4 * 4 + 0][r] = la[q].x;                                        \
        As[buf][c4 * 4 + 1][r] = la[q].y;                                        \
        As[buf][c4 * 4 + 2][r] = la[q].z;                                        \
        As[buf][c4 * 4 + 3][r] = la[q].w;                                        \
    }                                                                            \
    _Pragma("unroll") for (int q = 0; q < B_PER; ++q) {                          \
        int idx = tid + q * NT, r = idx / (BN / 4), c4 = idx % (BN / 4);         \
        *reinterpret_cast<float4*>(&Bs[buf][r][c4 * 4]) = lb[q];                 \
    }

    LOAD(0)
    STORE(0)
    __syncthreads();
    int buf = 0;
    for (int k0 = 0; k0 < K; k0 += BK) {
        const bool more = k0 + BK < K;
        if (more) { LOAD(k0 + BK) }
#if FRAGDB
        float4 fa[2][2], fb[2][TG];
#define FRAG(slot, kk)                                                               \
    fa[slot][0] = *reinterpret_cast<const float4*>(&As[buf][kk][trow * 4]);          \
    fa[slot][1] = *reinterpret_cast<const float4*>(&As[buf][kk][BM / 2 + trow * 4]); \
    _Pragma("unroll") for (int g = 0; g < TG; ++g)                                   \
        fb[slot][g] = *reinterpret_cast<const float4*>(&Bs[buf][kk][g * (BN / TG) + tcol * 4]);
        FRAG(0, 0)
#pragma unroll
        for (int kk = 0; kk < BK; ++kk) {
            if (kk + 1 < BK) { FRAG((kk + 1) & 1, kk + 1) }
            const float4 a0 = fa[kk & 1][0], a1 = fa[kk & 1][1];
            float a[8] = {a0.x, a0.y, a0.z, a0.w, a1.x, a1.y, a1.z, a1.w};
            float b[TN];
#pragma unroll
            for (int g = 0; g < TG; ++g) {
                b[4 * g] = fb[kk & 1][g].x;
                b[4 * g + 1] = fb[kk & 1][g].y;
                b[4 * g + 2] = fb[kk & 1][g].z;
                b[4 * g + 3] = fb[kk & 1][g].w;
            }
#pragma unroll
            for (int i = 0; i < TM; ++i)
#pragma unroll
                for (int j = 0; j < TN; ++j) acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
        }
#else
#pragma unroll
        for (int kk = 0; kk < BK; ++kk) {
            // rows trow*4 + {0..3} and BM/2 + trow*4 + {0..3}; the same for columns: each
            // float4 read of a warp touches consecutive 16-byte words (no bank conflicts).
            float4 a0 = *reinterpret_cast<const float4*>(&As[buf][kk][trow * 4]);
            float4 a1 = *reinterpret_cast<const float4*>(&As[buf][kk][BM / 2 + trow * 4]);
            float a[8] = {a0.x, a0.y, a0.z, a0.w, a1.x, a1.y, a1.z, a1.w};
            float b[TN];
#pragma unroll
            for (int g = 0; g < TG; ++g) {
                const float4 v = *reinterpret_cast<const float4*>(&Bs[buf][kk][g * (BN / TG) + tcol * 4]);
                b[4 * g] = v.x;
                b[4 * g + 1] = v.y;
                b[4 * g + 2] = v.z;
                b[4 * g + 3] = v.w;
            }
#pragma unroll
            for (int i = 0; i < TM; ++i)
#pragma unroll
                for (int j = 0; j < TN; ++j) acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
        }
#endif
        if (more) { STORE(buf ^ 1) }
        __syncthreads();
        buf ^= 1;
    }
#pragma unroll
    for (int i = 0; i < TM; ++i) {
        int row = (i / 4) * (BM / 2) + trow * 4 + (i % 4);
#pragma unroll
        for (int g = 0; g < TG; ++g) {
            float4 v = make_float4(acc[i][4 * g], acc[i][4 * g + 1], acc[i][4 * g + 2], acc[i][4 * g + 3]);
            *reinterpret_cast<float4*>(&C[(size_t)row * N + g * (BN / TG) + tcol * 4]) = v;
        }
    }
}
