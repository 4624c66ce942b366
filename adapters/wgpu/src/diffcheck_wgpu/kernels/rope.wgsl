// rope_f32: rotary position embedding of x[tokens, heads, head_dim], one thread per pair.
//
// Token t is at position p = offset + t; pair i (of head_dim / 2) turns by
// theta = p · base^(-2i / head_dim). Layout "half" pairs (i, i + head_dim / 2), layout
// "interleaved" pairs (2i, 2i + 1); the rotated pair (a cos - b sin, a sin + b cos) is written
// back to the same positions.
//
// theta is never formed in f32 (at p near 2^32 an f32 angle has no correct digit). turns
// holds, per pair, the frequency / 2π modulo 1 as a 64-bit fixed-point fraction (high word,
// low word). The top 32 bits of p · turns modulo 2^64 are the angle modulo one turn in units
// of 2^-32 turn, computed exactly with wrapping u32 arithmetic; read as a signed value they
// give an angle in [-π, π), where sin and cos are accurate.

// The storage type; the f16 build (shader-f16) replaces this line. Arithmetic is f32.
alias S = f32;

const THREADS: u32 = 256u;
// 2π / 2^32: radians per unit of the fixed-point phase.
const RADIANS_PER_UNIT: f32 = 1.4629180792671596e-9;

struct Params {
    tokens: u32,
    heads: u32,
    head_dim: u32,
    interleaved: u32,
    offset: u32,
    pairs: u32,
    groups: u32,
}

@group(0) @binding(0) var<storage, read> x: array<S>;
@group(0) @binding(1) var<storage, read> turns: array<u32>;
@group(0) @binding(2) var<storage, read_write> out: array<S>;
@group(0) @binding(3) var<uniform> params: Params;

// The high 32 bits of the 64-bit product a · b, from 16-bit halves (no u32 term overflows).
fn mul_high(a: u32, b: u32) -> u32 {
    let a0 = a & 0xffffu;
    let a1 = a >> 16u;
    let b0 = b & 0xffffu;
    let b1 = b >> 16u;
    let low = a0 * b0;
    let mid1 = a1 * b0 + (low >> 16u);
    let mid2 = a0 * b1 + (mid1 & 0xffffu);
    return a1 * b1 + (mid1 >> 16u) + (mid2 >> 16u);
}

@compute @workgroup_size(256, 1, 1)
fn rope_f32(
    @builtin(workgroup_id) group: vec3<u32>,
    @builtin(num_workgroups) groups: vec3<u32>,
    @builtin(local_invocation_index) lane: u32,
) {
    let flat = (group.z * groups.y + group.y) * groups.x + group.x;
    if (flat >= params.groups) {
        return;
    }
    let pair = flat * THREADS + lane;
    if (pair >= params.pairs) {
        return;
    }
    let half = params.head_dim / 2u;
    let i = pair % half;
    let row = pair / half;  // t * heads + h
    let t = row / params.heads;
    let base = row * params.head_dim;
    var ia = i;
    var ib = i + half;
    if (params.interleaved != 0u) {
        ia = 2u * i;
        ib = 2u * i + 1u;
    }
    // The op requires offset + tokens - 1 to fit in u32, so p does not wrap.
    let p = params.offset + t;
    let phase = p * turns[2u * i] + mul_high(p, turns[2u * i + 1u]);
    let angle = f32(bitcast<i32>(phase)) * RADIANS_PER_UNIT;
    let c = cos(angle);
    let s = sin(angle);
    let a = f32(x[base + ia]);
    let b = f32(x[base + ib]);
    out[base + ia] = S(a * c - b * s);
    out[base + ib] = S(a * s + b * c);
}
