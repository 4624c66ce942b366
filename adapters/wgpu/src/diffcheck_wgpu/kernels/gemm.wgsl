// gemm_f32_tiled: C[m, n] = A[m, k] · B[n, k]^T, row-major f32, f32 accumulation.
//
// One workgroup computes one TILE_M x TILE_N output tile; tiles are numbered row-major
// (tile = tile_row * tiles_n + tile_col). The host lays the flat tile count out on a 3-D
// grid under the device's per-dimension limit (diffcheck.gpu_plan.split_grid); surplus
// workgroups return before touching memory. K is stepped TILE_K at a time through
// workgroup memory; loads past m, n or k read 0 and stores past m or n are skipped, so
// shapes that do not divide the tile are exact.

// The storage type; the f16 build (shader-f16) replaces this line. Arithmetic is f32.
alias S = f32;

const TILE_M: u32 = 64u;
const TILE_N: u32 = 32u;
const TILE_K: u32 = 32u;
const THREADS_X: u32 = 32u;
const THREADS_Y: u32 = 8u;
const THREADS: u32 = THREADS_X * THREADS_Y;
const ROWS_PER_THREAD: u32 = TILE_M / THREADS_Y;

struct Params {
    m: u32,
    n: u32,
    k: u32,
    tiles_n: u32,
    groups: u32,
}

@group(0) @binding(0) var<storage, read> a: array<S>;
@group(0) @binding(1) var<storage, read> b: array<S>;
@group(0) @binding(2) var<storage, read_write> c: array<S>;
@group(0) @binding(3) var<uniform> params: Params;

var<workgroup> a_tile: array<f32, 2048>;  // [TILE_M][TILE_K]
var<workgroup> b_tile: array<f32, 1024>;  // [TILE_N][TILE_K]

@compute @workgroup_size(32, 8, 1)
fn gemm_f32_tiled(
    @builtin(workgroup_id) group: vec3<u32>,
    @builtin(num_workgroups) groups: vec3<u32>,
    @builtin(local_invocation_id) local: vec3<u32>,
) {
    // workgroup_id and num_workgroups are uniform, so this return keeps the barriers below
    // in uniform control flow.
    let flat = (group.z * groups.y + group.y) * groups.x + group.x;
    if (flat >= params.groups) {
        return;
    }
    let row0 = (flat / params.tiles_n) * TILE_M;
    let col0 = (flat % params.tiles_n) * TILE_N;
    let lane = local.y * THREADS_X + local.x;
    let k = params.k;

    var acc: array<f32, ROWS_PER_THREAD>;
    for (var k0 = 0u; k0 < k; k0 += TILE_K) {
        for (var i = 0u; i < (TILE_M * TILE_K) / THREADS; i++) {
            let e = i * THREADS + lane;
            let r = row0 + e / TILE_K;
            let kk = k0 + e % TILE_K;
            var v = 0.0;
            if (r < params.m && kk < k) {
                v = f32(a[r * k + kk]);
            }
            a_tile[e] = v;
        }
        for (var i = 0u; i < (TILE_N * TILE_K) / THREADS; i++) {
            let e = i * THREADS + lane;
            let col = col0 + e / TILE_K;
            let kk = k0 + e % TILE_K;
            var v = 0.0;
            if (col < params.n && kk < k) {
                v = f32(b[col * k + kk]);
            }
            b_tile[e] = v;
        }
        workgroupBarrier();
        // Each thread owns output column local.x and rows local.y + THREADS_Y * i; the
        // products are summed in k order, as a plain dot product would.
        for (var kk = 0u; kk < TILE_K; kk++) {
            let bv = b_tile[local.x * TILE_K + kk];
            for (var i = 0u; i < ROWS_PER_THREAD; i++) {
                acc[i] = acc[i] + a_tile[(local.y + THREADS_Y * i) * TILE_K + kk] * bv;
            }
        }
        workgroupBarrier();
    }

    let col = col0 + local.x;
    if (col < params.n) {
        for (var i = 0u; i < ROWS_PER_THREAD; i++) {
            let r = row0 + local.y + THREADS_Y * i;
            if (r < params.m) {
                c[r * params.n + col] = S(acc[i]);
            }
        }
    }
}
