// The hierarchy suite's working-set read through WebGPU: hier_read, the twin of shaders/cuda/hierarchy.cu's
// and shaders/metal/hierarchy.metal's (the same arguments and operations, documented in hierarchy.cu;
// python/apple_roofline/suites/hierarchy/suite.py holds the NumPy references and the byte counts).
// hier_rmw and hier_shared are hierarchy_rmw.wgsl and hierarchy_shared.wgsl: a WGSL binding has one
// access mode (hier_rmw writes its input), and a module's overrides are its kernel table's (ROTATE is
// hier_read's alone).
//
// Compiled at run time by wgpu (naga); BLOCK (the workgroup size), PASSES (passes over the working set
// per launch, at least 1) and ROTATE (1 moves each pass's start by STEP(n), 0 keeps it) are override
// constants (hierarchy.cu's -DBLOCK, -DPASSES, -DROTATE). Arguments at @group(0) @binding(i) in the
// order the suite passes them (python/apple_roofline/webgpu/layout.py): inp (n_words 16-byte words),
// out (one vec4<u32> per work item), the working set's size n_words in words, then the number of work
// items lanes; the guard mirrors CUDA's. u32 additions wrap, as CUDA's unsigned ones do; the suite keeps
// n_words below 2^31, so an index plus a step never wraps. WGSL has no unroll hint: the driver unrolls.

override BLOCK: u32 = 256;
override PASSES: i32;
override ROTATE: i32 = 1;

@group(0) @binding(0) var<storage, read> inp: array<vec4<u32>>;
@group(0) @binding(1) var<storage, read_write> out: array<vec4<u32>>;
@group(0) @binding(2) var<uniform> n_words: u32;
@group(0) @binding(3) var<uniform> lanes: u32;

// STEP(n) = floor(n × 40503 / 2^16) mod n (hierarchy.cu's ar_step). WGSL has no 64-bit integer: with
// n = hi × 2^16 + lo, floor(n × 40503 / 2^16) = hi × 40503 + floor(lo × 40503 / 2^16), each term within
// 32 bits for n below 2^31, so the result is exact.
fn ar_step(n: u32) -> u32 {
  return ((n >> 16u) * 40503u + (((n & 0xFFFFu) * 40503u) >> 16u)) % n;
}

@compute @workgroup_size(BLOCK)
fn hier_read(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
             @builtin(local_invocation_index) lid: u32) {
  let t = (wid.y * nwg.x + wid.x) * BLOCK + lid;
  if (t >= lanes) { return; }
  let n = n_words;
  let e = (n - 1u) / lanes + 1u;  // words per lane per pass: ceil(n / lanes), n at least 1
  let stride = lanes % n;         // the step between a lane's words
  var rot = 0u;
  if (ROTATE != 0) { rot = ar_step(n); }
  var base = t % n;  // this lane's first word of pass 0
  var acc = vec4<u32>(0u);
  if (e == 1u) {  // one word per lane per pass (working sets below a word per lane)
    for (var r = 0; r < PASSES; r++) {
      acc += inp[base];
      base += rot;
      if (base >= n) { base -= n; }
    }
  } else {
    for (var r = 0; r < PASSES; r++) {
      var i = base;
      for (var k = 0u; k < e; k++) {
        acc += inp[i];
        i += stride;
        if (i >= n) { i -= n; }
      }
      base += rot;
      if (base >= n) { base -= n; }
    }
  }
  out[t] = acc;
}
