// Tensor-core GEMM, C (float32, M x N, row-major) = A (M x K, row-major) * B, with B given as Bt
// (N x K, row-major: each column of B contiguous), inputs bf16 (or fp16 with -DHALF), FP32 accumulation.
//
// Macros: BM, BN (block tile), BK (32 or 64: the k-depth of a tile, 2 or 4 mma k-steps per barrier),
// WM, WN (warp tile), STAGES (shared-memory ring), GROUP (block rows that run side by side so a panel
// of B is read once from DRAM for GROUP panels of A).
//
// Why each piece: mma.sync m16n8k16 is the tensor-core instruction a warp issues; ldmatrix hands each
// lane its fragment of a 16 x 16 tile in one instruction; cp.async copies global to shared without
// registers so STAGES-1 tiles are in flight while the tensor cores work on the last one; the XOR
// swizzle on 16-byte chunks puts the 8 rows an ldmatrix reads in 8 different bank groups.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#ifndef BM
#define BM 128
#endif
#ifndef BN
#define BN 128
#endif
#ifndef WM
#define WM 64
#endif
#ifndef WN
#define WN 32
#endif
#ifndef STAGES
#define STAGES 4
#endif
#ifndef GROUP
#define GROUP 8
#endif
#ifndef BK
#define BK 32
#endif
#define CPR (BK / 8)               // 16-byte chunks per tile row
#define ROWS128 (128 / (BK * 2))  // tile rows per 128 bytes (the 32 banks)
#define THREADS ((BM / WM) * (BN / WN) * 32)
#define MT (WM / 16)  // m16 tiles per warp
#define NT (WN / 8)   // n8 tiles per warp

#ifdef HALF
#define MMA "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 "
#else
#define MMA "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 "
#endif

// mma.sync reads only registers: without `volatile` the compiler may interleave it with the next k-step's
// ldmatrix and address arithmetic (FREEMMA 1); ldmatrix and cp.async stay volatile (they touch memory).
#ifndef FREEMMA
#define FREEMMA 0
#endif
#if FREEMMA
#define MMA_ASM asm
#else
#define MMA_ASM asm volatile
#endif

typedef unsigned short elem_t;  // the bits of a bf16 or fp16 value

// Byte offset of 16-byte chunk `chunk` of row `row` in a tile with BK * 2-byte rows: XOR the chunk with
// the row's index among the 128-byte lines so 8 consecutive rows of one chunk use 8 different bank groups.
__device__ __forceinline__ unsigned swz(int row, int chunk) {
    return row * (BK * 2) + ((chunk ^ ((row / ROWS128) & (CPR - 1))) << 4);
}

__device__ __forceinline__ void cp_async16(unsigned smem, const void* gmem) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(smem), "l"(gmem));
}

__device__ __forceinline__ void ldmatrix_x4(unsigned (&r)[4], unsigned addr) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(addr));
}

// The warp's A fragments (MT m16 x k16 tiles) and B fragments (NT k16 x n8 tiles) of k-step kk.
__device__ __forceinline__ void load_fragments(unsigned (&af)[MT][4], unsigned (&bf)[NT][2], unsigned as, unsigned bs,
                                               int kk, int wm, int wn, int lane) {
#pragma unroll
    for (int i = 0; i < MT; ++i) {
        const int row = wm * WM + i * 16 + (lane & 15);
        ldmatrix_x4(af[i], as + swz(row, kk * 2 + (lane >> 4)));
    }
#pragma unroll
    for (int j = 0; j < NT; j += 2) {
        const int mat = lane >> 3;
        const int row = wn * WN + j * 8 + (mat >> 1) * 8 + (lane & 7);
        unsigned r[4];
        ldmatrix_x4(r, bs + swz(row, kk * 2 + (mat & 1)));
        bf[j][0] = r[0];
        bf[j][1] = r[1];
        bf[j + 1][0] = r[2];
        bf[j + 1][1] = r[3];
    }
}

extern "C" __global__ void __launch_bounds__(THREADS)
tc_gemm(int M, int N, int K, const elem_t* __restrict__ A, const elem_t* __restrict__ Bt, float* __restrict__ C) {
    extern __shared__ __align__(128) unsigned char smem[];
    const unsigned sbase = (unsigned)__cvta_generic_to_shared(smem);
    const unsigned a_stage = BM * BK * 2, b_stage = BN * BK * 2;
    const unsigned b_base = sbase + STAGES * a_stage;

    // Grouped raster order: GROUP block rows advance together along N.
    const int grid_n = N / BN, grid_m = M / BM;
    const int per_group = GROUP * grid_n;
    const int group = blockIdx.x / per_group, first_m = group * GROUP;
    const int rows_here = min(grid_m - first_m, GROUP);
    const int bm = first_m + (blockIdx.x % per_group) % rows_here;
    const int bn = (blockIdx.x % per_group) / rows_here;

    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    const int wm = warp / (BN / WN), wn = warp % (BN / WN);
    const elem_t* Ablk = A + (size_t)bm * BM * K;
    const elem_t* Bblk = Bt + (size_t)bn * BN * K;

    auto load_tile = [&](int stage, int kt) {
        const int k0 = kt * BK;
#pragma unroll
        for (int c = tid; c < BM * CPR; c += THREADS) {
            const int row = c / CPR, chunk = c % CPR;
            cp_async16(sbase + stage * a_stage + swz(row, chunk), Ablk + (size_t)row * K + k0 + chunk * 8);
        }
#pragma unroll
        for (int c = tid; c < BN * CPR; c += THREADS) {
            const int row = c / CPR, chunk = c % CPR;
            cp_async16(b_base + stage * b_stage + swz(row, chunk), Bblk + (size_t)row * K + k0 + chunk * 8);
        }
    };

    float acc[MT][NT][4];
#pragma unroll
    for (int i = 0; i < MT; ++i)
#pragma unroll
        for (int j = 0; j < NT; ++j)
#pragma unroll
            for (int e = 0; e < 4; ++e) acc[i][j][e] = 0.f;

    const int KT = K / BK;
#pragma unroll
    for (int s = 0; s < STAGES - 1; ++s) {
        if (s < KT) load_tile(s, s);
        asm volatile("cp.async.commit_group;\n" ::);
    }

    for (int kt = 0; kt < KT; ++kt) {
        asm volatile("cp.async.wait_group %0;\n" ::"n"(STAGES - 2));
        __syncthreads();  // tile kt is in shared memory for every thread; stage (kt-1) is free
        const int next = kt + STAGES - 1;
        if (next < KT) load_tile(next % STAGES, next);
        asm volatile("cp.async.commit_group;\n" ::);

        const unsigned as = sbase + (kt % STAGES) * a_stage, bs = b_base + (kt % STAGES) * b_stage;
        // Two sets of fragments: the next k-step's ldmatrix is issued before this k-step's mma, so its
        // latency hides behind the tensor-core work (asm volatile keeps the order as written).
        unsigned af[2][MT][4], bf[2][NT][2];
        load_fragments(af[0], bf[0], as, bs, 0, wm, wn, lane);
#pragma unroll
        for (int kk = 0; kk < BK / 16; ++kk) {  // the tile's k16 steps
            if (kk + 1 < BK / 16) load_fragments(af[(kk + 1) & 1], bf[(kk + 1) & 1], as, bs, kk + 1, wm, wn, lane);
#pragma unroll
            for (int i = 0; i < MT; ++i)
#pragma unroll
                for (int j = 0; j < NT; ++j) {
                    const unsigned(&a)[4] = af[kk & 1][i];
                    const unsigned(&b)[2] = bf[kk & 1][j];
                    MMA_ASM(MMA "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
                                 : "+f"(acc[i][j][0]), "+f"(acc[i][j][1]), "+f"(acc[i][j][2]), "+f"(acc[i][j][3])
                                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
                }
        }
    }
    asm volatile("cp.async.wait_group 0;\n" ::);

    // Each lane holds rows lane/4 and lane/4 + 8 of each m16 tile, columns 2*(lane%4) and +1 of each n8 tile.
#pragma unroll
    for (int i = 0; i < MT; ++i)
#pragma unroll
        for (int j = 0; j < NT; ++j) {
            const int row = bm * BM + wm * WM + i * 16 + (lane >> 2);
            const int col = bn * BN + wn * WN + j * 8 + (lane & 3) * 2;
            *reinterpret_cast<float2*>(C + (size_t)row * N + col) = make_float2(acc[i][j][0], acc[i][j][1]);
            *reinterpret_cast<float2*>(C + (size_t)(row + 8) * N + col) = make_float2(acc[i][j][2], acc[i][j][3]);
        }
}
