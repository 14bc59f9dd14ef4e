// FMA-chain kernels of the sweep and peak suites: vec4_cross4 in fp32 (docs/design/measurement.md, "Counting FLOPs and
// bytes"; python/apple_roofline/suites/fma.py documents each recurrence and holds the NumPy reference
// every output is checked against). One work item is one invocation. The CUDA twins are
// shaders/cuda/fma.cu, the Metal twins shaders/metal/fma.metal: the same recurrences, operation for
// operation. The FMA kernels are four WGSL files (vector and scalar, fp32 and fp16: one binding has one
// element type) and vec4_cross4 two more (it takes no `a`, so its work-item count is binding 2).
//
// Compiled at run time by wgpu (naga); BLOCK (the workgroup size) and F are override constants set by
// the kernel table. Arguments at @group(0) @binding(i) in the order the suite passes
// them (python/apple_roofline/webgpu/layout.py): in, out, then the number of work items n;
// the guard mirrors CUDA's. fma.cu's fp64 kernel has no twin: WGSL has no f64
// (the kernel table marks it not reachable through WebGPU).
//
// Loops: WGSL has no unroll hint, so the F loop is written out several iterations a trip (then F modulo
// that many one at a time: the same recurrence, the same result), and a trip's counter, compare and
// branch take a few issue slots among hundreds of FMAs, as in fma.cu's unrolled bodies.

override BLOCK: u32 = 256;
override F: i32;

@group(0) @binding(0) var<storage, read> inp: array<vec4<f32>>;
@group(0) @binding(1) var<storage, read_write> out: array<vec4<f32>>;
@group(0) @binding(2) var<uniform> n: u32;

fn item(wid: vec3<u32>, nwg: vec3<u32>, lid: u32) -> u32 {
  return (wid.y * nwg.x + wid.x) * BLOCK + lid;
}

@compute @workgroup_size(BLOCK)
fn vec4_cross4_f32(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
    @builtin(local_invocation_index) lid: u32) {
  let i = item(wid, nwg, lid);
  if (i >= n) { return; }
  var c = inp[i];
  var e = c;
  var d = vec4<f32>(-1.0);
  var f = d;
  for (var it = 0; it < F / 8; it++) {  // 8 iterations a trip
    c = fma(c, d, e); d = fma(d, e, f); e = fma(e, f, c); f = fma(f, c, d);
    c = fma(c, d, e); d = fma(d, e, f); e = fma(e, f, c); f = fma(f, c, d);
    c = fma(c, d, e); d = fma(d, e, f); e = fma(e, f, c); f = fma(f, c, d);
    c = fma(c, d, e); d = fma(d, e, f); e = fma(e, f, c); f = fma(f, c, d);
    c = fma(c, d, e); d = fma(d, e, f); e = fma(e, f, c); f = fma(f, c, d);
    c = fma(c, d, e); d = fma(d, e, f); e = fma(e, f, c); f = fma(f, c, d);
    c = fma(c, d, e); d = fma(d, e, f); e = fma(e, f, c); f = fma(f, c, d);
    c = fma(c, d, e); d = fma(d, e, f); e = fma(e, f, c); f = fma(f, c, d);
  }
  for (var it = 0; it < F % 8; it++) {
    c = fma(c, d, e); d = fma(d, e, f); e = fma(e, f, c); f = fma(f, c, d);
  }
  out[i] = ((c + d) + e) + f;
}
