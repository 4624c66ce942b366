// gemv_f32: c[n] = B[n, k] · a[k] (the GEMM with m == 1), f32 accumulation.
//
// One workgroup computes ROWS outputs; the LANES threads of a row stride over k and their
// partial sums are combined by a tree reduction in workgroup memory.

// The storage type; the f16 build (shader-f16) replaces this line. Arithmetic is f32.
alias S = f32;

const ROWS: u32 = 8u;
const LANES: u32 = 32u;

struct Params {
    n: u32,
    k: u32,
    groups: u32,
}

@group(0) @binding(0) var<storage, read> a: array<S>;
@group(0) @binding(1) var<storage, read> b: array<S>;
@group(0) @binding(2) var<storage, read_write> c: array<S>;
@group(0) @binding(3) var<uniform> params: Params;

var<workgroup> partial: array<f32, 256>;  // [ROWS][LANES]

@compute @workgroup_size(32, 8, 1)
fn gemv_f32(
    @builtin(workgroup_id) group: vec3<u32>,
    @builtin(num_workgroups) groups: vec3<u32>,
    @builtin(local_invocation_id) local: vec3<u32>,
) {
    let flat = (group.z * groups.y + group.y) * groups.x + group.x;
    if (flat >= params.groups) {
        return;
    }
    let row = flat * ROWS + local.y;
    var sum = 0.0;
    if (row < params.n) {
        let base = row * params.k;
        for (var kk = local.x; kk < params.k; kk += LANES) {
            sum = sum + f32(a[kk]) * f32(b[base + kk]);
        }
    }
    let slot = local.y * LANES + local.x;
    partial[slot] = sum;
    workgroupBarrier();
    for (var stride = LANES / 2u; stride > 0u; stride = stride / 2u) {
        if (local.x < stride) {
            partial[slot] = partial[slot] + partial[slot + stride];
        }
        workgroupBarrier();
    }
    if (local.x == 0u && row < params.n) {
        c[row] = S(partial[slot]);
    }
}
