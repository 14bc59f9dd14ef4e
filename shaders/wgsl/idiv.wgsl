// Integer-divide kernels of the idiv suite through WebGPU (python/apple_roofline/suites/idiv/kernels.py
// documents the recurrence and holds the NumPy reference every output is checked against): the twins of
// shaders/cuda/idiv.cu's and shaders/metal/idiv.metal's (same names, same arguments, the same operations)
// for the divisor as a literal (_pow2_literal 256, _literal 255) and as a pipeline-overridable constant
// (_constant: the override DIVISOR, WGSL's function constant, set when the pipeline is built). The
// _argument kernels take one more argument, so they are idiv_argument.wgsl (argument i is binding i).
//
// Compiled at run time by wgpu (naga); BLOCK (the workgroup size), F (operations per chain) and DIVISOR are
// override constants (idiv.cu's -DBLOCK, -DF, -DDIVISOR). Arguments at @group(0) @binding(i) in the
// order the suite passes them (python/apple_roofline/webgpu/layout.py): in, out (32-bit words), then the
// number of work items n; the guard mirrors CUDA's.
//
//   x = in[i];  F times: x = x + (x OP d) + 0x9E3779B9 (mod 2^32);  out[i] = x

override BLOCK: u32 = 256;
override F: i32;
override DIVISOR: i32;

const AR_STEP: u32 = 0x9E3779B9u;

@group(0) @binding(0) var<storage, read> inp: array<u32>;
@group(0) @binding(1) var<storage, read_write> out: array<u32>;
@group(0) @binding(2) var<uniform> n: u32;

fn item(wid: vec3<u32>, nwg: vec3<u32>, lid: u32) -> u32 {
  return (wid.y * nwg.x + wid.x) * BLOCK + lid;
}

// One step of each chain: x + (x OP d) + STEP, the additions wrapping (u32 arithmetic); the signed
// steps divide the same bits as i32. WGSL's / and % truncate toward zero, as C's, CUDA's and MSL's: the
// reference's. (WGSL also defines what C leaves undefined, x / 0 = x, x % 0 = 0, INT_MIN / -1 = INT_MIN
// and INT_MIN % -1 = 0, which naga implements with a select on the divisor; the suite never divides so:
// its divisors are 3 to 2^31 - 1, suites/idiv/kernels.py's check_divisor.)
fn step_div_u32(x: u32, d: u32) -> u32 { return x + x / d + AR_STEP; }
fn step_mod_u32(x: u32, d: u32) -> u32 { return x + x % d + AR_STEP; }
fn step_div_i32(x: u32, d: i32) -> u32 { return x + bitcast<u32>(bitcast<i32>(x) / d) + AR_STEP; }
fn step_mod_i32(x: u32, d: i32) -> u32 { return x + bitcast<u32>(bitcast<i32>(x) % d) + AR_STEP; }

// The chain of one work item: F steps, 8 a trip, then F mod 8 one at a time (WGSL has no unroll hint;
// idiv.cu unrolls 16). The divisor arrives as a parameter (WGSL has no templates), which the driver's
// compiler inlines, so a literal or an override is folded into the divide as in idiv.cu's template.

fn chain_div_u32(x0: u32, d: u32) -> u32 {
  var x = x0;
  for (var it = 0; it < F / 8; it++) {
    x = step_div_u32(x, d); x = step_div_u32(x, d); x = step_div_u32(x, d); x = step_div_u32(x, d);
    x = step_div_u32(x, d); x = step_div_u32(x, d); x = step_div_u32(x, d); x = step_div_u32(x, d);
  }
  for (var it = 0; it < F % 8; it++) { x = step_div_u32(x, d); }
  return x;
}

fn chain_mod_u32(x0: u32, d: u32) -> u32 {
  var x = x0;
  for (var it = 0; it < F / 8; it++) {
    x = step_mod_u32(x, d); x = step_mod_u32(x, d); x = step_mod_u32(x, d); x = step_mod_u32(x, d);
    x = step_mod_u32(x, d); x = step_mod_u32(x, d); x = step_mod_u32(x, d); x = step_mod_u32(x, d);
  }
  for (var it = 0; it < F % 8; it++) { x = step_mod_u32(x, d); }
  return x;
}

fn chain_div_i32(x0: u32, d: i32) -> u32 {
  var x = x0;
  for (var it = 0; it < F / 8; it++) {
    x = step_div_i32(x, d); x = step_div_i32(x, d); x = step_div_i32(x, d); x = step_div_i32(x, d);
    x = step_div_i32(x, d); x = step_div_i32(x, d); x = step_div_i32(x, d); x = step_div_i32(x, d);
  }
  for (var it = 0; it < F % 8; it++) { x = step_div_i32(x, d); }
  return x;
}

fn chain_mod_i32(x0: u32, d: i32) -> u32 {
  var x = x0;
  for (var it = 0; it < F / 8; it++) {
    x = step_mod_i32(x, d); x = step_mod_i32(x, d); x = step_mod_i32(x, d); x = step_mod_i32(x, d);
    x = step_mod_i32(x, d); x = step_mod_i32(x, d); x = step_mod_i32(x, d); x = step_mod_i32(x, d);
  }
  for (var it = 0; it < F % 8; it++) { x = step_mod_i32(x, d); }
  return x;
}

// ---- unsigned (u32) -----------------------------------------------------------------------------

@compute @workgroup_size(BLOCK)
fn idiv_div_u32_pow2_literal(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                             @builtin(local_invocation_index) lid: u32) {
  let i = item(wid, nwg, lid);
  if (i < n) { out[i] = chain_div_u32(inp[i], 256u); }
}

@compute @workgroup_size(BLOCK)
fn idiv_div_u32_literal(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                        @builtin(local_invocation_index) lid: u32) {
  let i = item(wid, nwg, lid);
  if (i < n) { out[i] = chain_div_u32(inp[i], 255u); }
}

@compute @workgroup_size(BLOCK)
fn idiv_div_u32_constant(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                         @builtin(local_invocation_index) lid: u32) {
  let i = item(wid, nwg, lid);
  if (i < n) { out[i] = chain_div_u32(inp[i], u32(DIVISOR)); }
}

@compute @workgroup_size(BLOCK)
fn idiv_mod_u32_pow2_literal(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                             @builtin(local_invocation_index) lid: u32) {
  let i = item(wid, nwg, lid);
  if (i < n) { out[i] = chain_mod_u32(inp[i], 256u); }
}

@compute @workgroup_size(BLOCK)
fn idiv_mod_u32_literal(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                        @builtin(local_invocation_index) lid: u32) {
  let i = item(wid, nwg, lid);
  if (i < n) { out[i] = chain_mod_u32(inp[i], 255u); }
}

@compute @workgroup_size(BLOCK)
fn idiv_mod_u32_constant(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                         @builtin(local_invocation_index) lid: u32) {
  let i = item(wid, nwg, lid);
  if (i < n) { out[i] = chain_mod_u32(inp[i], u32(DIVISOR)); }
}

// ---- signed (i32) -------------------------------------------------------------------------------

@compute @workgroup_size(BLOCK)
fn idiv_div_i32_pow2_literal(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                             @builtin(local_invocation_index) lid: u32) {
  let i = item(wid, nwg, lid);
  if (i < n) { out[i] = chain_div_i32(inp[i], 256); }
}

@compute @workgroup_size(BLOCK)
fn idiv_div_i32_literal(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                        @builtin(local_invocation_index) lid: u32) {
  let i = item(wid, nwg, lid);
  if (i < n) { out[i] = chain_div_i32(inp[i], 255); }
}

@compute @workgroup_size(BLOCK)
fn idiv_div_i32_constant(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                         @builtin(local_invocation_index) lid: u32) {
  let i = item(wid, nwg, lid);
  if (i < n) { out[i] = chain_div_i32(inp[i], DIVISOR); }
}

@compute @workgroup_size(BLOCK)
fn idiv_mod_i32_pow2_literal(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                             @builtin(local_invocation_index) lid: u32) {
  let i = item(wid, nwg, lid);
  if (i < n) { out[i] = chain_mod_i32(inp[i], 256); }
}

@compute @workgroup_size(BLOCK)
fn idiv_mod_i32_literal(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                        @builtin(local_invocation_index) lid: u32) {
  let i = item(wid, nwg, lid);
  if (i < n) { out[i] = chain_mod_i32(inp[i], 255); }
}

@compute @workgroup_size(BLOCK)
fn idiv_mod_i32_constant(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                         @builtin(local_invocation_index) lid: u32) {
  let i = item(wid, nwg, lid);
  if (i < n) { out[i] = chain_mod_i32(inp[i], DIVISOR); }
}
