enable f16;

// FMA-chain kernels of the sweep and peak suites: scalar_indepK in fp16 (docs/design/measurement.md, "Counting FLOPs and
// bytes"; python/apple_roofline/suites/fma.py documents each recurrence and holds the NumPy reference
// every output is checked against). One work item is one invocation. The CUDA twins are
// shaders/cuda/fma.cu, the Metal twins shaders/metal/fma.metal: the same recurrences, operation for
// operation. The FMA kernels are four WGSL files (vector and scalar, fp32 and fp16: one binding has one
// element type) and vec4_cross4 two more (it takes no `a`, so its work-item count is binding 2).
//
// Compiled at run time by wgpu (naga); BLOCK (the workgroup size) and F are override constants set by
// the kernel table; CHAIN_A, the chains' additive constant as a literal (fma.cu's CHAIN_A), is one too: the
// argument `a` is bound all the same and the NumPy reference uses it, so a CHAIN_A that disagreed
// with it would fail validation. Arguments at @group(0) @binding(i) in the order the suite passes
// them (python/apple_roofline/webgpu/layout.py): in, out, a (an f32 uniform), then the number of work items n;
// the guard mirrors CUDA's. fp16 needs the adapter's shader-f16 (enable f16): vec4<f16> per lane
// is what fma.cu's two half2 registers compute, and f16(CHAIN_A) is exact.
//
// Loops: WGSL has no unroll hint, so the F loop is written out several iterations a trip (then F modulo
// that many one at a time: the same recurrence, the same result), and a trip's counter, compare and
// branch take a few issue slots among hundreds of FMAs, as in fma.cu's unrolled bodies.

override BLOCK: u32 = 256;
override F: i32;
override CHAIN_A: f32 = -0.75;

@group(0) @binding(0) var<storage, read> inp: array<f16>;
@group(0) @binding(1) var<storage, read_write> out: array<f16>;
@group(0) @binding(2) var<uniform> a: f32;
@group(0) @binding(3) var<uniform> n: u32;

fn item(wid: vec3<u32>, nwg: vec3<u32>, lid: u32) -> u32 {
  return (wid.y * nwg.x + wid.x) * BLOCK + lid;
}

@compute @workgroup_size(BLOCK)
fn scalar_indep8_f16(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
    @builtin(local_invocation_index) lid: u32) {
  let i = item(wid, nwg, lid);
  if (i >= n) { return; }
  let ah = f16(CHAIN_A);
  let base = i * 8u;
  var c0 = inp[base + 0u];
  var c1 = inp[base + 1u];
  var c2 = inp[base + 2u];
  var c3 = inp[base + 3u];
  var c4 = inp[base + 4u];
  var c5 = inp[base + 5u];
  var c6 = inp[base + 6u];
  var c7 = inp[base + 7u];
  for (var it = 0; it < F / 32; it++) {  // 32 iterations a trip
    c0 = fma(c0, c0, ah); c1 = fma(c1, c1, ah); c2 = fma(c2, c2, ah); c3 = fma(c3, c3, ah); c4 = fma(c4, c4, ah); c5 = fma(c5, c5, ah); c6 = fma(c6, c6, ah); c7 = fma(c7, c7, ah);
    c0 = fma(c0, c0, ah); c1 = fma(c1, c1, ah); c2 = fma(c2, c2, ah); c3 = fma(c3, c3, ah); c4 = fma(c4, c4, ah); c5 = fma(c5, c5, ah); c6 = fma(c6, c6, ah); c7 = fma(c7, c7, ah);
    c0 = fma(c0, c0, ah); c1 = fma(c1, c1, ah); c2 = fma(c2, c2, ah); c3 = fma(c3, c3, ah); c4 = fma(c4, c4, ah); c5 = fma(c5, c5, ah); c6 = fma(c6, c6, ah); c7 = fma(c7, c7, ah);
    c0 = fma(c0, c0, ah); c1 = fma(c1, c1, ah); c2 = fma(c2, c2, ah); c3 = fma(c3, c3, ah); c4 = fma(c4, c4, ah); c5 = fma(c5, c5, ah); c6 = fma(c6, c6, ah); c7 = fma(c7, c7, ah);
    c0 = fma(c0, c0, ah); c1 = fma(c1, c1, ah); c2 = fma(c2, c2, ah); c3 = fma(c3, c3, ah); c4 = fma(c4, c4, ah); c5 = fma(c5, c5, ah); c6 = fma(c6, c6, ah); c7 = fma(c7, c7, ah);
    c0 = fma(c0, c0, ah); c1 = fma(c1, c1, ah); c2 = fma(c2, c2, ah); c3 = fma(c3, c3, ah); c4 = fma(c4, c4, ah); c5 = fma(c5, c5, ah); c6 = fma(c6, c6, ah); c7 = fma(c7, c7, ah);
    c0 = fma(c0, c0, ah); c1 = fma(c1, c1, ah); c2 = fma(c2, c2, ah); c3 = fma(c3, c3, ah); c4 = fma(c4, c4, ah); c5 = fma(c5, c5, ah); c6 = fma(c6, c6, ah); c7 = fma(c7, c7, ah);
    c0 = fma(c0, c0, ah); c1 = fma(c1, c1, ah); c2 = fma(c2, c2, ah); c3 = fma(c3, c3, ah); c4 = fma(c4, c4, ah); c5 = fma(c5, c5, ah); c6 = fma(c6, c6, ah); c7 = fma(c7, c7, ah);
    c0 = fma(c0, c0, ah); c1 = fma(c1, c1, ah); c2 = fma(c2, c2, ah); c3 = fma(c3, c3, ah); c4 = fma(c4, c4, ah); c5 = fma(c5, c5, ah); c6 = fma(c6, c6, ah); c7 = fma(c7, c7, ah);
    c0 = fma(c0, c0, ah); c1 = fma(c1, c1, ah); c2 = fma(c2, c2, ah); c3 = fma(c3, c3, ah); c4 = fma(c4, c4, ah); c5 = fma(c5, c5, ah); c6 = fma(c6, c6, ah); c7 = fma(c7, c7, ah);
    c0 = fma(c0, c0, ah); c1 = fma(c1, c1, ah); c2 = fma(c2, c2, ah); c3 = fma(c3, c3, ah); c4 = fma(c4, c4, ah); c5 = fma(c5, c5, ah); c6 = fma(c6, c6, ah); c7 = fma(c7, c7, ah);
    c0 = fma(c0, c0, ah); c1 = fma(c1, c1, ah); c2 = fma(c2, c2, ah); c3 = fma(c3, c3, ah); c4 = fma(c4, c4, ah); c5 = fma(c5, c5, ah); c6 = fma(c6, c6, ah); c7 = fma(c7, c7, ah);
    c0 = fma(c0, c0, ah); c1 = fma(c1, c1, ah); c2 = fma(c2, c2, ah); c3 = fma(c3, c3, ah); c4 = fma(c4, c4, ah); c5 = fma(c5, c5, ah); c6 = fma(c6, c6, ah); c7 = fma(c7, c7, ah);
    c0 = fma(c0, c0, ah); c1 = fma(c1, c1, ah); c2 = fma(c2, c2, ah); c3 = fma(c3, c3, ah); c4 = fma(c4, c4, ah); c5 = fma(c5, c5, ah); c6 = fma(c6, c6, ah); c7 = fma(c7, c7, ah);
    c0 = fma(c0, c0, ah); c1 = fma(c1, c1, ah); c2 = fma(c2, c2, ah); c3 = fma(c3, c3, ah); c4 = fma(c4, c4, ah); c5 = fma(c5, c5, ah); c6 = fma(c6, c6, ah); c7 = fma(c7, c7, ah);
    c0 = fma(c0, c0, ah); c1 = fma(c1, c1, ah); c2 = fma(c2, c2, ah); c3 = fma(c3, c3, ah); c4 = fma(c4, c4, ah); c5 = fma(c5, c5, ah); c6 = fma(c6, c6, ah); c7 = fma(c7, c7, ah);
    c0 = fma(c0, c0, ah); c1 = fma(c1, c1, ah); c2 = fma(c2, c2, ah); c3 = fma(c3, c3, ah); c4 = fma(c4, c4, ah); c5 = fma(c5, c5, ah); c6 = fma(c6, c6, ah); c7 = fma(c7, c7, ah);
    c0 = fma(c0, c0, ah); c1 = fma(c1, c1, ah); c2 = fma(c2, c2, ah); c3 = fma(c3, c3, ah); c4 = fma(c4, c4, ah); c5 = fma(c5, c5, ah); c6 = fma(c6, c6, ah); c7 = fma(c7, c7, ah);
    c0 = fma(c0, c0, ah); c1 = fma(c1, c1, ah); c2 = fma(c2, c2, ah); c3 = fma(c3, c3, ah); c4 = fma(c4, c4, ah); c5 = fma(c5, c5, ah); c6 = fma(c6, c6, ah); c7 = fma(c7, c7, ah);
    c0 = fma(c0, c0, ah); c1 = fma(c1, c1, ah); c2 = fma(c2, c2, ah); c3 = fma(c3, c3, ah); c4 = fma(c4, c4, ah); c5 = fma(c5, c5, ah); c6 = fma(c6, c6, ah); c7 = fma(c7, c7, ah);
    c0 = fma(c0, c0, ah); c1 = fma(c1, c1, ah); c2 = fma(c2, c2, ah); c3 = fma(c3, c3, ah); c4 = fma(c4, c4, ah); c5 = fma(c5, c5, ah); c6 = fma(c6, c6, ah); c7 = fma(c7, c7, ah);
    c0 = fma(c0, c0, ah); c1 = fma(c1, c1, ah); c2 = fma(c2, c2, ah); c3 = fma(c3, c3, ah); c4 = fma(c4, c4, ah); c5 = fma(c5, c5, ah); c6 = fma(c6, c6, ah); c7 = fma(c7, c7, ah);
    c0 = fma(c0, c0, ah); c1 = fma(c1, c1, ah); c2 = fma(c2, c2, ah); c3 = fma(c3, c3, ah); c4 = fma(c4, c4, ah); c5 = fma(c5, c5, ah); c6 = fma(c6, c6, ah); c7 = fma(c7, c7, ah);
    c0 = fma(c0, c0, ah); c1 = fma(c1, c1, ah); c2 = fma(c2, c2, ah); c3 = fma(c3, c3, ah); c4 = fma(c4, c4, ah); c5 = fma(c5, c5, ah); c6 = fma(c6, c6, ah); c7 = fma(c7, c7, ah);
    c0 = fma(c0, c0, ah); c1 = fma(c1, c1, ah); c2 = fma(c2, c2, ah); c3 = fma(c3, c3, ah); c4 = fma(c4, c4, ah); c5 = fma(c5, c5, ah); c6 = fma(c6, c6, ah); c7 = fma(c7, c7, ah);
    c0 = fma(c0, c0, ah); c1 = fma(c1, c1, ah); c2 = fma(c2, c2, ah); c3 = fma(c3, c3, ah); c4 = fma(c4, c4, ah); c5 = fma(c5, c5, ah); c6 = fma(c6, c6, ah); c7 = fma(c7, c7, ah);
    c0 = fma(c0, c0, ah); c1 = fma(c1, c1, ah); c2 = fma(c2, c2, ah); c3 = fma(c3, c3, ah); c4 = fma(c4, c4, ah); c5 = fma(c5, c5, ah); c6 = fma(c6, c6, ah); c7 = fma(c7, c7, ah);
    c0 = fma(c0, c0, ah); c1 = fma(c1, c1, ah); c2 = fma(c2, c2, ah); c3 = fma(c3, c3, ah); c4 = fma(c4, c4, ah); c5 = fma(c5, c5, ah); c6 = fma(c6, c6, ah); c7 = fma(c7, c7, ah);
    c0 = fma(c0, c0, ah); c1 = fma(c1, c1, ah); c2 = fma(c2, c2, ah); c3 = fma(c3, c3, ah); c4 = fma(c4, c4, ah); c5 = fma(c5, c5, ah); c6 = fma(c6, c6, ah); c7 = fma(c7, c7, ah);
    c0 = fma(c0, c0, ah); c1 = fma(c1, c1, ah); c2 = fma(c2, c2, ah); c3 = fma(c3, c3, ah); c4 = fma(c4, c4, ah); c5 = fma(c5, c5, ah); c6 = fma(c6, c6, ah); c7 = fma(c7, c7, ah);
    c0 = fma(c0, c0, ah); c1 = fma(c1, c1, ah); c2 = fma(c2, c2, ah); c3 = fma(c3, c3, ah); c4 = fma(c4, c4, ah); c5 = fma(c5, c5, ah); c6 = fma(c6, c6, ah); c7 = fma(c7, c7, ah);
    c0 = fma(c0, c0, ah); c1 = fma(c1, c1, ah); c2 = fma(c2, c2, ah); c3 = fma(c3, c3, ah); c4 = fma(c4, c4, ah); c5 = fma(c5, c5, ah); c6 = fma(c6, c6, ah); c7 = fma(c7, c7, ah);
  }
  for (var it = 0; it < F % 32; it++) {
    c0 = fma(c0, c0, ah); c1 = fma(c1, c1, ah); c2 = fma(c2, c2, ah); c3 = fma(c3, c3, ah); c4 = fma(c4, c4, ah); c5 = fma(c5, c5, ah); c6 = fma(c6, c6, ah); c7 = fma(c7, c7, ah);
  }
  out[base + 0u] = c0;
  out[base + 1u] = c1;
  out[base + 2u] = c2;
  out[base + 3u] = c3;
  out[base + 4u] = c4;
  out[base + 5u] = c5;
  out[base + 6u] = c6;
  out[base + 7u] = c7;
}

@compute @workgroup_size(BLOCK)
fn scalar_indep16_f16(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
    @builtin(local_invocation_index) lid: u32) {
  let i = item(wid, nwg, lid);
  if (i >= n) { return; }
  let ah = f16(CHAIN_A);
  let base = i * 16u;
  var c0 = inp[base + 0u];
  var c1 = inp[base + 1u];
  var c2 = inp[base + 2u];
  var c3 = inp[base + 3u];
  var c4 = inp[base + 4u];
  var c5 = inp[base + 5u];
  var c6 = inp[base + 6u];
  var c7 = inp[base + 7u];
  var c8 = inp[base + 8u];
  var c9 = inp[base + 9u];
  var c10 = inp[base + 10u];
  var c11 = inp[base + 11u];
  var c12 = inp[base + 12u];
  var c13 = inp[base + 13u];
  var c14 = inp[base + 14u];
  var c15 = inp[base + 15u];
  for (var it = 0; it < F / 16; it++) {  // 16 iterations a trip
    c0 = fma(c0, c0, ah); c1 = fma(c1, c1, ah); c2 = fma(c2, c2, ah); c3 = fma(c3, c3, ah); c4 = fma(c4, c4, ah); c5 = fma(c5, c5, ah); c6 = fma(c6, c6, ah); c7 = fma(c7, c7, ah); c8 = fma(c8, c8, ah); c9 = fma(c9, c9, ah); c10 = fma(c10, c10, ah); c11 = fma(c11, c11, ah); c12 = fma(c12, c12, ah); c13 = fma(c13, c13, ah); c14 = fma(c14, c14, ah); c15 = fma(c15, c15, ah);
    c0 = fma(c0, c0, ah); c1 = fma(c1, c1, ah); c2 = fma(c2, c2, ah); c3 = fma(c3, c3, ah); c4 = fma(c4, c4, ah); c5 = fma(c5, c5, ah); c6 = fma(c6, c6, ah); c7 = fma(c7, c7, ah); c8 = fma(c8, c8, ah); c9 = fma(c9, c9, ah); c10 = fma(c10, c10, ah); c11 = fma(c11, c11, ah); c12 = fma(c12, c12, ah); c13 = fma(c13, c13, ah); c14 = fma(c14, c14, ah); c15 = fma(c15, c15, ah);
    c0 = fma(c0, c0, ah); c1 = fma(c1, c1, ah); c2 = fma(c2, c2, ah); c3 = fma(c3, c3, ah); c4 = fma(c4, c4, ah); c5 = fma(c5, c5, ah); c6 = fma(c6, c6, ah); c7 = fma(c7, c7, ah); c8 = fma(c8, c8, ah); c9 = fma(c9, c9, ah); c10 = fma(c10, c10, ah); c11 = fma(c11, c11, ah); c12 = fma(c12, c12, ah); c13 = fma(c13, c13, ah); c14 = fma(c14, c14, ah); c15 = fma(c15, c15, ah);
    c0 = fma(c0, c0, ah); c1 = fma(c1, c1, ah); c2 = fma(c2, c2, ah); c3 = fma(c3, c3, ah); c4 = fma(c4, c4, ah); c5 = fma(c5, c5, ah); c6 = fma(c6, c6, ah); c7 = fma(c7, c7, ah); c8 = fma(c8, c8, ah); c9 = fma(c9, c9, ah); c10 = fma(c10, c10, ah); c11 = fma(c11, c11, ah); c12 = fma(c12, c12, ah); c13 = fma(c13, c13, ah); c14 = fma(c14, c14, ah); c15 = fma(c15, c15, ah);
    c0 = fma(c0, c0, ah); c1 = fma(c1, c1, ah); c2 = fma(c2, c2, ah); c3 = fma(c3, c3, ah); c4 = fma(c4, c4, ah); c5 = fma(c5, c5, ah); c6 = fma(c6, c6, ah); c7 = fma(c7, c7, ah); c8 = fma(c8, c8, ah); c9 = fma(c9, c9, ah); c10 = fma(c10, c10, ah); c11 = fma(c11, c11, ah); c12 = fma(c12, c12, ah); c13 = fma(c13, c13, ah); c14 = fma(c14, c14, ah); c15 = fma(c15, c15, ah);
    c0 = fma(c0, c0, ah); c1 = fma(c1, c1, ah); c2 = fma(c2, c2, ah); c3 = fma(c3, c3, ah); c4 = fma(c4, c4, ah); c5 = fma(c5, c5, ah); c6 = fma(c6, c6, ah); c7 = fma(c7, c7, ah); c8 = fma(c8, c8, ah); c9 = fma(c9, c9, ah); c10 = fma(c10, c10, ah); c11 = fma(c11, c11, ah); c12 = fma(c12, c12, ah); c13 = fma(c13, c13, ah); c14 = fma(c14, c14, ah); c15 = fma(c15, c15, ah);
    c0 = fma(c0, c0, ah); c1 = fma(c1, c1, ah); c2 = fma(c2, c2, ah); c3 = fma(c3, c3, ah); c4 = fma(c4, c4, ah); c5 = fma(c5, c5, ah); c6 = fma(c6, c6, ah); c7 = fma(c7, c7, ah); c8 = fma(c8, c8, ah); c9 = fma(c9, c9, ah); c10 = fma(c10, c10, ah); c11 = fma(c11, c11, ah); c12 = fma(c12, c12, ah); c13 = fma(c13, c13, ah); c14 = fma(c14, c14, ah); c15 = fma(c15, c15, ah);
    c0 = fma(c0, c0, ah); c1 = fma(c1, c1, ah); c2 = fma(c2, c2, ah); c3 = fma(c3, c3, ah); c4 = fma(c4, c4, ah); c5 = fma(c5, c5, ah); c6 = fma(c6, c6, ah); c7 = fma(c7, c7, ah); c8 = fma(c8, c8, ah); c9 = fma(c9, c9, ah); c10 = fma(c10, c10, ah); c11 = fma(c11, c11, ah); c12 = fma(c12, c12, ah); c13 = fma(c13, c13, ah); c14 = fma(c14, c14, ah); c15 = fma(c15, c15, ah);
    c0 = fma(c0, c0, ah); c1 = fma(c1, c1, ah); c2 = fma(c2, c2, ah); c3 = fma(c3, c3, ah); c4 = fma(c4, c4, ah); c5 = fma(c5, c5, ah); c6 = fma(c6, c6, ah); c7 = fma(c7, c7, ah); c8 = fma(c8, c8, ah); c9 = fma(c9, c9, ah); c10 = fma(c10, c10, ah); c11 = fma(c11, c11, ah); c12 = fma(c12, c12, ah); c13 = fma(c13, c13, ah); c14 = fma(c14, c14, ah); c15 = fma(c15, c15, ah);
    c0 = fma(c0, c0, ah); c1 = fma(c1, c1, ah); c2 = fma(c2, c2, ah); c3 = fma(c3, c3, ah); c4 = fma(c4, c4, ah); c5 = fma(c5, c5, ah); c6 = fma(c6, c6, ah); c7 = fma(c7, c7, ah); c8 = fma(c8, c8, ah); c9 = fma(c9, c9, ah); c10 = fma(c10, c10, ah); c11 = fma(c11, c11, ah); c12 = fma(c12, c12, ah); c13 = fma(c13, c13, ah); c14 = fma(c14, c14, ah); c15 = fma(c15, c15, ah);
    c0 = fma(c0, c0, ah); c1 = fma(c1, c1, ah); c2 = fma(c2, c2, ah); c3 = fma(c3, c3, ah); c4 = fma(c4, c4, ah); c5 = fma(c5, c5, ah); c6 = fma(c6, c6, ah); c7 = fma(c7, c7, ah); c8 = fma(c8, c8, ah); c9 = fma(c9, c9, ah); c10 = fma(c10, c10, ah); c11 = fma(c11, c11, ah); c12 = fma(c12, c12, ah); c13 = fma(c13, c13, ah); c14 = fma(c14, c14, ah); c15 = fma(c15, c15, ah);
    c0 = fma(c0, c0, ah); c1 = fma(c1, c1, ah); c2 = fma(c2, c2, ah); c3 = fma(c3, c3, ah); c4 = fma(c4, c4, ah); c5 = fma(c5, c5, ah); c6 = fma(c6, c6, ah); c7 = fma(c7, c7, ah); c8 = fma(c8, c8, ah); c9 = fma(c9, c9, ah); c10 = fma(c10, c10, ah); c11 = fma(c11, c11, ah); c12 = fma(c12, c12, ah); c13 = fma(c13, c13, ah); c14 = fma(c14, c14, ah); c15 = fma(c15, c15, ah);
    c0 = fma(c0, c0, ah); c1 = fma(c1, c1, ah); c2 = fma(c2, c2, ah); c3 = fma(c3, c3, ah); c4 = fma(c4, c4, ah); c5 = fma(c5, c5, ah); c6 = fma(c6, c6, ah); c7 = fma(c7, c7, ah); c8 = fma(c8, c8, ah); c9 = fma(c9, c9, ah); c10 = fma(c10, c10, ah); c11 = fma(c11, c11, ah); c12 = fma(c12, c12, ah); c13 = fma(c13, c13, ah); c14 = fma(c14, c14, ah); c15 = fma(c15, c15, ah);
    c0 = fma(c0, c0, ah); c1 = fma(c1, c1, ah); c2 = fma(c2, c2, ah); c3 = fma(c3, c3, ah); c4 = fma(c4, c4, ah); c5 = fma(c5, c5, ah); c6 = fma(c6, c6, ah); c7 = fma(c7, c7, ah); c8 = fma(c8, c8, ah); c9 = fma(c9, c9, ah); c10 = fma(c10, c10, ah); c11 = fma(c11, c11, ah); c12 = fma(c12, c12, ah); c13 = fma(c13, c13, ah); c14 = fma(c14, c14, ah); c15 = fma(c15, c15, ah);
    c0 = fma(c0, c0, ah); c1 = fma(c1, c1, ah); c2 = fma(c2, c2, ah); c3 = fma(c3, c3, ah); c4 = fma(c4, c4, ah); c5 = fma(c5, c5, ah); c6 = fma(c6, c6, ah); c7 = fma(c7, c7, ah); c8 = fma(c8, c8, ah); c9 = fma(c9, c9, ah); c10 = fma(c10, c10, ah); c11 = fma(c11, c11, ah); c12 = fma(c12, c12, ah); c13 = fma(c13, c13, ah); c14 = fma(c14, c14, ah); c15 = fma(c15, c15, ah);
    c0 = fma(c0, c0, ah); c1 = fma(c1, c1, ah); c2 = fma(c2, c2, ah); c3 = fma(c3, c3, ah); c4 = fma(c4, c4, ah); c5 = fma(c5, c5, ah); c6 = fma(c6, c6, ah); c7 = fma(c7, c7, ah); c8 = fma(c8, c8, ah); c9 = fma(c9, c9, ah); c10 = fma(c10, c10, ah); c11 = fma(c11, c11, ah); c12 = fma(c12, c12, ah); c13 = fma(c13, c13, ah); c14 = fma(c14, c14, ah); c15 = fma(c15, c15, ah);
  }
  for (var it = 0; it < F % 16; it++) {
    c0 = fma(c0, c0, ah); c1 = fma(c1, c1, ah); c2 = fma(c2, c2, ah); c3 = fma(c3, c3, ah); c4 = fma(c4, c4, ah); c5 = fma(c5, c5, ah); c6 = fma(c6, c6, ah); c7 = fma(c7, c7, ah); c8 = fma(c8, c8, ah); c9 = fma(c9, c9, ah); c10 = fma(c10, c10, ah); c11 = fma(c11, c11, ah); c12 = fma(c12, c12, ah); c13 = fma(c13, c13, ah); c14 = fma(c14, c14, ah); c15 = fma(c15, c15, ah);
  }
  out[base + 0u] = c0;
  out[base + 1u] = c1;
  out[base + 2u] = c2;
  out[base + 3u] = c3;
  out[base + 4u] = c4;
  out[base + 5u] = c5;
  out[base + 6u] = c6;
  out[base + 7u] = c7;
  out[base + 8u] = c8;
  out[base + 9u] = c9;
  out[base + 10u] = c10;
  out[base + 11u] = c11;
  out[base + 12u] = c12;
  out[base + 13u] = c13;
  out[base + 14u] = c14;
  out[base + 15u] = c15;
}

@compute @workgroup_size(BLOCK)
fn scalar_indep32_f16(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
    @builtin(local_invocation_index) lid: u32) {
  let i = item(wid, nwg, lid);
  if (i >= n) { return; }
  let ah = f16(CHAIN_A);
  let base = i * 32u;
  var c0 = inp[base + 0u];
  var c1 = inp[base + 1u];
  var c2 = inp[base + 2u];
  var c3 = inp[base + 3u];
  var c4 = inp[base + 4u];
  var c5 = inp[base + 5u];
  var c6 = inp[base + 6u];
  var c7 = inp[base + 7u];
  var c8 = inp[base + 8u];
  var c9 = inp[base + 9u];
  var c10 = inp[base + 10u];
  var c11 = inp[base + 11u];
  var c12 = inp[base + 12u];
  var c13 = inp[base + 13u];
  var c14 = inp[base + 14u];
  var c15 = inp[base + 15u];
  var c16 = inp[base + 16u];
  var c17 = inp[base + 17u];
  var c18 = inp[base + 18u];
  var c19 = inp[base + 19u];
  var c20 = inp[base + 20u];
  var c21 = inp[base + 21u];
  var c22 = inp[base + 22u];
  var c23 = inp[base + 23u];
  var c24 = inp[base + 24u];
  var c25 = inp[base + 25u];
  var c26 = inp[base + 26u];
  var c27 = inp[base + 27u];
  var c28 = inp[base + 28u];
  var c29 = inp[base + 29u];
  var c30 = inp[base + 30u];
  var c31 = inp[base + 31u];
  for (var it = 0; it < F / 16; it++) {  // 16 iterations a trip
    c0 = fma(c0, c0, ah); c1 = fma(c1, c1, ah); c2 = fma(c2, c2, ah); c3 = fma(c3, c3, ah); c4 = fma(c4, c4, ah); c5 = fma(c5, c5, ah); c6 = fma(c6, c6, ah); c7 = fma(c7, c7, ah); c8 = fma(c8, c8, ah); c9 = fma(c9, c9, ah); c10 = fma(c10, c10, ah); c11 = fma(c11, c11, ah); c12 = fma(c12, c12, ah); c13 = fma(c13, c13, ah); c14 = fma(c14, c14, ah); c15 = fma(c15, c15, ah); c16 = fma(c16, c16, ah); c17 = fma(c17, c17, ah); c18 = fma(c18, c18, ah); c19 = fma(c19, c19, ah); c20 = fma(c20, c20, ah); c21 = fma(c21, c21, ah); c22 = fma(c22, c22, ah); c23 = fma(c23, c23, ah); c24 = fma(c24, c24, ah); c25 = fma(c25, c25, ah); c26 = fma(c26, c26, ah); c27 = fma(c27, c27, ah); c28 = fma(c28, c28, ah); c29 = fma(c29, c29, ah); c30 = fma(c30, c30, ah); c31 = fma(c31, c31, ah);
    c0 = fma(c0, c0, ah); c1 = fma(c1, c1, ah); c2 = fma(c2, c2, ah); c3 = fma(c3, c3, ah); c4 = fma(c4, c4, ah); c5 = fma(c5, c5, ah); c6 = fma(c6, c6, ah); c7 = fma(c7, c7, ah); c8 = fma(c8, c8, ah); c9 = fma(c9, c9, ah); c10 = fma(c10, c10, ah); c11 = fma(c11, c11, ah); c12 = fma(c12, c12, ah); c13 = fma(c13, c13, ah); c14 = fma(c14, c14, ah); c15 = fma(c15, c15, ah); c16 = fma(c16, c16, ah); c17 = fma(c17, c17, ah); c18 = fma(c18, c18, ah); c19 = fma(c19, c19, ah); c20 = fma(c20, c20, ah); c21 = fma(c21, c21, ah); c22 = fma(c22, c22, ah); c23 = fma(c23, c23, ah); c24 = fma(c24, c24, ah); c25 = fma(c25, c25, ah); c26 = fma(c26, c26, ah); c27 = fma(c27, c27, ah); c28 = fma(c28, c28, ah); c29 = fma(c29, c29, ah); c30 = fma(c30, c30, ah); c31 = fma(c31, c31, ah);
    c0 = fma(c0, c0, ah); c1 = fma(c1, c1, ah); c2 = fma(c2, c2, ah); c3 = fma(c3, c3, ah); c4 = fma(c4, c4, ah); c5 = fma(c5, c5, ah); c6 = fma(c6, c6, ah); c7 = fma(c7, c7, ah); c8 = fma(c8, c8, ah); c9 = fma(c9, c9, ah); c10 = fma(c10, c10, ah); c11 = fma(c11, c11, ah); c12 = fma(c12, c12, ah); c13 = fma(c13, c13, ah); c14 = fma(c14, c14, ah); c15 = fma(c15, c15, ah); c16 = fma(c16, c16, ah); c17 = fma(c17, c17, ah); c18 = fma(c18, c18, ah); c19 = fma(c19, c19, ah); c20 = fma(c20, c20, ah); c21 = fma(c21, c21, ah); c22 = fma(c22, c22, ah); c23 = fma(c23, c23, ah); c24 = fma(c24, c24, ah); c25 = fma(c25, c25, ah); c26 = fma(c26, c26, ah); c27 = fma(c27, c27, ah); c28 = fma(c28, c28, ah); c29 = fma(c29, c29, ah); c30 = fma(c30, c30, ah); c31 = fma(c31, c31, ah);
    c0 = fma(c0, c0, ah); c1 = fma(c1, c1, ah); c2 = fma(c2, c2, ah); c3 = fma(c3, c3, ah); c4 = fma(c4, c4, ah); c5 = fma(c5, c5, ah); c6 = fma(c6, c6, ah); c7 = fma(c7, c7, ah); c8 = fma(c8, c8, ah); c9 = fma(c9, c9, ah); c10 = fma(c10, c10, ah); c11 = fma(c11, c11, ah); c12 = fma(c12, c12, ah); c13 = fma(c13, c13, ah); c14 = fma(c14, c14, ah); c15 = fma(c15, c15, ah); c16 = fma(c16, c16, ah); c17 = fma(c17, c17, ah); c18 = fma(c18, c18, ah); c19 = fma(c19, c19, ah); c20 = fma(c20, c20, ah); c21 = fma(c21, c21, ah); c22 = fma(c22, c22, ah); c23 = fma(c23, c23, ah); c24 = fma(c24, c24, ah); c25 = fma(c25, c25, ah); c26 = fma(c26, c26, ah); c27 = fma(c27, c27, ah); c28 = fma(c28, c28, ah); c29 = fma(c29, c29, ah); c30 = fma(c30, c30, ah); c31 = fma(c31, c31, ah);
    c0 = fma(c0, c0, ah); c1 = fma(c1, c1, ah); c2 = fma(c2, c2, ah); c3 = fma(c3, c3, ah); c4 = fma(c4, c4, ah); c5 = fma(c5, c5, ah); c6 = fma(c6, c6, ah); c7 = fma(c7, c7, ah); c8 = fma(c8, c8, ah); c9 = fma(c9, c9, ah); c10 = fma(c10, c10, ah); c11 = fma(c11, c11, ah); c12 = fma(c12, c12, ah); c13 = fma(c13, c13, ah); c14 = fma(c14, c14, ah); c15 = fma(c15, c15, ah); c16 = fma(c16, c16, ah); c17 = fma(c17, c17, ah); c18 = fma(c18, c18, ah); c19 = fma(c19, c19, ah); c20 = fma(c20, c20, ah); c21 = fma(c21, c21, ah); c22 = fma(c22, c22, ah); c23 = fma(c23, c23, ah); c24 = fma(c24, c24, ah); c25 = fma(c25, c25, ah); c26 = fma(c26, c26, ah); c27 = fma(c27, c27, ah); c28 = fma(c28, c28, ah); c29 = fma(c29, c29, ah); c30 = fma(c30, c30, ah); c31 = fma(c31, c31, ah);
    c0 = fma(c0, c0, ah); c1 = fma(c1, c1, ah); c2 = fma(c2, c2, ah); c3 = fma(c3, c3, ah); c4 = fma(c4, c4, ah); c5 = fma(c5, c5, ah); c6 = fma(c6, c6, ah); c7 = fma(c7, c7, ah); c8 = fma(c8, c8, ah); c9 = fma(c9, c9, ah); c10 = fma(c10, c10, ah); c11 = fma(c11, c11, ah); c12 = fma(c12, c12, ah); c13 = fma(c13, c13, ah); c14 = fma(c14, c14, ah); c15 = fma(c15, c15, ah); c16 = fma(c16, c16, ah); c17 = fma(c17, c17, ah); c18 = fma(c18, c18, ah); c19 = fma(c19, c19, ah); c20 = fma(c20, c20, ah); c21 = fma(c21, c21, ah); c22 = fma(c22, c22, ah); c23 = fma(c23, c23, ah); c24 = fma(c24, c24, ah); c25 = fma(c25, c25, ah); c26 = fma(c26, c26, ah); c27 = fma(c27, c27, ah); c28 = fma(c28, c28, ah); c29 = fma(c29, c29, ah); c30 = fma(c30, c30, ah); c31 = fma(c31, c31, ah);
    c0 = fma(c0, c0, ah); c1 = fma(c1, c1, ah); c2 = fma(c2, c2, ah); c3 = fma(c3, c3, ah); c4 = fma(c4, c4, ah); c5 = fma(c5, c5, ah); c6 = fma(c6, c6, ah); c7 = fma(c7, c7, ah); c8 = fma(c8, c8, ah); c9 = fma(c9, c9, ah); c10 = fma(c10, c10, ah); c11 = fma(c11, c11, ah); c12 = fma(c12, c12, ah); c13 = fma(c13, c13, ah); c14 = fma(c14, c14, ah); c15 = fma(c15, c15, ah); c16 = fma(c16, c16, ah); c17 = fma(c17, c17, ah); c18 = fma(c18, c18, ah); c19 = fma(c19, c19, ah); c20 = fma(c20, c20, ah); c21 = fma(c21, c21, ah); c22 = fma(c22, c22, ah); c23 = fma(c23, c23, ah); c24 = fma(c24, c24, ah); c25 = fma(c25, c25, ah); c26 = fma(c26, c26, ah); c27 = fma(c27, c27, ah); c28 = fma(c28, c28, ah); c29 = fma(c29, c29, ah); c30 = fma(c30, c30, ah); c31 = fma(c31, c31, ah);
    c0 = fma(c0, c0, ah); c1 = fma(c1, c1, ah); c2 = fma(c2, c2, ah); c3 = fma(c3, c3, ah); c4 = fma(c4, c4, ah); c5 = fma(c5, c5, ah); c6 = fma(c6, c6, ah); c7 = fma(c7, c7, ah); c8 = fma(c8, c8, ah); c9 = fma(c9, c9, ah); c10 = fma(c10, c10, ah); c11 = fma(c11, c11, ah); c12 = fma(c12, c12, ah); c13 = fma(c13, c13, ah); c14 = fma(c14, c14, ah); c15 = fma(c15, c15, ah); c16 = fma(c16, c16, ah); c17 = fma(c17, c17, ah); c18 = fma(c18, c18, ah); c19 = fma(c19, c19, ah); c20 = fma(c20, c20, ah); c21 = fma(c21, c21, ah); c22 = fma(c22, c22, ah); c23 = fma(c23, c23, ah); c24 = fma(c24, c24, ah); c25 = fma(c25, c25, ah); c26 = fma(c26, c26, ah); c27 = fma(c27, c27, ah); c28 = fma(c28, c28, ah); c29 = fma(c29, c29, ah); c30 = fma(c30, c30, ah); c31 = fma(c31, c31, ah);
    c0 = fma(c0, c0, ah); c1 = fma(c1, c1, ah); c2 = fma(c2, c2, ah); c3 = fma(c3, c3, ah); c4 = fma(c4, c4, ah); c5 = fma(c5, c5, ah); c6 = fma(c6, c6, ah); c7 = fma(c7, c7, ah); c8 = fma(c8, c8, ah); c9 = fma(c9, c9, ah); c10 = fma(c10, c10, ah); c11 = fma(c11, c11, ah); c12 = fma(c12, c12, ah); c13 = fma(c13, c13, ah); c14 = fma(c14, c14, ah); c15 = fma(c15, c15, ah); c16 = fma(c16, c16, ah); c17 = fma(c17, c17, ah); c18 = fma(c18, c18, ah); c19 = fma(c19, c19, ah); c20 = fma(c20, c20, ah); c21 = fma(c21, c21, ah); c22 = fma(c22, c22, ah); c23 = fma(c23, c23, ah); c24 = fma(c24, c24, ah); c25 = fma(c25, c25, ah); c26 = fma(c26, c26, ah); c27 = fma(c27, c27, ah); c28 = fma(c28, c28, ah); c29 = fma(c29, c29, ah); c30 = fma(c30, c30, ah); c31 = fma(c31, c31, ah);
    c0 = fma(c0, c0, ah); c1 = fma(c1, c1, ah); c2 = fma(c2, c2, ah); c3 = fma(c3, c3, ah); c4 = fma(c4, c4, ah); c5 = fma(c5, c5, ah); c6 = fma(c6, c6, ah); c7 = fma(c7, c7, ah); c8 = fma(c8, c8, ah); c9 = fma(c9, c9, ah); c10 = fma(c10, c10, ah); c11 = fma(c11, c11, ah); c12 = fma(c12, c12, ah); c13 = fma(c13, c13, ah); c14 = fma(c14, c14, ah); c15 = fma(c15, c15, ah); c16 = fma(c16, c16, ah); c17 = fma(c17, c17, ah); c18 = fma(c18, c18, ah); c19 = fma(c19, c19, ah); c20 = fma(c20, c20, ah); c21 = fma(c21, c21, ah); c22 = fma(c22, c22, ah); c23 = fma(c23, c23, ah); c24 = fma(c24, c24, ah); c25 = fma(c25, c25, ah); c26 = fma(c26, c26, ah); c27 = fma(c27, c27, ah); c28 = fma(c28, c28, ah); c29 = fma(c29, c29, ah); c30 = fma(c30, c30, ah); c31 = fma(c31, c31, ah);
    c0 = fma(c0, c0, ah); c1 = fma(c1, c1, ah); c2 = fma(c2, c2, ah); c3 = fma(c3, c3, ah); c4 = fma(c4, c4, ah); c5 = fma(c5, c5, ah); c6 = fma(c6, c6, ah); c7 = fma(c7, c7, ah); c8 = fma(c8, c8, ah); c9 = fma(c9, c9, ah); c10 = fma(c10, c10, ah); c11 = fma(c11, c11, ah); c12 = fma(c12, c12, ah); c13 = fma(c13, c13, ah); c14 = fma(c14, c14, ah); c15 = fma(c15, c15, ah); c16 = fma(c16, c16, ah); c17 = fma(c17, c17, ah); c18 = fma(c18, c18, ah); c19 = fma(c19, c19, ah); c20 = fma(c20, c20, ah); c21 = fma(c21, c21, ah); c22 = fma(c22, c22, ah); c23 = fma(c23, c23, ah); c24 = fma(c24, c24, ah); c25 = fma(c25, c25, ah); c26 = fma(c26, c26, ah); c27 = fma(c27, c27, ah); c28 = fma(c28, c28, ah); c29 = fma(c29, c29, ah); c30 = fma(c30, c30, ah); c31 = fma(c31, c31, ah);
    c0 = fma(c0, c0, ah); c1 = fma(c1, c1, ah); c2 = fma(c2, c2, ah); c3 = fma(c3, c3, ah); c4 = fma(c4, c4, ah); c5 = fma(c5, c5, ah); c6 = fma(c6, c6, ah); c7 = fma(c7, c7, ah); c8 = fma(c8, c8, ah); c9 = fma(c9, c9, ah); c10 = fma(c10, c10, ah); c11 = fma(c11, c11, ah); c12 = fma(c12, c12, ah); c13 = fma(c13, c13, ah); c14 = fma(c14, c14, ah); c15 = fma(c15, c15, ah); c16 = fma(c16, c16, ah); c17 = fma(c17, c17, ah); c18 = fma(c18, c18, ah); c19 = fma(c19, c19, ah); c20 = fma(c20, c20, ah); c21 = fma(c21, c21, ah); c22 = fma(c22, c22, ah); c23 = fma(c23, c23, ah); c24 = fma(c24, c24, ah); c25 = fma(c25, c25, ah); c26 = fma(c26, c26, ah); c27 = fma(c27, c27, ah); c28 = fma(c28, c28, ah); c29 = fma(c29, c29, ah); c30 = fma(c30, c30, ah); c31 = fma(c31, c31, ah);
    c0 = fma(c0, c0, ah); c1 = fma(c1, c1, ah); c2 = fma(c2, c2, ah); c3 = fma(c3, c3, ah); c4 = fma(c4, c4, ah); c5 = fma(c5, c5, ah); c6 = fma(c6, c6, ah); c7 = fma(c7, c7, ah); c8 = fma(c8, c8, ah); c9 = fma(c9, c9, ah); c10 = fma(c10, c10, ah); c11 = fma(c11, c11, ah); c12 = fma(c12, c12, ah); c13 = fma(c13, c13, ah); c14 = fma(c14, c14, ah); c15 = fma(c15, c15, ah); c16 = fma(c16, c16, ah); c17 = fma(c17, c17, ah); c18 = fma(c18, c18, ah); c19 = fma(c19, c19, ah); c20 = fma(c20, c20, ah); c21 = fma(c21, c21, ah); c22 = fma(c22, c22, ah); c23 = fma(c23, c23, ah); c24 = fma(c24, c24, ah); c25 = fma(c25, c25, ah); c26 = fma(c26, c26, ah); c27 = fma(c27, c27, ah); c28 = fma(c28, c28, ah); c29 = fma(c29, c29, ah); c30 = fma(c30, c30, ah); c31 = fma(c31, c31, ah);
    c0 = fma(c0, c0, ah); c1 = fma(c1, c1, ah); c2 = fma(c2, c2, ah); c3 = fma(c3, c3, ah); c4 = fma(c4, c4, ah); c5 = fma(c5, c5, ah); c6 = fma(c6, c6, ah); c7 = fma(c7, c7, ah); c8 = fma(c8, c8, ah); c9 = fma(c9, c9, ah); c10 = fma(c10, c10, ah); c11 = fma(c11, c11, ah); c12 = fma(c12, c12, ah); c13 = fma(c13, c13, ah); c14 = fma(c14, c14, ah); c15 = fma(c15, c15, ah); c16 = fma(c16, c16, ah); c17 = fma(c17, c17, ah); c18 = fma(c18, c18, ah); c19 = fma(c19, c19, ah); c20 = fma(c20, c20, ah); c21 = fma(c21, c21, ah); c22 = fma(c22, c22, ah); c23 = fma(c23, c23, ah); c24 = fma(c24, c24, ah); c25 = fma(c25, c25, ah); c26 = fma(c26, c26, ah); c27 = fma(c27, c27, ah); c28 = fma(c28, c28, ah); c29 = fma(c29, c29, ah); c30 = fma(c30, c30, ah); c31 = fma(c31, c31, ah);
    c0 = fma(c0, c0, ah); c1 = fma(c1, c1, ah); c2 = fma(c2, c2, ah); c3 = fma(c3, c3, ah); c4 = fma(c4, c4, ah); c5 = fma(c5, c5, ah); c6 = fma(c6, c6, ah); c7 = fma(c7, c7, ah); c8 = fma(c8, c8, ah); c9 = fma(c9, c9, ah); c10 = fma(c10, c10, ah); c11 = fma(c11, c11, ah); c12 = fma(c12, c12, ah); c13 = fma(c13, c13, ah); c14 = fma(c14, c14, ah); c15 = fma(c15, c15, ah); c16 = fma(c16, c16, ah); c17 = fma(c17, c17, ah); c18 = fma(c18, c18, ah); c19 = fma(c19, c19, ah); c20 = fma(c20, c20, ah); c21 = fma(c21, c21, ah); c22 = fma(c22, c22, ah); c23 = fma(c23, c23, ah); c24 = fma(c24, c24, ah); c25 = fma(c25, c25, ah); c26 = fma(c26, c26, ah); c27 = fma(c27, c27, ah); c28 = fma(c28, c28, ah); c29 = fma(c29, c29, ah); c30 = fma(c30, c30, ah); c31 = fma(c31, c31, ah);
    c0 = fma(c0, c0, ah); c1 = fma(c1, c1, ah); c2 = fma(c2, c2, ah); c3 = fma(c3, c3, ah); c4 = fma(c4, c4, ah); c5 = fma(c5, c5, ah); c6 = fma(c6, c6, ah); c7 = fma(c7, c7, ah); c8 = fma(c8, c8, ah); c9 = fma(c9, c9, ah); c10 = fma(c10, c10, ah); c11 = fma(c11, c11, ah); c12 = fma(c12, c12, ah); c13 = fma(c13, c13, ah); c14 = fma(c14, c14, ah); c15 = fma(c15, c15, ah); c16 = fma(c16, c16, ah); c17 = fma(c17, c17, ah); c18 = fma(c18, c18, ah); c19 = fma(c19, c19, ah); c20 = fma(c20, c20, ah); c21 = fma(c21, c21, ah); c22 = fma(c22, c22, ah); c23 = fma(c23, c23, ah); c24 = fma(c24, c24, ah); c25 = fma(c25, c25, ah); c26 = fma(c26, c26, ah); c27 = fma(c27, c27, ah); c28 = fma(c28, c28, ah); c29 = fma(c29, c29, ah); c30 = fma(c30, c30, ah); c31 = fma(c31, c31, ah);
  }
  for (var it = 0; it < F % 16; it++) {
    c0 = fma(c0, c0, ah); c1 = fma(c1, c1, ah); c2 = fma(c2, c2, ah); c3 = fma(c3, c3, ah); c4 = fma(c4, c4, ah); c5 = fma(c5, c5, ah); c6 = fma(c6, c6, ah); c7 = fma(c7, c7, ah); c8 = fma(c8, c8, ah); c9 = fma(c9, c9, ah); c10 = fma(c10, c10, ah); c11 = fma(c11, c11, ah); c12 = fma(c12, c12, ah); c13 = fma(c13, c13, ah); c14 = fma(c14, c14, ah); c15 = fma(c15, c15, ah); c16 = fma(c16, c16, ah); c17 = fma(c17, c17, ah); c18 = fma(c18, c18, ah); c19 = fma(c19, c19, ah); c20 = fma(c20, c20, ah); c21 = fma(c21, c21, ah); c22 = fma(c22, c22, ah); c23 = fma(c23, c23, ah); c24 = fma(c24, c24, ah); c25 = fma(c25, c25, ah); c26 = fma(c26, c26, ah); c27 = fma(c27, c27, ah); c28 = fma(c28, c28, ah); c29 = fma(c29, c29, ah); c30 = fma(c30, c30, ah); c31 = fma(c31, c31, ah);
  }
  out[base + 0u] = c0;
  out[base + 1u] = c1;
  out[base + 2u] = c2;
  out[base + 3u] = c3;
  out[base + 4u] = c4;
  out[base + 5u] = c5;
  out[base + 6u] = c6;
  out[base + 7u] = c7;
  out[base + 8u] = c8;
  out[base + 9u] = c9;
  out[base + 10u] = c10;
  out[base + 11u] = c11;
  out[base + 12u] = c12;
  out[base + 13u] = c13;
  out[base + 14u] = c14;
  out[base + 15u] = c15;
  out[base + 16u] = c16;
  out[base + 17u] = c17;
  out[base + 18u] = c18;
  out[base + 19u] = c19;
  out[base + 20u] = c20;
  out[base + 21u] = c21;
  out[base + 22u] = c22;
  out[base + 23u] = c23;
  out[base + 24u] = c24;
  out[base + 25u] = c25;
  out[base + 26u] = c26;
  out[base + 27u] = c27;
  out[base + 28u] = c28;
  out[base + 29u] = c29;
  out[base + 30u] = c30;
  out[base + 31u] = c31;
}
