// softmax_f32: out[t, j] = exp(x[t, j] / T - m_t) / sum over visible j of the same, where
// m_t is the row's largest visible x / T (max-subtracted, so exp never overflows).
//
// With causal set, row t is query position dim - tokens + t and sees columns j <= that
// position; masked columns are written as exactly 0.0. One threadgroup per row, strided
// slices, tree reductions for the maximum and the f32 sum (as softmax.wgsl).
#include <metal_stdlib>
using namespace metal;

constant uint THREADS = 256;

struct SoftmaxParams {
    uint tokens;
    uint dim;
    uint causal;
    float temperature;
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

static float reduce_max(threadgroup float* partial, uint lane, float value)
{
    partial[lane] = value;
    threadgroup_barrier(mem_flags::mem_threadgroup);
    for (uint stride = THREADS / 2; stride > 0; stride /= 2) {
        if (lane < stride) {
            partial[lane] = max(partial[lane], partial[lane + stride]);
        }
        threadgroup_barrier(mem_flags::mem_threadgroup);
    }
    const float result = partial[0];
    threadgroup_barrier(mem_flags::mem_threadgroup);
    return result;
}

kernel void softmax_f32(
    device const float* x [[buffer(0)]],
    device float* out [[buffer(1)]],
    constant SoftmaxParams& params [[buffer(2)]],
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
    const uint visible = params.causal != 0 ? params.dim - params.tokens + row + 1 : params.dim;
    float local_max = -FLT_MAX;
    for (uint j = lane; j < visible; j += THREADS) {
        local_max = max(local_max, x[base + j] / params.temperature);
    }
    const float row_max = reduce_max(partial, lane, local_max);
    float local_sum = 0.0f;
    for (uint j = lane; j < visible; j += THREADS) {
        local_sum += precise::exp(x[base + j] / params.temperature - row_max);
    }
    const float total = reduce_sum(partial, lane, local_sum);
    for (uint j = lane; j < params.dim; j += THREADS) {
        out[base + j] =
            j < visible ? precise::exp(x[base + j] / params.temperature - row_max) / total : 0.0f;
    }
}
