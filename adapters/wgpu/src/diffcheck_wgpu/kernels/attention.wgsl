// attention_f32: scaled dot-product attention with grouped-query heads and an optional
// causal mask; the output is head-major, out[h, t, :].
//
// Query head h reads kv head g = h / (heads / kv_heads). Query t is at position
// kv_len - tokens + t and, with causal set, sees keys j <= that position. One workgroup per
// (head, query), numbered h · tokens + t over a 3-D grid:
//   1. each thread scores a strided slice of the keys (scale · q·k, f32 dot product); a tree
//      reduction gives the row maximum;
//   2. keys are taken THREADS at a time: each thread writes exp(score - max) of one key to
//      workgroup memory, then each thread accumulates p · v for the output dimensions it
//      owns (DIMS_PER_THREAD of them, THREADS apart) in f32; the exp sums are tree-reduced
//      and the output divided by them.
// Step 2 repeats per block of THREADS · DIMS_PER_THREAD output dimensions, so head_dim has
// no upper limit (scores are recomputed per block, identically).

// The storage type; the f16 build (shader-f16) replaces this line. Arithmetic is f32.
alias S = f32;

const THREADS: u32 = 128u;
const DIMS_PER_THREAD: u32 = 4u;

struct Params {
    tokens: u32,
    kv_len: u32,
    heads: u32,
    kv_heads: u32,
    head_dim: u32,
    causal: u32,
    scale: f32,
    groups: u32,
}

@group(0) @binding(0) var<storage, read> q: array<S>;
@group(0) @binding(1) var<storage, read> k: array<S>;
@group(0) @binding(2) var<storage, read> v: array<S>;
@group(0) @binding(3) var<storage, read_write> out: array<S>;
@group(0) @binding(4) var<uniform> params: Params;

var<workgroup> partial: array<f32, 128>;
var<workgroup> probs: array<f32, 128>;

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

fn score(q_base: u32, key: u32, g: u32) -> f32 {
    let k_base = (key * params.kv_heads + g) * params.head_dim;
    var dot = 0.0;
    for (var d = 0u; d < params.head_dim; d++) {
        dot = dot + f32(q[q_base + d]) * f32(k[k_base + d]);
    }
    return dot * params.scale;
}

@compute @workgroup_size(128, 1, 1)
fn attention_f32(
    @builtin(workgroup_id) group: vec3<u32>,
    @builtin(num_workgroups) groups: vec3<u32>,
    @builtin(local_invocation_index) lane: u32,
) {
    let flat = (group.z * groups.y + group.y) * groups.x + group.x;
    if (flat >= params.groups) {
        return;
    }
    let h = flat / params.tokens;
    let t = flat % params.tokens;
    let g = h / (params.heads / params.kv_heads);
    var visible = params.kv_len;
    if (params.causal != 0u) {
        visible = params.kv_len - params.tokens + t + 1u;
    }
    let q_base = (t * params.heads + h) * params.head_dim;
    let out_base = (h * params.tokens + t) * params.head_dim;

    var local_max = -3.4028234663852886e38;
    for (var j = lane; j < visible; j += THREADS) {
        local_max = max(local_max, score(q_base, j, g));
    }
    let row_max = reduce_max(lane, local_max);

    for (var d0 = 0u; d0 < params.head_dim; d0 += THREADS * DIMS_PER_THREAD) {
        var acc: array<f32, DIMS_PER_THREAD>;
        // Zeroed explicitly: some WGSL translations hoist the declaration out of the loop,
        // and the second block of dimensions would start from the first block's sums.
        for (var c = 0u; c < DIMS_PER_THREAD; c++) {
            acc[c] = 0.0;
        }
        var local_sum = 0.0;
        for (var j0 = 0u; j0 < visible; j0 += THREADS) {
            let j = j0 + lane;
            var p = 0.0;
            if (j < visible) {
                p = exp(score(q_base, j, g) - row_max);
            }
            local_sum = local_sum + p;
            probs[lane] = p;
            workgroupBarrier();
            let count = min(THREADS, visible - j0);
            for (var c = 0u; c < DIMS_PER_THREAD; c++) {
                let d = d0 + c * THREADS + lane;
                if (d < params.head_dim) {
                    var sum = 0.0;
                    for (var jj = 0u; jj < count; jj++) {
                        sum = sum + probs[jj] * f32(v[((j0 + jj) * params.kv_heads + g) * params.head_dim + d]);
                    }
                    acc[c] = acc[c] + sum;
                }
            }
            workgroupBarrier();
        }
        let total = reduce_sum(lane, local_sum);
        for (var c = 0u; c < DIMS_PER_THREAD; c++) {
            let d = d0 + c * THREADS + lane;
            if (d < params.head_dim) {
                out[out_base + d] = S(acc[c] / total);
            }
        }
    }
}
