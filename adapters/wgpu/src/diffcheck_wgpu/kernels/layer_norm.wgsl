// layer_norm_f32: out[t, :] = (x[t, :] - mean) / sqrt(var + eps) · weight + bias, with the
// mean and the population variance over the row.
//
// One workgroup per row, two passes in f32: the mean by a tree reduction of strided sums,
// then the variance as the mean of squared deviations (not E[x²] - mean², which cancels
// catastrophically when the mean is large against the spread). Rows are a flat index over
// a 3-D grid; surplus workgroups return.

// The storage type; the f16 build (shader-f16) replaces this line. Arithmetic is f32.
alias S = f32;

const THREADS: u32 = 256u;

struct Params {
    tokens: u32,
    dim: u32,
    eps: f32,
}

@group(0) @binding(0) var<storage, read> x: array<S>;
@group(0) @binding(1) var<storage, read> weight: array<S>;
@group(0) @binding(2) var<storage, read> bias: array<S>;
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
fn layer_norm_f32(
    @builtin(workgroup_id) group: vec3<u32>,
    @builtin(num_workgroups) groups: vec3<u32>,
    @builtin(local_invocation_index) lane: u32,
) {
    let row = (group.z * groups.y + group.y) * groups.x + group.x;
    if (row >= params.tokens) {
        return;
    }
    let base = row * params.dim;
    let n = f32(params.dim);
    var local_sum = 0.0;
    for (var j = lane; j < params.dim; j += THREADS) {
        local_sum = local_sum + f32(x[base + j]);
    }
    let mean = reduce_sum(lane, local_sum) / n;
    var local_squares = 0.0;
    for (var j = lane; j < params.dim; j += THREADS) {
        let d = f32(x[base + j]) - mean;
        local_squares = local_squares + d * d;
    }
    let variance = reduce_sum(lane, local_squares) / n;
    // 1 / sqrt rather than inverseSqrt: WGSL allows inverseSqrt 2 ULP.
    let inv = 1.0 / sqrt(variance + params.eps);
    for (var j = lane; j < params.dim; j += THREADS) {
        out[base + j] = S((f32(x[base + j]) - mean) * inv * f32(weight[j]) + f32(bias[j]));
    }
}
