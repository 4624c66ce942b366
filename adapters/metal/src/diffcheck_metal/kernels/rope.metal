// rope_f32: rotary position embedding of x[tokens, heads, head_dim], one thread per pair
// (as rope.wgsl).
//
// Token t is at position p = offset + t; pair i turns by theta = p · base^(-2i / head_dim).
// Layout "half" pairs (i, i + head_dim / 2), "interleaved" pairs (2i, 2i + 1). theta is
// never formed in f32: turns holds, per pair, the frequency / 2π modulo 1 in 64-bit fixed
// point (high word, low word); the top 32 bits of p · turns modulo 2^64 are the angle
// modulo one turn in units of 2^-32 turn, exact in wrapping uint arithmetic.
#include <metal_stdlib>
using namespace metal;

constant uint THREADS = 256;
// 2π / 2^32: radians per unit of the fixed-point phase.
constant float RADIANS_PER_UNIT = 1.4629180792671596e-9f;

struct RopeParams {
    uint tokens;
    uint heads;
    uint head_dim;
    uint interleaved;
    uint offset;
    uint pairs;
    uint groups;
};

kernel void rope_f32(
    device const float* x [[buffer(0)]],
    device const uint* turns [[buffer(1)]],
    device float* out [[buffer(2)]],
    constant RopeParams& params [[buffer(3)]],
    uint3 group [[threadgroup_position_in_grid]],
    uint3 groups [[threadgroups_per_grid]],
    uint lane [[thread_index_in_threadgroup]])
{
    const uint flat = (group.z * groups.y + group.y) * groups.x + group.x;
    if (flat >= params.groups) {
        return;
    }
    const uint pair = flat * THREADS + lane;
    if (pair >= params.pairs) {
        return;
    }
    const uint half_dim = params.head_dim / 2;
    const uint i = pair % half_dim;
    const uint row = pair / half_dim;  // t * heads + h
    const uint t = row / params.heads;
    const uint base = row * params.head_dim;
    const uint ia = params.interleaved != 0 ? 2 * i : i;
    const uint ib = params.interleaved != 0 ? 2 * i + 1 : i + half_dim;
    // The op requires offset + tokens - 1 to fit in uint, so p does not wrap.
    const uint p = params.offset + t;
    const uint phase = p * turns[2 * i] + mulhi(p, turns[2 * i + 1]);
    const float angle = float(as_type<int>(phase)) * RADIANS_PER_UNIT;
    const float c = precise::cos(angle);
    const float s = precise::sin(angle);
    const float a = x[base + ia];
    const float b = x[base + ib];
    out[base + ia] = a * c - b * s;
    out[base + ib] = a * s + b * c;
}
