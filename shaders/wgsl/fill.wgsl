// The WebGPU backend's Buffer.fill32 (python/apple_roofline/webgpu/buffer.py): n 32-bit words of
// `out` from word `first` set to `value`, on the device (CUDA's cuMemsetD32Async; WebGPU's
// clearBuffer writes only zeros). Arguments as the backend binds them (webgpu/layout.py): out, value,
// first, then the number of words n.

override BLOCK: u32 = 256;

@group(0) @binding(0) var<storage, read_write> out: array<u32>;
@group(0) @binding(1) var<uniform> value: u32;
@group(0) @binding(2) var<uniform> first: u32;
@group(0) @binding(3) var<uniform> n: u32;

@compute @workgroup_size(BLOCK)
fn fill32(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
          @builtin(local_invocation_index) lid: u32) {
  let i = (wid.y * nwg.x + wid.x) * BLOCK + lid;
  if (i >= n) { return; }
  out[first + i] = value;
}
