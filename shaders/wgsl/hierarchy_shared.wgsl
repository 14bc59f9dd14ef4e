// The hierarchy suite's shared-memory kernel through WebGPU: hier_shared, the twin of
// shaders/cuda/hierarchy.cu's and shaders/metal/hierarchy.metal's (the same arguments and operations,
// documented in hierarchy.cu; python/apple_roofline/suites/hierarchy/suite.py holds the NumPy reference
// and the byte count): each workgroup copies its 16 KiB tile into workgroup memory (WGSL's
// var<workgroup>, CUDA's __shared__), then sums it PASSES times, conflict-free.
//
// Compiled at run time by wgpu (naga); BLOCK (the workgroup size, a divisor of the tile's 1024 words)
// and PASSES (passes over the tile per launch) are override constants (hierarchy.cu's -DBLOCK, -DPASSES).
// Arguments at @group(0) @binding(i) in the order the suite passes them
// (python/apple_roofline/webgpu/layout.py): inp (n_words = workgroups × 1024 words), out (one vec4<u32>
// per work item), n_words, then the number of work items lanes (whole workgroups). The backend
// dispatches (x, y) workgroups when one dimension is not enough, up to y - 1 past the last: those
// return before the barrier (the whole workgroup at once, so the barrier stays in uniform control flow).

override BLOCK: u32 = 256;
override PASSES: i32;

// hier_shared's tile: 16 KiB of workgroup memory (hierarchy.cu's AR_TILE, WebGPU's default
// max-compute-workgroup-storage-size).
const AR_TILE: u32 = 1024u;

@group(0) @binding(0) var<storage, read> inp: array<vec4<u32>>;
@group(0) @binding(1) var<storage, read_write> out: array<vec4<u32>>;
@group(0) @binding(2) var<uniform> n_words: u32;
@group(0) @binding(3) var<uniform> lanes: u32;

var<workgroup> tile: array<vec4<u32>, AR_TILE>;

@compute @workgroup_size(BLOCK)
fn hier_shared(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
               @builtin(local_invocation_index) tid: u32) {
  let g = wid.y * nwg.x + wid.x;
  if (g * BLOCK >= lanes) { return; }  // a workgroup past the last (workgroup-uniform)
  let first = g * AR_TILE;  // the suite launches whole workgroups, n_words = workgroups × AR_TILE
  for (var k = 0u; k < AR_TILE / BLOCK; k++) { tile[tid + k * BLOCK] = inp[first + tid + k * BLOCK]; }
  workgroupBarrier();
  var acc = vec4<u32>(0u);
  for (var r = 0; r < PASSES; r++) {
    let j = (tid + u32(r)) % BLOCK;
    for (var k = 0u; k < AR_TILE / BLOCK; k++) { acc += tile[j + k * BLOCK]; }
  }
  out[g * BLOCK + tid] = acc;
}
