// FMA-chain kernels of the sweep and peak suites: vec4_indep4 and vec4_indep8 in fp32 (docs/design/measurement.md, "Counting FLOPs and
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
// the guard mirrors CUDA's. fma.cu's fp64 kernel has no twin: WGSL has no f64
// (the kernel table marks it not reachable through WebGPU).
//
// Loops: WGSL has no unroll hint, so the F loop is written out several iterations a trip (then F modulo
// that many one at a time: the same recurrence, the same result), and a trip's counter, compare and
// branch take a few issue slots among hundreds of FMAs, as in fma.cu's unrolled bodies.

override BLOCK: u32 = 256;
override F: i32;
override CHAIN_A: f32 = -0.75;

@group(0) @binding(0) var<storage, read> inp: array<vec4<f32>>;
@group(0) @binding(1) var<storage, read_write> out: array<vec4<f32>>;
@group(0) @binding(2) var<uniform> a: f32;
@group(0) @binding(3) var<uniform> n: u32;

fn item(wid: vec3<u32>, nwg: vec3<u32>, lid: u32) -> u32 {
  return (wid.y * nwg.x + wid.x) * BLOCK + lid;
}

@compute @workgroup_size(BLOCK)
fn vec4_indep4_f32(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
    @builtin(local_invocation_index) lid: u32) {
  let i = item(wid, nwg, lid);
  if (i >= n) { return; }
  let x = inp[i];
  let av = vec4<f32>(CHAIN_A);
  var c0 = x + vec4<f32>(0.0);  // c_k = x + k/16
  var c1 = x + vec4<f32>(0.0625);  // c_k = x + k/16
  var c2 = x + vec4<f32>(0.125);  // c_k = x + k/16
  var c3 = x + vec4<f32>(0.1875);  // c_k = x + k/16
  for (var it = 0; it < F / 16; it++) {  // 16 iterations a trip
    c0 = fma(c0, c0, av); c1 = fma(c1, c1, av); c2 = fma(c2, c2, av); c3 = fma(c3, c3, av);
    c0 = fma(c0, c0, av); c1 = fma(c1, c1, av); c2 = fma(c2, c2, av); c3 = fma(c3, c3, av);
    c0 = fma(c0, c0, av); c1 = fma(c1, c1, av); c2 = fma(c2, c2, av); c3 = fma(c3, c3, av);
    c0 = fma(c0, c0, av); c1 = fma(c1, c1, av); c2 = fma(c2, c2, av); c3 = fma(c3, c3, av);
    c0 = fma(c0, c0, av); c1 = fma(c1, c1, av); c2 = fma(c2, c2, av); c3 = fma(c3, c3, av);
    c0 = fma(c0, c0, av); c1 = fma(c1, c1, av); c2 = fma(c2, c2, av); c3 = fma(c3, c3, av);
    c0 = fma(c0, c0, av); c1 = fma(c1, c1, av); c2 = fma(c2, c2, av); c3 = fma(c3, c3, av);
    c0 = fma(c0, c0, av); c1 = fma(c1, c1, av); c2 = fma(c2, c2, av); c3 = fma(c3, c3, av);
    c0 = fma(c0, c0, av); c1 = fma(c1, c1, av); c2 = fma(c2, c2, av); c3 = fma(c3, c3, av);
    c0 = fma(c0, c0, av); c1 = fma(c1, c1, av); c2 = fma(c2, c2, av); c3 = fma(c3, c3, av);
    c0 = fma(c0, c0, av); c1 = fma(c1, c1, av); c2 = fma(c2, c2, av); c3 = fma(c3, c3, av);
    c0 = fma(c0, c0, av); c1 = fma(c1, c1, av); c2 = fma(c2, c2, av); c3 = fma(c3, c3, av);
    c0 = fma(c0, c0, av); c1 = fma(c1, c1, av); c2 = fma(c2, c2, av); c3 = fma(c3, c3, av);
    c0 = fma(c0, c0, av); c1 = fma(c1, c1, av); c2 = fma(c2, c2, av); c3 = fma(c3, c3, av);
    c0 = fma(c0, c0, av); c1 = fma(c1, c1, av); c2 = fma(c2, c2, av); c3 = fma(c3, c3, av);
    c0 = fma(c0, c0, av); c1 = fma(c1, c1, av); c2 = fma(c2, c2, av); c3 = fma(c3, c3, av);
  }
  for (var it = 0; it < F % 16; it++) {
    c0 = fma(c0, c0, av); c1 = fma(c1, c1, av); c2 = fma(c2, c2, av); c3 = fma(c3, c3, av);
  }
  var s = c0;
  s = s + c1;
  s = s + c2;
  s = s + c3;
  out[i] = s;
}

@compute @workgroup_size(BLOCK)
fn vec4_indep8_f32(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
    @builtin(local_invocation_index) lid: u32) {
  let i = item(wid, nwg, lid);
  if (i >= n) { return; }
  let x = inp[i];
  let av = vec4<f32>(CHAIN_A);
  var c0 = x + vec4<f32>(0.0);  // c_k = x + k/16
  var c1 = x + vec4<f32>(0.0625);  // c_k = x + k/16
  var c2 = x + vec4<f32>(0.125);  // c_k = x + k/16
  var c3 = x + vec4<f32>(0.1875);  // c_k = x + k/16
  var c4 = x + vec4<f32>(0.25);  // c_k = x + k/16
  var c5 = x + vec4<f32>(0.3125);  // c_k = x + k/16
  var c6 = x + vec4<f32>(0.375);  // c_k = x + k/16
  var c7 = x + vec4<f32>(0.4375);  // c_k = x + k/16
  for (var it = 0; it < F / 16; it++) {  // 16 iterations a trip
    c0 = fma(c0, c0, av); c1 = fma(c1, c1, av); c2 = fma(c2, c2, av); c3 = fma(c3, c3, av); c4 = fma(c4, c4, av); c5 = fma(c5, c5, av); c6 = fma(c6, c6, av); c7 = fma(c7, c7, av);
    c0 = fma(c0, c0, av); c1 = fma(c1, c1, av); c2 = fma(c2, c2, av); c3 = fma(c3, c3, av); c4 = fma(c4, c4, av); c5 = fma(c5, c5, av); c6 = fma(c6, c6, av); c7 = fma(c7, c7, av);
    c0 = fma(c0, c0, av); c1 = fma(c1, c1, av); c2 = fma(c2, c2, av); c3 = fma(c3, c3, av); c4 = fma(c4, c4, av); c5 = fma(c5, c5, av); c6 = fma(c6, c6, av); c7 = fma(c7, c7, av);
    c0 = fma(c0, c0, av); c1 = fma(c1, c1, av); c2 = fma(c2, c2, av); c3 = fma(c3, c3, av); c4 = fma(c4, c4, av); c5 = fma(c5, c5, av); c6 = fma(c6, c6, av); c7 = fma(c7, c7, av);
    c0 = fma(c0, c0, av); c1 = fma(c1, c1, av); c2 = fma(c2, c2, av); c3 = fma(c3, c3, av); c4 = fma(c4, c4, av); c5 = fma(c5, c5, av); c6 = fma(c6, c6, av); c7 = fma(c7, c7, av);
    c0 = fma(c0, c0, av); c1 = fma(c1, c1, av); c2 = fma(c2, c2, av); c3 = fma(c3, c3, av); c4 = fma(c4, c4, av); c5 = fma(c5, c5, av); c6 = fma(c6, c6, av); c7 = fma(c7, c7, av);
    c0 = fma(c0, c0, av); c1 = fma(c1, c1, av); c2 = fma(c2, c2, av); c3 = fma(c3, c3, av); c4 = fma(c4, c4, av); c5 = fma(c5, c5, av); c6 = fma(c6, c6, av); c7 = fma(c7, c7, av);
    c0 = fma(c0, c0, av); c1 = fma(c1, c1, av); c2 = fma(c2, c2, av); c3 = fma(c3, c3, av); c4 = fma(c4, c4, av); c5 = fma(c5, c5, av); c6 = fma(c6, c6, av); c7 = fma(c7, c7, av);
    c0 = fma(c0, c0, av); c1 = fma(c1, c1, av); c2 = fma(c2, c2, av); c3 = fma(c3, c3, av); c4 = fma(c4, c4, av); c5 = fma(c5, c5, av); c6 = fma(c6, c6, av); c7 = fma(c7, c7, av);
    c0 = fma(c0, c0, av); c1 = fma(c1, c1, av); c2 = fma(c2, c2, av); c3 = fma(c3, c3, av); c4 = fma(c4, c4, av); c5 = fma(c5, c5, av); c6 = fma(c6, c6, av); c7 = fma(c7, c7, av);
    c0 = fma(c0, c0, av); c1 = fma(c1, c1, av); c2 = fma(c2, c2, av); c3 = fma(c3, c3, av); c4 = fma(c4, c4, av); c5 = fma(c5, c5, av); c6 = fma(c6, c6, av); c7 = fma(c7, c7, av);
    c0 = fma(c0, c0, av); c1 = fma(c1, c1, av); c2 = fma(c2, c2, av); c3 = fma(c3, c3, av); c4 = fma(c4, c4, av); c5 = fma(c5, c5, av); c6 = fma(c6, c6, av); c7 = fma(c7, c7, av);
    c0 = fma(c0, c0, av); c1 = fma(c1, c1, av); c2 = fma(c2, c2, av); c3 = fma(c3, c3, av); c4 = fma(c4, c4, av); c5 = fma(c5, c5, av); c6 = fma(c6, c6, av); c7 = fma(c7, c7, av);
    c0 = fma(c0, c0, av); c1 = fma(c1, c1, av); c2 = fma(c2, c2, av); c3 = fma(c3, c3, av); c4 = fma(c4, c4, av); c5 = fma(c5, c5, av); c6 = fma(c6, c6, av); c7 = fma(c7, c7, av);
    c0 = fma(c0, c0, av); c1 = fma(c1, c1, av); c2 = fma(c2, c2, av); c3 = fma(c3, c3, av); c4 = fma(c4, c4, av); c5 = fma(c5, c5, av); c6 = fma(c6, c6, av); c7 = fma(c7, c7, av);
    c0 = fma(c0, c0, av); c1 = fma(c1, c1, av); c2 = fma(c2, c2, av); c3 = fma(c3, c3, av); c4 = fma(c4, c4, av); c5 = fma(c5, c5, av); c6 = fma(c6, c6, av); c7 = fma(c7, c7, av);
  }
  for (var it = 0; it < F % 16; it++) {
    c0 = fma(c0, c0, av); c1 = fma(c1, c1, av); c2 = fma(c2, c2, av); c3 = fma(c3, c3, av); c4 = fma(c4, c4, av); c5 = fma(c5, c5, av); c6 = fma(c6, c6, av); c7 = fma(c7, c7, av);
  }
  var s = c0;
  s = s + c1;
  s = s + c2;
  s = s + c3;
  s = s + c4;
  s = s + c5;
  s = s + c6;
  s = s + c7;
  out[i] = s;
}
