// add_rms_norm_f32: h = x + residual (the updated residual stream), then
// normed = h / sqrt(mean(h²) + eps) · weight; both are written.
//
// The output holds two rows of tokens · dim: h first, then normed. One workgroup per row:
// the sum of squares of h is a tree reduction in f32; normed is computed from the f32 h,
// not from the stored (possibly f16-rounded) copy. Rows are a flat index over a 3-D grid.

// The storage type; the f16 build (shader-f16) replaces this line. Arithmetic is f32.
alias S = f32;

const THREADS: u32 = 256u;

struct Params {
    tokens: u32,
    dim: u32,
    eps: f32,
}

@group(0) @binding(0) var<storage, read> x: array<S>;
@group(0) @binding(1) var<storage, read> residual: array<S>;
@group(0) @binding(2) var<storage, read> weight: array<S>;
@group(0) @binding(3) var<storage, read_write> out: array<S>;
@group(0) @binding(4) var<uniform> params: Params;

var<workgroup> partial: array<f32, 256>;

fn reduce_sum(lane: u32, value: f32) -> f32 {
    partial[lane] = value;
    workgroupBarrier();
    for (var stride = THREADS / 2u; stride > 0u; stride = stride / 2u) {
        if (lane < stride) {
            partial[lane] = partial[lane] + partial[lane + stride];
        }
        workgroupBarrier();
    }
    let result = partial[0];
    workgroupBarrier();
    return result;
}

@compute @workgroup_size(256, 1, 1)
fn add_rms_norm_f32(
    @builtin(workgroup_id) group: vec3<u32>,
    @builtin(num_workgroups) groups: vec3<u32>,
    @builtin(local_invocation_index) lane: u32,
) {
    let row = (group.z * groups.y + group.y) * groups.x + group.x;
    if (row >= params.tokens) {
        return;
    }
    let base = row * params.dim;
    let normed_base = params.tokens * params.dim + base;
    var local_squares = 0.0;
    for (var j = lane; j < params.dim; j += THREADS) {
        let h = f32(x[base + j]) + f32(residual[base + j]);
        out[base + j] = S(h);
        local_squares = local_squares + h * h;
    }
    let inv = 1.0 / sqrt(reduce_sum(lane, local_squares) / f32(params.dim) + params.eps);
    for (var j = lane; j < params.dim; j += THREADS) {
        let h = f32(x[base + j]) + f32(residual[base + j]);
        out[normed_base + j] = S(h * inv * f32(weight[j]));
    }
}
