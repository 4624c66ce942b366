// gemm_f32_v2: C[m, n] = A[m, k] · B[n, k]^T, row-major f32, f32 accumulation.
//
// The same algorithm as the WebGPU adapter's gemm_f32_tiled: one threadgroup per 64x32
// output tile, tiles numbered row-major and laid out by the host on a 3-D grid
// (diffcheck.gpu_plan.split_grid); K is stepped 32 at a time through threadgroup memory,
// with zero fill past m, n or k and no stores past m or n.
#include <metal_stdlib>
using namespace metal;

constant uint TILE_M = 64;
constant uint TILE_N = 32;
constant uint TILE_K = 32;
constant uint THREADS_X = 32;
constant uint THREADS_Y = 8;

struct GemmParams {
    uint m;
    uint n;
    uint k;
    uint tiles_n;
    uint groups;
};

kernel void gemm_f32_v2(
    device const float* a [[buffer(0)]],
    device const float* b [[buffer(1)]],
    device float* c [[buffer(2)]],
    constant GemmParams& params [[buffer(3)]],
    uint3 group [[threadgroup_position_in_grid]],
    uint3 groups [[threadgroups_per_grid]],
    uint3 local [[thread_position_in_threadgroup]])
{
    const uint threads = THREADS_X * THREADS_Y;
    const uint rows_per_thread = TILE_M / THREADS_Y;
    threadgroup float a_tile[TILE_M * TILE_K];
    threadgroup float b_tile[TILE_N * TILE_K];

    // Uniform across the threadgroup, so the barriers below stay in uniform control flow.
    const uint flat = (group.z * groups.y + group.y) * groups.x + group.x;
    if (flat >= params.groups) {
        return;
    }
    const uint row0 = (flat / params.tiles_n) * TILE_M;
    const uint col0 = (flat % params.tiles_n) * TILE_N;
    const uint lane = local.y * THREADS_X + local.x;
    const uint k = params.k;

    float acc[TILE_M / THREADS_Y] = {0.0f};
    for (uint k0 = 0; k0 < k; k0 += TILE_K) {
        for (uint i = 0; i < (TILE_M * TILE_K) / threads; ++i) {
            const uint e = i * threads + lane;
            const uint r = row0 + e / TILE_K;
            const uint kk = k0 + e % TILE_K;
            a_tile[e] = (r < params.m && kk < k) ? a[r * k + kk] : 0.0f;
        }
        for (uint i = 0; i < (TILE_N * TILE_K) / threads; ++i) {
            const uint e = i * threads + lane;
            const uint col = col0 + e / TILE_K;
            const uint kk = k0 + e % TILE_K;
            b_tile[e] = (col < params.n && kk < k) ? b[col * k + kk] : 0.0f;
        }
        threadgroup_barrier(mem_flags::mem_threadgroup);
        for (uint kk = 0; kk < TILE_K; ++kk) {
            const float bv = b_tile[local.x * TILE_K + kk];
            for (uint i = 0; i < rows_per_thread; ++i) {
                acc[i] += a_tile[(local.y + THREADS_Y * i) * TILE_K + kk] * bv;
            }
        }
        threadgroup_barrier(mem_flags::mem_threadgroup);
    }

    const uint col = col0 + local.x;
    if (col < params.n) {
        for (uint i = 0; i < rows_per_thread; ++i) {
            const uint r = row0 + local.y + THREADS_Y * i;
            if (r < params.m) {
                c[r * params.n + col] = acc[i];
            }
        }
    }
}
