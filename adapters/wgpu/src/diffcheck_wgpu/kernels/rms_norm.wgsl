// rms_norm_f32: out[t, :] = x[t, :] · (1 / sqrt(sum(x[t, :]^2) / dim + eps)) · w.
//
// One workgroup per row: each thread sums the squares of a strided slice of the row in
// f32, a tree reduction in workgroup memory combines them, then every thread scales its
// slice. Rows are numbered flat over a 3-D grid; surplus workgroups return.

// The storage type; the f16 build (shader-f16) replaces this line. Arithmetic is f32.
alias S = f32;

const THREADS: u32 = 256u;

struct Params {
    tokens: u32,
    dim: u32,
    eps: f32,
}

@group(0) @binding(0) var<storage, read> x: array<S>;
@group(0) @binding(1) var<storage, read> w: array<S>;
@group(0) @binding(2) var<storage, read_write> out: array<S>;
@group(0) @binding(3) var<uniform> params: Params;

var<workgroup> partial: array<f32, 256>;

@compute @workgroup_size(256, 1, 1)
fn rms_norm_f32(
    @builtin(workgroup_id) group: vec3<u32>,
    @builtin(num_workgroups) groups: vec3<u32>,
    @builtin(local_invocation_index) lane: u32,
) {
    let row = (group.z * groups.y + group.y) * groups.x + group.x;
    if (row >= params.tokens) {
        return;
    }
    let base = row * params.dim;
    var sum = 0.0;
    for (var j = lane; j < params.dim; j += THREADS) {
        let v = f32(x[base + j]);
        sum = sum + v * v;
    }
    partial[lane] = sum;
    workgroupBarrier();
    for (var stride = THREADS / 2u; stride > 0u; stride = stride / 2u) {
        if (lane < stride) {
            partial[lane] = partial[lane] + partial[lane + stride];
        }
        workgroupBarrier();
    }
    // 1 / sqrt rather than inverseSqrt: WGSL allows inverseSqrt 2 ULP, and the reference
    // divides by a correctly rounded square root.
    let inv = 1.0 / sqrt(partial[0] / f32(params.dim) + params.eps);
    for (var j = lane; j < params.dim; j += THREADS) {
        out[base + j] = S(f32(x[base + j]) * inv * f32(w[j]));
    }
}
