// gelu_f32: out = 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))), the tanh approximation.
//
// The output is [gate results | up results]: element i < half_count reads gate[i], the rest
// read up[i - half_count]. One thread per output element; workgroups are numbered flat over
// a 3-D grid (diffcheck.launch.split_grid) and the tail past total is skipped.

// The storage type; diffcheck's f16 build (shader-f16) replaces this line. Arithmetic is f32.
alias S = f32;

// Declared for diffcheck: the launch plan (diffcheck_example_ops.gelu) uses the same value,
// and the adapter refuses a source whose value differs.
const THREADS: u32 = 256u;

struct Params {
    half_count: u32,
    total: u32,
    groups: u32,
}

@group(0) @binding(0) var<storage, read> gate: array<S>;
@group(0) @binding(1) var<storage, read> up: array<S>;
@group(0) @binding(2) var<storage, read_write> out: array<S>;
@group(0) @binding(3) var<uniform> params: Params;

const SQRT_2_OVER_PI: f32 = 0.7978845608028654;

fn gelu(x: f32) -> f32 {
    // tanh saturates to ±1 in f32 beyond |u| = 9.01; clamping there keeps an exp-based
    // tanh from overflowing (inf / inf) for large inputs without changing any result.
    let u = clamp(SQRT_2_OVER_PI * (x + 0.044715 * x * x * x), -10.0, 10.0);
    return 0.5 * x * (1.0 + tanh(u));
}

@compute @workgroup_size(256, 1, 1)
fn gelu_f32(
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
    var x: f32;
    if (i < params.half_count) {
        x = f32(gate[i]);
    } else {
        x = f32(up[i - params.half_count]);
    }
    out[i] = S(gelu(x));
}
