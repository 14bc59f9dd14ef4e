// The graphics suites' shaders for wgpu (Vulkan, Metal, D3D12), twins of shaders/metal/graphics.metal.
// The computation per pixel is defined in python/apple_roofline/graphics/kernels.py, which holds the
// NumPy references both twins are checked against (docs/design/graphics.md, "The graphics study").
//
// vs_fullscreen: one triangle covering the viewport, no vertex buffer: the three vertices are
// (-1,-1), (3,-1), (-1,3) in clip space, derived from the vertex index. One instance is one layer of
// overdraw; every layer writes the same colour.
//
// fs_fill (fill-rate and tile-memory suites): the input 4-vector of pixel (px, py) is
// x_k = ((7 px + 13 py + 5 k) mod 32) / 64 - 0.25 (exact in fp32); then F iterations of the
// vec4_cross4 chains of the compute suites, c = e = x, d = f = -1:
//   c = fma(c,d,e); d = fma(d,e,f); e = fma(e,f,c); f = fma(f,c,d)
// then s = c + d + e + f, t = (s.x + s.y) + (s.z + s.w) and the colour s / 32 + (t / 128 + 0.5), within
// [0.1, 0.9]. 32 FLOPs per iteration per pixel. Every channel depends on all four lanes, so a compiler
// cannot drop lanes a narrow target (r8unorm) does not store: the tile-memory comparison then varies
// the format alone, not the arithmetic.
//
// fs_texture (texture suite): N fetches from an S x S texture (S a power of two); fetch k of pixel
// p = py W + px reads linear texel L = (p + k P) mod S^2 (coherent) or L = hash(p, k) mod S^2
// (random), at its centre (nearest) or at its corner with the next texel right and below (bilinear:
// weights exactly 1/4, repeat addressing). The colour is the sum of the N fetches (rgba32float).

override F: u32 = 0u;          // FMA iterations per pixel (fs_fill)
override FETCHES: u32 = 1u;    // fetches per pixel (fs_texture)
override RANDOM: bool = false; // fs_texture: hashed texel indices instead of coherent ones
override BILINEAR: bool = false; // fs_texture: corner coordinates, for a linear-filtering sampler

struct Frame {
  width: u32,   // target width in pixels (P = width * height)
  height: u32,
  size: u32,    // texture size S (fs_texture)
  pad: u32,
}

@group(0) @binding(0) var<uniform> frame: Frame;
@group(0) @binding(1) var tex: texture_2d<f32>;
@group(0) @binding(2) var samp: sampler;

@vertex
fn vs_fullscreen(@builtin(vertex_index) i: u32) -> @builtin(position) vec4<f32> {
  let x = f32((i << 1u) & 2u) * 2.0 - 1.0;
  let y = f32(i & 2u) * 2.0 - 1.0;
  return vec4<f32>(x, y, 0.0, 1.0);
}

fn pixel_input(px: u32, py: u32) -> vec4<f32> {
  let base = 7u * px + 13u * py;
  return vec4<f32>(f32((base) % 32u), f32((base + 5u) % 32u), f32((base + 10u) % 32u),
                   f32((base + 15u) % 32u)) / 64.0 - vec4<f32>(0.25);
}

@fragment
fn fs_fill(@builtin(position) pos: vec4<f32>) -> @location(0) vec4<f32> {
  let x = pixel_input(u32(pos.x), u32(pos.y));
  var c = x;
  var d = vec4<f32>(-1.0);
  var e = x;
  var f = vec4<f32>(-1.0);
  for (var i = 0u; i < F; i = i + 1u) {
    c = fma(c, d, e);
    d = fma(d, e, f);
    e = fma(e, f, c);
    f = fma(f, c, d);
  }
  let s = c + d + e + f;
  let total = (s.x + s.y) + (s.z + s.w);  // every lane reaches every channel: see the header
  return s * 0.03125 + vec4<f32>(total * 0.0078125 + 0.5);
}

// lowbias32 (Chris Wellons' integer hash): every step is exact in 32-bit unsigned arithmetic.
fn hash(v: u32) -> u32 {
  var h = v;
  h = h ^ (h >> 16u);
  h = h * 0x7feb352du;
  h = h ^ (h >> 15u);
  h = h * 0x846ca68bu;
  h = h ^ (h >> 16u);
  return h;
}

@fragment
fn fs_texture(@builtin(position) pos: vec4<f32>) -> @location(0) vec4<f32> {
  let p = u32(pos.y) * frame.width + u32(pos.x);
  let pixels = frame.width * frame.height;
  let s = frame.size;
  let texels = s * s;  // S <= 32768, so S^2 <= 2^30 fits
  var sum = vec4<f32>(0.0);
  for (var k = 0u; k < FETCHES; k = k + 1u) {
    var l: u32;
    if (RANDOM) {
      l = hash(p * 16u + k) & (texels - 1u);
    } else {
      l = (p + k * pixels) & (texels - 1u);
    }
    let t = vec2<f32>(f32(l & (s - 1u)), f32(l / s));
    let offset = select(0.5, 1.0, BILINEAR);
    sum = sum + textureSampleLevel(tex, samp, (t + vec2<f32>(offset)) / f32(s), 0.0);
  }
  return sum;
}
