// attention_f32: scaled dot-product attention with grouped-query heads and an optional
// causal mask; the output is head-major, out[h, t, :] (as attention.wgsl).
//
// One threadgroup per (head, query), numbered h · tokens + t. Query head h reads kv head
// h / (heads / kv_heads); query t is at position kv_len - tokens + t and, with causal set,
// sees keys j <= that position. Pass 1 reduces the score maximum; pass 2 takes keys THREADS
// at a time into threadgroup memory as exp(score - max) and accumulates p · v per owned
// output dimension in f32, repeated per block of THREADS · DIMS_PER_THREAD dimensions.
#include <metal_stdlib>
using namespace metal;

constant uint THREADS = 128;
constant uint DIMS_PER_THREAD = 4;

struct AttentionParams {
    uint tokens;
    uint kv_len;
    uint heads;
    uint kv_heads;
    uint head_dim;
    uint causal;
    float scale;
    uint groups;
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

static float score(
    device const float* q, device const float* k, constant AttentionParams& params,
    uint q_base, uint key, uint g)
{
    const uint k_base = (key * params.kv_heads + g) * params.head_dim;
    float dot = 0.0f;
    for (uint d = 0; d < params.head_dim; d++) {
        dot += q[q_base + d] * k[k_base + d];
    }
    return dot * params.scale;
}

kernel void attention_f32(
    device const float* q [[buffer(0)]],
    device const float* k [[buffer(1)]],
    device const float* v [[buffer(2)]],
    device float* out [[buffer(3)]],
    constant AttentionParams& params [[buffer(4)]],
    uint3 group [[threadgroup_position_in_grid]],
    uint3 groups [[threadgroups_per_grid]],
    uint lane [[thread_index_in_threadgroup]])
{
    threadgroup float partial[THREADS];
    threadgroup float probs[THREADS];

    const uint flat = (group.z * groups.y + group.y) * groups.x + group.x;
    if (flat >= params.groups) {
        return;
    }
    const uint h = flat / params.tokens;
    const uint t = flat % params.tokens;
    const uint g = h / (params.heads / params.kv_heads);
    const uint visible =
        params.causal != 0 ? params.kv_len - params.tokens + t + 1 : params.kv_len;
    const uint q_base = (t * params.heads + h) * params.head_dim;
    const uint out_base = (h * params.tokens + t) * params.head_dim;

    float local_max = -FLT_MAX;
    for (uint j = lane; j < visible; j += THREADS) {
        local_max = max(local_max, score(q, k, params, q_base, j, g));
    }
    const float row_max = reduce_max(partial, lane, local_max);

    for (uint d0 = 0; d0 < params.head_dim; d0 += THREADS * DIMS_PER_THREAD) {
        float acc[DIMS_PER_THREAD] = {0.0f, 0.0f, 0.0f, 0.0f};
        float local_sum = 0.0f;
        for (uint j0 = 0; j0 < visible; j0 += THREADS) {
            const uint j = j0 + lane;
            const float p = j < visible ? precise::exp(score(q, k, params, q_base, j, g) - row_max) : 0.0f;
            local_sum += p;
            probs[lane] = p;
            threadgroup_barrier(mem_flags::mem_threadgroup);
            const uint count = min(THREADS, visible - j0);
            for (uint c = 0; c < DIMS_PER_THREAD; c++) {
                const uint d = d0 + c * THREADS + lane;
                if (d < params.head_dim) {
                    float sum = 0.0f;
                    for (uint jj = 0; jj < count; jj++) {
                        sum += probs[jj] * v[((j0 + jj) * params.kv_heads + g) * params.head_dim + d];
                    }
                    acc[c] += sum;
                }
            }
            threadgroup_barrier(mem_flags::mem_threadgroup);
        }
        const float total = reduce_sum(partial, lane, local_sum);
        for (uint c = 0; c < DIMS_PER_THREAD; c++) {
            const uint d = d0 + c * THREADS + lane;
            if (d < params.head_dim) {
                out[out_base + d] = acc[c] / total;
            }
        }
    }
}
