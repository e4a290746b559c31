// Hopper tensor-core GEMM with wgmma: C (float32, M x N, row-major) = A (M x K, row-major) * B, B given
// as Bt (N x K, row-major), inputs bf16 (fp16 with -DHALF), FP32 accumulation. The same data layout and
// pipeline as tensor_gemm.cu; what changes is the instruction.
//
// mma.sync (tensor_gemm.cu) is the Ampere instruction: one warp, a 16 x 8 x 16 product, both operands in
// registers loaded by ldmatrix. Hopper's wgmma is issued by a warpgroup (4 warps, 128 threads) for a
// 64 x N x 16 product with both operands read straight from shared memory, and it runs asynchronously:
// the warps go on (issuing copies, the next wgmma) while the tensor cores work. That removes the
// ldmatrix traffic and register pressure that hold mma.sync near half of cuBLAS on an H100 or H200.
//
// Macros: BN (block tile columns, 128 or 256: one wgmma's N), WGS (warpgroups per block, each owning 64
// rows: BM = 64 * WGS), STAGES (shared-memory ring), GROUP (raster grouping as in tensor_gemm.cu),
// INFLIGHT (0: wait for each k-tile's wgmma before the next barrier; 1: keep one k-tile's wgmma in flight
// across the barrier, loading STAGES-2 tiles ahead instead of STAGES-1).
//
// Shared memory layout: each tile row holds BK = 64 bf16 = 128 bytes and its eight 16-byte chunks are
// XOR-swizzled by (row % 8), which is the layout wgmma's "128-byte swizzle" mode reads. A matrix
// descriptor names a tile's start (1024-byte aligned), the 1024 bytes between groups of 8 rows, and
// the swizzle mode; the k16 steps inside a 128-byte row advance the start by 32 bytes.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#ifndef BN
#define BN 256
#endif
#ifndef WGS
#define WGS 2
#endif
#ifndef STAGES
#define STAGES 4
#endif
#ifndef GROUP
#define GROUP 8
#endif
#ifndef INFLIGHT
#define INFLIGHT 0
#endif
#define BM (64 * WGS)
#define BK 64
#define THREADS (128 * WGS)
#define AHEAD (STAGES - 1 - INFLIGHT)  // k-tiles loaded ahead of the one being multiplied

#ifdef HALF
#define ELEM "f16"
#else
#define ELEM "bf16"
#endif

typedef unsigned short elem_t;  // the bits of a bf16 or fp16 value

__device__ __forceinline__ unsigned swz(int row, int chunk) { return row * 128 + ((chunk ^ (row & 7)) << 4); }

__device__ __forceinline__ void cp_async16(unsigned smem, const void* gmem) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(smem), "l"(gmem));
}

// Shared-memory matrix descriptor: start address / 16 (bits 0-13), leading byte offset / 16 (bits 16-29,
// unused with a 128-byte swizzle: 1), stride byte offset / 16 (bits 32-45: 1024 bytes per 8 rows),
// swizzle mode (bits 62-63: 1 = 128 bytes).
__device__ __forceinline__ unsigned long long descriptor(unsigned addr) {
    return (unsigned long long)((addr & 0x3FFFF) >> 4) | (1ull << 16) | ((unsigned long long)(1024 >> 4) << 32) |
           (1ull << 62);
}

// D (64 x 256, 128 float32 registers per thread) += A (64 x 16) * B (16 x 256), both read from shared memory.
__device__ __forceinline__ void wgmma_n256(float (&d)[128], unsigned long long a, unsigned long long b) {
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %130, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n256k16.f32." ELEM "." ELEM " {"
        "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
        "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "
        "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "
        "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, "
        "%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, "
        "%80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, "
        "%96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111, "
        "%112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127"
        "}, %128, %129, p, 1, 1, 0, 0;\n}\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
          "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
          "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
          "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]),
          "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]),
          "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]),
          "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]),
          "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63]),
          "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]), "+f"(d[70]), "+f"(d[71]),
          "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]), "+f"(d[77]), "+f"(d[78]), "+f"(d[79]),
          "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83]), "+f"(d[84]), "+f"(d[85]), "+f"(d[86]), "+f"(d[87]),
          "+f"(d[88]), "+f"(d[89]), "+f"(d[90]), "+f"(d[91]), "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95]),
          "+f"(d[96]), "+f"(d[97]), "+f"(d[98]), "+f"(d[99]), "+f"(d[100]), "+f"(d[101]), "+f"(d[102]), "+f"(d[103]),
          "+f"(d[104]), "+f"(d[105]), "+f"(d[106]), "+f"(d[107]), "+f"(d[108]), "+f"(d[109]), "+f"(d[110]), "+f"(d[111]),
          "+f"(d[112]), "+f"(d[113]), "+f"(d[114]), "+f"(d[115]), "+f"(d[116]), "+f"(d[117]), "+f"(d[118]), "+f"(d[119]),
          "+f"(d[120]), "+f"(d[121]), "+f"(d[122]), "+f"(d[123]), "+f"(d[124]), "+f"(d[125]), "+f"(d[126]), "+f"(d[127])
        : "l"(a), "l"(b), "r"(1));
}

// D (64 x 128, 64 float32 registers per thread) += A (64 x 16) * B (16 x 128), both read from shared memory.
__device__ __forceinline__ void wgmma_n128(float (&d)[64], unsigned long long a, unsigned long long b) {
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %66, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n128k16.f32." ELEM "." ELEM " {"
        "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
        "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "
        "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "
        "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63"
        "}, %64, %65, p, 1, 1, 0, 0;\n}\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
          "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
          "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
          "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]),
          "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]),
          "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]),
          "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]),
          "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
        : "l"(a), "l"(b), "r"(1));
}

#if BN == 256
#define WGMMA wgmma_n256
#elif BN == 128
#define WGMMA wgmma_n128
#else
#error "BN must be 128 or 256"
#endif

extern "C" __global__ void __launch_bounds__(THREADS, 1)
wg_gemm(int M, int N, int K, const elem_t* __restrict__ A, const elem_t* __restrict__ Bt, float* __restrict__ C) {
    extern __shared__ __align__(1024) unsigned char smem[];
    // The swizzle pattern repeats every 1024 bytes and wgmma assumes tiles start on that boundary; the
    // launch allots 1024 bytes more than the ring needs so the start can be rounded up.
    const unsigned sbase = ((unsigned)__cvta_generic_to_shared(smem) + 1023u) & ~1023u;
    const unsigned a_stage = BM * BK * 2, b_stage = BN * BK * 2;
    const unsigned b_base = sbase + STAGES * a_stage;

    const int grid_n = N / BN, grid_m = M / BM;
    const int per_group = GROUP * grid_n;
    const int group = blockIdx.x / per_group, first_m = group * GROUP;
    const int rows_here = min(grid_m - first_m, GROUP);
    const int bm = first_m + (blockIdx.x % per_group) % rows_here;
    const int bn = (blockIdx.x % per_group) / rows_here;

    const int tid = threadIdx.x, wg = tid / 128, lane = tid & 31, warp = (tid / 32) & 3;
    const elem_t* Ablk = A + (size_t)bm * BM * K;
    const elem_t* Bblk = Bt + (size_t)bn * BN * K;

    auto load_tile = [&](int stage, int kt) {
        const int k0 = kt * BK;
#pragma unroll
        for (int c = tid; c < BM * 8; c += THREADS)
            cp_async16(sbase + stage * a_stage + swz(c / 8, c % 8), Ablk + (size_t)(c / 8) * K + k0 + (c % 8) * 8);
#pragma unroll
        for (int c = tid; c < BN * 8; c += THREADS)
            cp_async16(b_base + stage * b_stage + swz(c / 8, c % 8), Bblk + (size_t)(c / 8) * K + k0 + (c % 8) * 8);
    };

    float d[BN / 2];
#pragma unroll
    for (int i = 0; i < BN / 2; ++i) d[i] = 0.f;

    const int KT = K / BK;
#pragma unroll
    for (int s = 0; s < AHEAD; ++s) {
        if (s < KT) load_tile(s, s);
        asm volatile("cp.async.commit_group;\n" ::);
    }

    for (int kt = 0; kt < KT; ++kt) {
        asm volatile("cp.async.wait_group %0;\n" ::"n"(AHEAD - 1));
        // cp.async wrote the tile through the generic proxy; wgmma reads it through the async proxy.
        asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
        __syncthreads();  // tile kt is in place for everyone; the stage loaded next is no longer read
        const int next = kt + AHEAD;
        if (next < KT) load_tile(next % STAGES, next);
        asm volatile("cp.async.commit_group;\n" ::);

        const unsigned as = sbase + (kt % STAGES) * a_stage + wg * 64 * 128, bs = b_base + (kt % STAGES) * b_stage;
        const unsigned long long da = descriptor(as), db = descriptor(bs);
        asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
#pragma unroll
        for (int kk = 0; kk < BK / 16; ++kk) WGMMA(d, da + 2 * kk, db + 2 * kk);  // +32 bytes per k16 step
        asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
        asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(INFLIGHT) : "memory");
    }
    asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
    asm volatile("cp.async.wait_group 0;\n" ::);

    // Each warp of the warpgroup holds 16 rows; per n8 column block j, registers 4j, 4j+1 are row lane/4,
    // columns 2 * (lane % 4) and +1, registers 4j+2, 4j+3 the same columns 8 rows down (as for mma.sync).
    const int row = bm * BM + wg * 64 + warp * 16 + (lane >> 2);
#pragma unroll
    for (int j = 0; j < BN / 8; ++j) {
        const int col = bn * BN + j * 8 + (lane & 3) * 2;
        *reinterpret_cast<float2*>(C + (size_t)row * N + col) = make_float2(d[4 * j], d[4 * j + 1]);
        *reinterpret_cast<float2*>(C + (size_t)(row + 8) * N + col) = make_float2(d[4 * j + 2], d[4 * j + 3]);
    }
}
