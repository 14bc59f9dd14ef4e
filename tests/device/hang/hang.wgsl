// Test-only (tests/device/test_device_stop.py): a fragment shader made to hang. Never part of the
// product's shaders.
//
// Its loop bound comes from a uniform buffer the host sets: small while the pass is calibrated,
// then enormous, so that the next pass does not end in practice and the watchdog's bound, derived
// from the calibrated time, must end the study.
struct Hang {
  loops: u32,
  pad0: u32,
  pad1: u32,
  pad2: u32,
}

@group(0) @binding(0) var<uniform> hang: Hang;

@vertex
fn vs_fullscreen(@builtin(vertex_index) i: u32) -> @builtin(position) vec4<f32> {
  let x = f32((i << 1u) & 2u) * 2.0 - 1.0;
  let y = f32(i & 2u) * 2.0 - 1.0;
  return vec4<f32>(x, y, 0.0, 1.0);
}

@fragment
fn fs_hang(@builtin(position) pos: vec4<f32>) -> @location(0) vec4<f32> {
  var acc = pos.x * 1e-6;
  // two nested loops: Mesa's llvmpipe ends any one loop after 65535 iterations
  for (var i = 0u; i < hang.loops; i = i + 1u) {
    for (var j = 0u; j < hang.loops; j = j + 1u) {
      acc = fma(acc, 0.999999, 1e-7);
    }
  }
  return vec4<f32>(fract(acc), 0.25, 0.5, 1.0);
}
