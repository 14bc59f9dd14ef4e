// The graphics suites' shaders for the native Metal path, twins of shaders/wgsl/graphics.wgsl. The
// computation per pixel is defined in python/apple_roofline/graphics/kernels.py, which holds the
// NumPy references both twins are checked against (docs/design/graphics.md, "The graphics study").
//
// Compiled at run time with newLibraryWithSource: (Metal 3.0, safe math) by the backend's render
// passes (core/backend.h, RenderSpec); the function constants below are set by name by the runner
// (python/apple_roofline/graphics/native_device.py), always, so they have no defaults.
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
// p = py W + px reads linear texel L = (p + k P) mod S^2 (coherent) or L = hash(16 p + k) mod S^2
// (random), at its centre (nearest) or at its corner with the next texel right and below (bilinear:
// weights exactly 1/4, repeat addressing). The colour is the sum of the N fetches (rgba32float).
// Bound by the backend: the Frame at [[buffer(0)]] (setFragmentBytes), the texture at
// [[texture(0)]] and a sampler with the filter the pass asks for at [[sampler(0)]].

#include <metal_stdlib>
using namespace metal;

constant uint F [[function_constant(0)]];         // FMA iterations per pixel (fs_fill)
constant uint FETCHES [[function_constant(1)]];   // fetches per pixel (fs_texture)
constant bool RANDOM [[function_constant(2)]];    // fs_texture: hashed texel indices instead of coherent ones
constant bool BILINEAR [[function_constant(3)]];  // fs_texture: corner coordinates, for a linear-filtering sampler

struct Frame {
  uint width;  // target width in pixels (P = width * height)
  uint height;
  uint size;  // texture size S (fs_texture)
  uint pad;
};

vertex float4 vs_fullscreen(uint i [[vertex_id]]) {
  const float x = float((i << 1u) & 2u) * 2.0f - 1.0f;
  const float y = float(i & 2u) * 2.0f - 1.0f;
  return float4(x, y, 0.0f, 1.0f);
}

inline float4 pixel_input(uint px, uint py) {
  const uint base = 7u * px + 13u * py;
  const float4 v =
      float4(float(base % 32u), float((base + 5u) % 32u), float((base + 10u) % 32u), float((base + 15u) % 32u));
  return v / 64.0f - float4(0.25f);
}

fragment float4 fs_fill(float4 pos [[position]]) {
  const float4 x = pixel_input(uint(pos.x), uint(pos.y));
  float4 c = x, e = x;
  float4 d = float4(-1.0f), f = d;
  for (uint i = 0; i < F; ++i) {
    c = fma(c, d, e);
    d = fma(d, e, f);
    e = fma(e, f, c);
    f = fma(f, c, d);
  }
  const float4 s = c + d + e + f;
  const float total = (s.x + s.y) + (s.z + s.w);  // every lane reaches every channel: see the header
  return s * 0.03125f + float4(total * 0.0078125f + 0.5f);
}

// lowbias32 (Chris Wellons' integer hash): every step is exact in 32-bit unsigned arithmetic.
inline uint lowbias32(uint v) {
  uint h = v;
  h = h ^ (h >> 16u);
  h = h * 0x7feb352du;
  h = h ^ (h >> 15u);
  h = h * 0x846ca68bu;
  h = h ^ (h >> 16u);
  return h;
}

fragment float4 fs_texture(float4 pos [[position]], constant Frame& frame [[buffer(0)]],
                           texture2d<float> tex [[texture(0)]], sampler samp [[sampler(0)]]) {
  const uint p = uint(pos.y) * frame.width + uint(pos.x);
  const uint pixels = frame.width * frame.height;
  const uint s = frame.size;
  const uint texels = s * s;  // S <= 16384, so S^2 <= 2^28 fits
  const float offset = BILINEAR ? 1.0f : 0.5f;
  float4 sum = float4(0.0f);
  for (uint k = 0; k < FETCHES; ++k) {
    const uint l = (RANDOM ? lowbias32(p * 16u + k) : p + k * pixels) & (texels - 1u);
    const float2 t = float2(float(l & (s - 1u)), float(l / s));
    sum = sum + tex.sample(samp, (t + float2(offset)) / float(s), level(0.0f));
  }
  return sum;
}
