// layer_norm_f32: out[t, :] = (x[t, :] - mean) / sqrt(var + eps) · weight + bias, with the
// mean and the population variance over the row.
//
// One threadgroup per row, two f32 passes (the mean, then the mean of squared deviations),
// each a tree reduction in threadgroup memory (as layer_norm.wgsl).
#include <metal_stdlib>
using namespace metal;

constant uint THREADS = 256;

struct LayerNormParams {
    uint tokens;
    uint dim;
    float eps;
};

// Tree reductions of partial[0..THREADS) in threadgroup memory; every thread returns the
// result. The closing barrier keeps a fast thread from overwriting partial before all read it.
static float reduce_sum(threadgroup float* partial, uint lane, float value)
{
    partial[lane] = value;
    threadgroup_barrier(mem_flags::mem_threadgroup);
    for (uint stride = THREADS / 2; stride > 0; stride /= 2) {
        if (lane < stride) {
            partial[lane] += partial[lane + stride];
        }
        threadgroup_barrier(mem_flags::mem_threadgroup);
    }
    const float result = partial[0];
    threadgroup_barrier(mem_flags::mem_threadgroup);
    return result;
}

kernel void layer_norm_f32(
    device const float* x [[buffer(0)]],
    device const float* weight [[buffer(1)]],
    device const float* bias [[buffer(2)]],
    device float* out [[buffer(3)]],
    constant LayerNormParams& params [[buffer(4)]],
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
    const float n = float(params.dim);
    float local_sum = 0.0f;
    for (uint j = lane; j < params.dim; j += THREADS) {
        local_sum += x[base + j];
    }
    const float mean = reduce_sum(partial, lane, local_sum) / n;
    float local_squares = 0.0f;
    for (uint j = lane; j < params.dim; j += THREADS) {
        const float d = x[base + j] - mean;
        local_squares += d * d;
    }
    const float variance = reduce_sum(partial, lane, local_squares) / n;
    const float inv = 1.0f / precise::sqrt(variance + params.eps);
    for (uint j = lane; j < params.dim; j += THREADS) {
        out[base + j] = (x[base + j] - mean) * inv * weight[j] + bias[j];
    }
}
