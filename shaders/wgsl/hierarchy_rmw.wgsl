// The hierarchy suite's read-modify-write through WebGPU: hier_rmw, the twin of shaders/cuda/hierarchy.cu's
// and shaders/metal/hierarchy.metal's (the same arguments and operations, documented in hierarchy.cu;
// python/apple_roofline/suites/hierarchy/suite.py holds the NumPy references and the byte counts). Its
// own module because its input is read_write (hier_read's, hierarchy.wgsl, is read-only).
//
// Compiled at run time by wgpu (naga); BLOCK (the workgroup size) and PASSES (passes per launch, even:
// the buffer then ends each launch as it began) are override constants (hierarchy.cu's -DBLOCK,
// -DPASSES). Arguments at @group(0) @binding(i) in the order the suite passes them
// (python/apple_roofline/webgpu/layout.py): inp (n_words 16-byte words, read and written), out (one
// vec4<u32> per work item), the working set's size n_words in words, then the number of work items lanes
// (the suite launches n_words / E lanes of E words each); the guard mirrors CUDA's.

override BLOCK: u32 = 256;
override PASSES: i32;

// hier_rmw's mask, applied once per pass (hierarchy.cu's AR_MASK).
const AR_MASK: u32 = 0x5A5A5A5Au;

@group(0) @binding(0) var<storage, read_write> inp: array<vec4<u32>>;
@group(0) @binding(1) var<storage, read_write> out: array<vec4<u32>>;
@group(0) @binding(2) var<uniform> n_words: u32;
@group(0) @binding(3) var<uniform> lanes: u32;

@compute @workgroup_size(BLOCK)
fn hier_rmw(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
            @builtin(local_invocation_index) lid: u32) {
  let t = (wid.y * nwg.x + wid.x) * BLOCK + lid;
  if (t >= lanes) { return; }
  let e = n_words / lanes;  // words per lane: the lane's own slice t, t + lanes, ...
  var acc = vec4<u32>(0u);
  for (var r = 0; r < PASSES; r++) {
    for (var k = 0u; k < e; k++) {
      let i = t + k * lanes;
      let v = inp[i];
      acc += v;
      inp[i] = v ^ vec4<u32>(AR_MASK);
    }
  }
  out[t] = acc;
}
