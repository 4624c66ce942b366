// silu_mul_split_f32: out[t, j] = silu(gate) · up, each input row laid out [gate | up].
//
// One thread per output element over a flat threadgroup index (3-D grid from the host).
#include <metal_stdlib>
using namespace metal;

constant uint THREADS = 256;

struct SiluMulParams {
    uint tokens;
    uint intermediate;
    uint total;
    uint groups;
};

// silu(g) = g / (1 + e^-g), the reference's formula. Below g = -80, e^-g nears the f32
// overflow at 88.7, so the equal g · e^g / (1 + e^g) ≈ g · e^g is used: it underflows to a
// tiny value or zero instead of producing NaN or infinity.
static inline float silu(float g) {
    if (g < -80.0f) {
        return g * precise::exp(g);
    }
    return g / (1.0f + precise::exp(-g));
}

kernel void silu_mul_split_f32(
    device const float* src [[buffer(0)]],
    device float* dst [[buffer(1)]],
    constant SiluMulParams& params [[buffer(2)]],
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
    const uint t = i / params.intermediate;
    const uint j = i % params.intermediate;
    const uint row = t * 2 * params.intermediate;
    dst[i] = silu(src[row + j]) * src[row + params.intermediate + j];
}
