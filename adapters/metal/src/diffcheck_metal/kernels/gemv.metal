// gemv_f32: c[n] = B[n, k] · a[k] (the GEMM with m == 1), f32 accumulation.
//
// One threadgroup computes ROWS outputs; the LANES threads of a row stride over k and a
// tree reduction in threadgroup memory combines their partial sums.
#include <metal_stdlib>
using namespace metal;

constant uint ROWS = 8;
constant uint LANES = 32;

struct GemvParams {
    uint n;
    uint k;
    uint groups;
};

kernel void gemv_f32(
    device const float* a [[buffer(0)]],
    device const float* b [[buffer(1)]],
    device float* c [[buffer(2)]],
    constant GemvParams& params [[buffer(3)]],
    uint3 group [[threadgroup_position_in_grid]],
    uint3 groups [[threadgroups_per_grid]],
    uint3 local [[thread_position_in_threadgroup]])
{
    threadgroup float partial[ROWS * LANES];

    const uint flat = (group.z * groups.y + group.y) * groups.x + group.x;
    if (flat >= params.groups) {
        return;
    }
    const uint row = flat * ROWS + local.y;
    float sum = 0.0f;
    if (row < params.n) {
        const uint base = row * params.k;
        for (uint kk = local.x; kk < params.k; kk += LANES) {
            sum += a[kk] * b[base + kk];
        }
    }
    const uint slot = local.y * LANES + local.x;
    partial[slot] = sum;
    threadgroup_barrier(mem_flags::mem_threadgroup);
    for (uint stride = LANES / 2; stride > 0; stride /= 2) {
        if (local.x < stride) {
            partial[slot] += partial[slot + stride];
        }
        threadgroup_barrier(mem_flags::mem_threadgroup);
    }
    if (local.x == 0 && row < params.n) {
        c[row] = partial[slot];
    }
}
