// The dispatch-latency kernel through WebGPU: dispatch_tiny, the twin of shaders/cuda/dispatch.cu's and
// shaders/metal/dispatch.metal's (python/apple_roofline/dispatch/kernels.py): launched with n = 256
// (one workgroup of BLOCK = 256 invocations), each invocation adds 1 to one vec4<f32> of x, so after k
// launches on a zeroed x every element is k. Arguments (python/apple_roofline/webgpu/layout.py): x,
// then the number of work items n. (dispatch_null, which takes no argument, would need a module of its
// own: argument i is binding i, and the work-item count is binding 0 there.)

override BLOCK: u32 = 256;

@group(0) @binding(0) var<storage, read_write> x: array<vec4<f32>>;
@group(0) @binding(1) var<uniform> n: u32;

@compute @workgroup_size(BLOCK)
fn dispatch_tiny(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                 @builtin(local_invocation_index) lid: u32) {
  let i = (wid.y * nwg.x + wid.x) * BLOCK + lid;
  if (i >= n) { return; }
  var v = x[i];
  v.x += 1.0;
  v.y += 1.0;
  v.z += 1.0;
  v.w += 1.0;
  x[i] = v;
}
