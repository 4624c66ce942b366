// add_rms_norm_f32: h = x + residual, then normed = h / sqrt(mean(h²) + eps) · weight; both
// are written, h as the first tokens · dim outputs and normed as the next (as add_rms_norm.wgsl).
#include <metal_stdlib>
using namespace metal;

constant uint THREADS = 256;

struct AddRmsNormParams {
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

kernel void add_rms_norm_f32(
    device const float* x [[buffer(0)]],
    device const float* residual [[buffer(1)]],
    device const float* weight [[buffer(2)]],
    device float* out [[buffer(3)]],
    constant AddRmsNormParams& params [[buffer(4)]],
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
    const uint normed_base = params.tokens * params.dim + base;
    float local_squares = 0.0f;
    for (uint j = lane; j < params.dim; j += THREADS) {
        const float h = x[base + j] + residual[base + j];
        out[base + j] = h;
        local_squares += h * h;
    }
    const float mean_square = reduce_sum(partial, lane, local_squares) / float(params.dim);
    const float inv = 1.0f / precise::sqrt(mean_square + params.eps);
    for (uint j = lane; j < params.dim; j += THREADS) {
        out[normed_base + j] = (x[base + j] + residual[base + j]) * inv * weight[j];
    }
}
