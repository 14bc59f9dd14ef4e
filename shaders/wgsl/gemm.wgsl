// A plain tiled SGEMM through WebGPU, for comparison (the gemm suite: docs/design/measurement.md,
// "Counting FLOPs and bytes"): the M5 article's "16×16 tiled shared memory, a standard textbook
// implementation", the twin of shaders/cuda/gemm.cu's and shaders/metal/gemm.metal's gemm_tiled16_f32
// (same name, arguments and operations). C = A·B for square N×N row-major fp32 matrices, fp32
// accumulation. WebGPU reaches no vendor GEMM, so this kernel is the only GEMM a wgpu run measures, and
// it never sets a ceiling.
//
// Compiled at run time by wgpu (naga); BLOCK, the workgroup size, is an override constant that must be
// 256 (one 16×16 tile of C per workgroup; any other size computes garbage, which validation reports).
// Arguments at @group(0) @binding(i) in the order the suite passes them
// (python/apple_roofline/webgpu/layout.py): A, B, C, N, then the number of work items n = N·N.
//
// Workgroup g computes the 16×16 tile of C at tile row g / (N/16), tile column g % (N/16); invocation t
// of it the element (ty, tx) = (t / 16, t % 16) of that tile. N is a multiple of 16, so N·N is a whole
// number of workgroups; the `valid` flag (false only in the workgroups the backend's (x, y) dispatch
// shape adds past the last) skips the loads and the store, never the barriers, which stay in uniform
// control flow (N is a uniform). 2·N³ FLOPs, 3·N²·4 bytes of compulsory traffic. WGSL's fma need not
// fuse (the backend's fma_may_round_twice): the suite's GEMM check bounds the error either way.

override BLOCK: u32 = 256;

@group(0) @binding(0) var<storage, read> A: array<f32>;
@group(0) @binding(1) var<storage, read> B: array<f32>;
@group(0) @binding(2) var<storage, read_write> C: array<f32>;
@group(0) @binding(3) var<uniform> N: u32;
@group(0) @binding(4) var<uniform> n: u32;

var<workgroup> As: array<array<f32, 16>, 16>;
var<workgroup> Bs: array<array<f32, 16>, 16>;

@compute @workgroup_size(BLOCK)
fn gemm_tiled16_f32(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                    @builtin(local_invocation_index) t: u32) {
  let g = wid.y * nwg.x + wid.x;
  let tiles = N / 16u;
  let ty = t / 16u;
  let tx = t % 16u;
  let row = (g / tiles) * 16u + ty;
  let col = (g % tiles) * 16u + tx;
  let valid = g * 256u + t < n;
  var acc = 0.0;
  for (var k0 = 0u; k0 < N; k0 += 16u) {
    var a = 0.0;
    var b = 0.0;
    if (valid) {
      a = A[row * N + k0 + tx];
      b = B[(k0 + ty) * N + col];
    }
    As[ty][tx] = a;
    Bs[ty][tx] = b;
    workgroupBarrier();
    for (var kk = 0u; kk < 16u; kk++) { acc = fma(As[ty][kk], Bs[kk][tx], acc); }
    workgroupBarrier();
  }
  if (valid) { C[row * N + col] = acc; }
}
