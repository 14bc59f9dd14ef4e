// The access suite's scalar kernel through WebGPU: access_u32, the twin of shaders/cuda/access.cu's and
// shaders/metal/access.metal's (same name, same arguments, the same operations;
// python/apple_roofline/suites/access/kernels.py documents it and holds the NumPy reference every output is
// checked against). Its elements are one 32-bit word: a binding has one element type, so the other widths
// are access_vec2.wgsl and access_vec4.wgsl.
//
// Compiled at run time by wgpu (naga); BLOCK, the workgroup size, is an override constant (access.cu's
// -DBLOCK). Arguments at @group(0) @binding(i) in the order the suite passes them
// (python/apple_roofline/webgpu/layout.py): inp, out, the stride S (a power of two), then the number of
// elements n (a power of two, S <= n); the guard mirrors CUDA's. Work item i copies element
//
//   j(i) = (i mod M)·S + i div M,   M = n / S
//
// to out[i]: a mask, two shifts and an or; countTrailingZeros gives log2 of a power of two (access.cu's
// __ffsll - 1). The suite keeps n below 2^32 elements (one binding), so u32 indices do not wrap.

override BLOCK: u32 = 256;

@group(0) @binding(0) var<storage, read> inp: array<u32>;
@group(0) @binding(1) var<storage, read_write> out: array<u32>;
@group(0) @binding(2) var<uniform> stride: u32;
@group(0) @binding(3) var<uniform> n: u32;

fn strided_index(i: u32, count: u32, s: u32) -> u32 {
  let sh = countTrailingZeros(s);      // log2 S
  let m = count >> sh;                 // M
  let lm = countTrailingZeros(m);      // log2 M
  return ((i & (m - 1u)) << sh) | (i >> lm);
}

@compute @workgroup_size(BLOCK)
fn access_u32(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
              @builtin(local_invocation_index) lid: u32) {
  let i = (wid.y * nwg.x + wid.x) * BLOCK + lid;
  if (i < n) { out[i] = inp[strided_index(i, n, stride)]; }
}
