// softmax_f32: out[t, j] = exp(x[t, j] / T - m_t) / sum over visible j of the same, where
// m_t is the row's largest visible x / T (max-subtracted, so exp never overflows).
//
// With causal set, row t is query position dim - tokens + t and sees columns j <= that
// position; the masked columns are written as exactly 0.0. One workgroup per row: each
// thread loops over a strided slice of the row, tree reductions in workgroup memory give
// the maximum and then the f32 sum. Rows are a flat index over a 3-D grid.

// The storage type; the f16 build (shader-f16) replaces this line. Arithmetic is f32.
alias S = f32;

const THREADS: u32 = 256u;

struct Params {
    tokens: u32,
    dim: u32,
    causal: u32,
    temperature: f32,
}

@group(0) @binding(0) var<storage, read> x: array<S>;
@group(0) @binding(1) var<storage, read_write> out: array<S>;
@group(0) @binding(2) var<uniform> params: Params;

var<workgroup> partial: array<f32, 256>;

// Combine partial[0..THREADS) into partial[0]; every thread returns it. The closing barrier
// keeps a fast thread from overwriting partial before all have read the result.
fn reduce_max(lane: u32, value: f32) -> f32 {
    partial[lane] = value;
    workgroupBarrier();
    for (var stride = THREADS / 2u; stride > 0u; stride = stride / 2u) {
        if (lane < stride) {
            partial[lane] = max(partial[lane], partial[lane + stride]);
        }
        workgroupBarrier();
    }
    let result = partial[0];
    workgroupBarrier();
    return result;
}

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
fn softmax_f32(
    @builtin(workgroup_id) group: vec3<u32>,
    @builtin(num_workgroups) groups: vec3<u32>,
    @builtin(local_invocation_index) lane: u32,
) {
    let row = (group.z * groups.y + group.y) * groups.x + group.x;
    if (row >= params.tokens) {
        return;
    }
    let base = row * params.dim;
    // At least one column is visible (causal requires tokens <= dim).
    var visible = params.dim;
    if (params.causal != 0u) {
        visible = params.dim - params.tokens + row + 1u;
    }
    // Divide by T rather than multiply by 1/T: one rounding, as the reference's x / T.
    var local_max = -3.4028234663852886e38;
    for (var j = lane; j < visible; j += THREADS) {
        local_max = max(local_max, f32(x[base + j]) / params.temperature);
    }
    let row_max = reduce_max(lane, local_max);
    var local_sum = 0.0;
    for (var j = lane; j < visible; j += THREADS) {
        local_sum = local_sum + exp(f32(x[base + j]) / params.temperature - row_max);
    }
    let total = reduce_sum(lane, local_sum);
    for (var j = lane; j < params.dim; j += THREADS) {
        var value = 0.0;
        if (j < visible) {
            value = exp(f32(x[base + j]) / params.temperature - row_max) / total;
        }
        out[base + j] = S(value);
    }
}
