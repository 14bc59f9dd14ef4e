// The dispatch-latency study's kernels through WebGPU (python/apple_roofline/dispatch/kernels.py), twins of
// shaders/cuda/dispatch.cu's and shaders/metal/dispatch.metal's. Arguments
// (python/apple_roofline/webgpu/layout.py): x, then the number of work items n.
//  * dispatch_null: launched with n = 1 (one workgroup, as CUDA's one block); its one invocation of
//    global index 0 adds 1 to x[0], one vec4<f32>, so after k launches on a zeroed x each of its four
//    floats is k. The CUDA and Metal null kernels touch no memory and are checked by the device
//    reporting no error; WebGPU reports a failed dispatch to the device's error callbacks, not to the
//    call, so this one counts its launches instead. (A kernel that takes no argument would also need a
//    module of its own: argument i is binding i, and the work-item count would be binding 0 there.)
//  * dispatch_tiny: launched with n = 256 (one workgroup of BLOCK = 256 invocations); each invocation
//    adds 1 to one vec4<f32> of x, so after k launches on a zeroed x every element is k.

override BLOCK: u32 = 256;

@group(0) @binding(0) var<storage, read_write> x: array<vec4<f32>>;
@group(0) @binding(1) var<uniform> n: u32;

@compute @workgroup_size(BLOCK)
fn dispatch_null(@builtin(global_invocation_id) gid: vec3<u32>) {
  if (gid.x == 0u && gid.y == 0u && n > 0u) {
    x[0] += vec4<f32>(1.0);
  }
}

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
