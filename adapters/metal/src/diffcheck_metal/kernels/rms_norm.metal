// rms_norm_f32: out[t, :] = x[t, :] · (1 / sqrt(sum(x[t, :]^2) / dim + eps)) · w.
//
// One threadgroup per row: strided f32 sums of squares, a tree reduction in threadgroup
// memory, then every thread scales its slice. Rows are a flat index over a 3-D grid.
#include <metal_stdlib>
using namespace metal;

constant uint THREADS = 256;

struct RmsNormParams {
    uint tokens;
    uint dim;
    float eps;
};

kernel void rms_norm_f32(
    device const float* x [[buffer(0)]],
    device const float* w [[buffer(1)]],
    device float* out [[buffer(2)]],
    constant RmsNormParams& params [[buffer(3)]],
    uint3 group [[threadgroup_position_in_grid]],
    uint3 groups [[threadgroups_per_grid]],
    uint lane [[thread_index_in_threadgroup]])
{
    threadgroup float partial[THREADS];

    const uint row = (group.z * groups.y + group.y) * groups.x + group.x;
    if (row >= params.tokens) {
        return;
    }
    const uint base = row * params.dim;
    float sum = 0.0f;
    for (uint j = lane; j < params.dim; j += THREADS) {
        const float v = x[base + j];
        sum += v * v;
    }
    partial[lane] = sum;
    threadgroup_barrier(mem_flags::mem_threadgroup);
    for (uint stride = THREADS / 2; stride > 0; stride /= 2) {
        if (lane < stride) {
            partial[lane] += partial[lane + stride];
        }
        threadgroup_barrier(mem_flags::mem_threadgroup);
    }
    // precise:: so the result does not depend on the library's fast-math setting.
    const float inv = 1.0f / precise::sqrt(partial[0] / float(params.dim) + params.eps);
    for (uint j = lane; j < params.dim; j += THREADS) {
        out[base + j] = x[base + j] * inv * w[j];
    }
}
