// STREAM copy, scale, add and triad on fp32 arrays, one vec4<f32> (16 B) per invocation
// (docs/design/measurement.md, "Counting FLOPs and bytes").
// The CUDA twins are shaders/cuda/stream.cu, the Metal twins shaders/metal/stream.metal (same names,
// same arguments, same operations); the CPU twins native/cpu/kernels.cpp's stream_*_f32.
//
// Compiled at run time by wgpu (naga); BLOCK, the workgroup size, is an override constant. Arguments,
// bound at @group(0) @binding(i) in the order the suite passes them (python/apple_roofline/webgpu/
// layout.py): the three arrays a, b, c, q (an f32 uniform: the backend rounds the double to fp32, as
// stream.cu's (float)q does), then the number of vec4 work items n. The backend dispatches
// ceil(n / BLOCK) workgroups, as (x, y) when there are more than one dimension takes; the guard
// mirrors CUDA's. Bytes per element: copy and scale 8, add and triad 12; FLOPs 0, 1, 1, 2.

override BLOCK: u32 = 256;

@group(0) @binding(0) var<storage, read_write> a: array<vec4<f32>>;
@group(0) @binding(1) var<storage, read_write> b: array<vec4<f32>>;
@group(0) @binding(2) var<storage, read_write> c: array<vec4<f32>>;
@group(0) @binding(3) var<uniform> q: f32;
@group(0) @binding(4) var<uniform> n: u32;

fn item(wid: vec3<u32>, nwg: vec3<u32>, lid: u32) -> u32 {
  return (wid.y * nwg.x + wid.x) * BLOCK + lid;
}

@compute @workgroup_size(BLOCK)
fn stream_copy_f32(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                   @builtin(local_invocation_index) lid: u32) {
  let i = item(wid, nwg, lid);
  if (i >= n) { return; }
  c[i] = a[i];  // c = a
}

@compute @workgroup_size(BLOCK)
fn stream_scale_f32(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                    @builtin(local_invocation_index) lid: u32) {
  let i = item(wid, nwg, lid);
  if (i >= n) { return; }
  let s = q;
  let v = c[i];  // b = q·c
  b[i] = vec4<f32>(s * v.x, s * v.y, s * v.z, s * v.w);
}

@compute @workgroup_size(BLOCK)
fn stream_add_f32(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                  @builtin(local_invocation_index) lid: u32) {
  let i = item(wid, nwg, lid);
  if (i >= n) { return; }
  let x = a[i];  // c = a + b
  let y = b[i];
  c[i] = vec4<f32>(x.x + y.x, x.y + y.y, x.z + y.z, x.w + y.w);
}

@compute @workgroup_size(BLOCK)
fn stream_triad_f32(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                    @builtin(local_invocation_index) lid: u32) {
  let i = item(wid, nwg, lid);
  if (i >= n) { return; }
  let s = q;
  let x = b[i];  // a = b + q·c, one explicit FMA per lane (as stream.cu's fmaf)
  let y = c[i];
  a[i] = vec4<f32>(fma(s, y.x, x.x), fma(s, y.y, x.y), fma(s, y.z, x.z), fma(s, y.w, x.w));
}
