// silu_mul_split_f32: out[t, j] = silu(gate) · up, each input row laid out [gate | up].
//
// One thread per output element; workgroups are numbered flat over a 3-D grid and the
// tail past tokens · intermediate is skipped.

// The storage type; the f16 build (shader-f16) replaces this line. Arithmetic is f32.
alias S = f32;

const THREADS: u32 = 256u;

struct Params {
    tokens: u32,
    intermediate: u32,
    total: u32,
    groups: u32,
}

@group(0) @binding(0) var<storage, read> src: array<S>;
@group(0) @binding(1) var<storage, read_write> dst: array<S>;
@group(0) @binding(2) var<uniform> params: Params;

// silu(g) = g / (1 + e^-g), the reference's formula. Below g = -80, e^-g approaches the f32
// overflow at 88.7 and WGSL leaves an overflowing exp indeterminate (not necessarily inf),
// so the algebraically equal g · e^g / (1 + e^g) ≈ g · e^g is used there; it underflows to
// a tiny value or zero instead of producing NaN or infinity.
fn silu(g: f32) -> f32 {
    if (g < -80.0) {
        return g * exp(g);
    }
    return g / (1.0 + exp(-g));
}

@compute @workgroup_size(256, 1, 1)
fn silu_mul_split_f32(
    @builtin(workgroup_id) group: vec3<u32>,
    @builtin(num_workgroups) groups: vec3<u32>,
    @builtin(local_invocation_index) lane: u32,
) {
    let flat = (group.z * groups.y + group.y) * groups.x + group.x;
    if (flat >= params.groups) {
        return;
    }
    let i = flat * THREADS + lane;
    if (i >= params.total) {
        return;
    }
    let t = i / params.intermediate;
    let j = i % params.intermediate;
    let row = t * 2u * params.intermediate;
    let gate = f32(src[row + j]);
    let up = f32(src[row + params.intermediate + j]);
    dst[i] = S(silu(gate) * up);
}
