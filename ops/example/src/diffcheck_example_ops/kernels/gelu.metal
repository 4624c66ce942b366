// gelu_f32: out = 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))), the tanh approximation.
//
// The output is [gate results | up results]: element i < half_count reads gate[i], the rest
// read up[i - half_count]. One thread per output element over a flat threadgroup index
// (3-D grid from the host); the tail past total is skipped.
#include <metal_stdlib>
using namespace metal;

// Declared for diffcheck: the launch plan (diffcheck_example_ops.gelu) uses the same value,
// and the adapter refuses a source whose value differs.
constant uint THREADS = 256;

struct GeluParams {
    uint half_count;
    uint total;
    uint groups;
};

constant float SQRT_2_OVER_PI = 0.7978845608028654f;

static inline float gelu(float x) {
    // tanh saturates to ±1 in f32 beyond |u| = 9.01; the clamp keeps it finite everywhere.
    const float u = clamp(SQRT_2_OVER_PI * (x + 0.044715f * x * x * x), -10.0f, 10.0f);
    return 0.5f * x * (1.0f + precise::tanh(u));
}

kernel void gelu_f32(
    device const float* gate [[buffer(0)]],
    device const float* up [[buffer(1)]],
    device float* out [[buffer(2)]],
    constant GeluParams& params [[buffer(3)]],
    uint3 group [[threadgroup_position_in_grid]],
    uint3 groups [[threadgroups_per_grid]],
    uint lane [[thread_index_in_threadgroup]])
{
    const uint flat = (group.z * groups.y + group.y) * groups.x + group.x;
    if (flat >= params.groups) {
        return;
    }
    const uint i = flat * THREADS + lane;
    if (i >= params.total) {
        return;
    }
    const float x = i < params.half_count ? gate[i] : up[i - params.half_count];
    out[i] = gelu(x);
}
