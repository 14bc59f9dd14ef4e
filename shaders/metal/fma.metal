// FMA-chain kernels of the sweep and peak suites (docs/design/measurement.md, "Counting FLOPs and bytes";
// python/apple_roofline/suites/fma.py documents each recurrence and holds the NumPy reference
// every output is checked against). One work item is one thread. The CUDA twins are
// shaders/cuda/fma.cu (same names, same arguments, the same recurrences operation for operation);
// the CPU twins native/cpu/kernels.cpp.
//
// Compiled at run time with newLibraryWithSource: (Metal 3.0, safe math); the FMA iteration count F
// is the function constant below, set by name. Arguments, bound at [[buffer(i)]] in the order the
// suite passes them (core/backend.h): in, out (device pointers), a (constant float&: the chains'
// additive constant, rounded to fp32 by the backend; absent for vec4_cross4), then the number of
// work items n (constant ulong&). The backend dispatches exactly n threads; the guard mirrors CUDA's.
//
//   vec4_cross4   one 4-wide vector per thread, c = e = x, d = f = -1, F iterations of
//                 c = fma(c,d,e); d = fma(d,e,f); e = fma(e,f,c); f = fma(f,c,d); out = ((c+d)+e)+f.
//                 32·F FLOPs per thread.
//   vec4_indepK   one 4-wide vector x, K chains c_k = x + k/16, c_k = fma(c_k, c_k, a); out = sum
//                 (s = c_0, then s = s + c_k in order). 8·K·F FLOPs.
//   scalar_indepK K consecutive scalars per thread (in[i·K + k]), each its own chain c = fma(c, c, a).
//                 2·K·F FLOPs.
//
// FP16 uses half4 for the vector kernels (per lane what fma.cu's two half2 registers compute) and
// scalar half for the scalar kernels; a is converted once with half(a) (round to nearest even, as
// cvt.rn.f16.f32). Every FMA is an explicit fma() (fused for float and half). fma.cu's fp64 kernel
// (scalar_indep8_f64) has no twin: Apple GPUs and MSL have no FP64. fma.cu's optional compile-time
// CHAIN_A literal is not mirrored either: here `a` is always the argument. Loop hints are clang's
// `#pragma clang loop` (as MLX's and ggml's Metal kernels write them), with literal counts: the
// scalar kernels unroll the F loop 8× where fma.cu unrolls it 128/K×.

#include <metal_stdlib>
using namespace metal;

// FMA iterations per chain (fma.cu's -DF).
constant int F [[function_constant(0)]];

// ---- fp32 ------------------------------------------------------------------------------------------

kernel void vec4_cross4_f32(const device float4* in [[buffer(0)]], device float4* out [[buffer(1)]],
                            constant ulong& n [[buffer(2)]], uint i [[thread_position_in_grid]]) {
  if (i >= n) return;
  float4 c = in[i], e = c;
  float4 d = float4(-1.0f), f = d;
#pragma clang loop unroll_count(8)
  for (int it = 0; it < F; ++it) {
    c = fma(c, d, e);
    d = fma(d, e, f);
    e = fma(e, f, c);
    f = fma(f, c, d);
  }
  out[i] = ((c + d) + e) + f;
}

template <int K>
inline void vec4_indep_f32(const device float4* in, device float4* out, float a, ulong n, uint i) {
  if (i >= n) return;
  const float4 x = in[i];
  float4 c[K];
#pragma clang loop unroll(full)
  for (int k = 0; k < K; ++k) {
    const float o = 0.0625f * float(k);
    c[k] = x + float4(o);
  }
  const float4 av = float4(a);
#pragma clang loop unroll_count(4)
  for (int it = 0; it < F; ++it) {
#pragma clang loop unroll(full)
    for (int k = 0; k < K; ++k) c[k] = fma(c[k], c[k], av);
  }
  float4 s = c[0];
#pragma clang loop unroll(full)
  for (int k = 1; k < K; ++k) s = s + c[k];
  out[i] = s;
}

kernel void vec4_indep4_f32(const device float4* in [[buffer(0)]], device float4* out [[buffer(1)]],
                            constant float& a [[buffer(2)]], constant ulong& n [[buffer(3)]],
                            uint i [[thread_position_in_grid]]) {
  vec4_indep_f32<4>(in, out, a, n, i);
}

kernel void vec4_indep8_f32(const device float4* in [[buffer(0)]], device float4* out [[buffer(1)]],
                            constant float& a [[buffer(2)]], constant ulong& n [[buffer(3)]],
                            uint i [[thread_position_in_grid]]) {
  vec4_indep_f32<8>(in, out, a, n, i);
}

// K consecutive scalars per thread, each its own chain. (fma.cu moves them as float4s; the values
// and the operations are the same.)
template <int K>
inline void scalar_indep_f32(const device float* in, device float* out, float a, ulong n, uint i) {
  if (i >= n) return;
  const ulong base = ulong(i) * ulong(K);
  float c[K];
#pragma clang loop unroll(full)
  for (int k = 0; k < K; ++k) c[k] = in[base + k];
#pragma clang loop unroll_count(8)
  for (int it = 0; it < F; ++it) {
#pragma clang loop unroll(full)
    for (int k = 0; k < K; ++k) c[k] = fma(c[k], c[k], a);
  }
#pragma clang loop unroll(full)
  for (int k = 0; k < K; ++k) out[base + k] = c[k];
}

kernel void scalar_indep4_f32(const device float* in [[buffer(0)]], device float* out [[buffer(1)]],
                              constant float& a [[buffer(2)]], constant ulong& n [[buffer(3)]],
                              uint i [[thread_position_in_grid]]) {
  scalar_indep_f32<4>(in, out, a, n, i);
}

kernel void scalar_indep8_f32(const device float* in [[buffer(0)]], device float* out [[buffer(1)]],
                              constant float& a [[buffer(2)]], constant ulong& n [[buffer(3)]],
                              uint i [[thread_position_in_grid]]) {
  scalar_indep_f32<8>(in, out, a, n, i);
}

kernel void scalar_indep16_f32(const device float* in [[buffer(0)]], device float* out [[buffer(1)]],
                               constant float& a [[buffer(2)]], constant ulong& n [[buffer(3)]],
                               uint i [[thread_position_in_grid]]) {
  scalar_indep_f32<16>(in, out, a, n, i);
}

// ---- fp16 ------------------------------------------------------------------------------------------

kernel void vec4_cross4_f16(const device half4* in [[buffer(0)]], device half4* out [[buffer(1)]],
                            constant ulong& n [[buffer(2)]], uint i [[thread_position_in_grid]]) {
  if (i >= n) return;
  half4 c = in[i], e = c;
  half4 d = half4(half(-1.0f)), f = d;
#pragma clang loop unroll_count(8)
  for (int it = 0; it < F; ++it) {
    c = fma(c, d, e);
    d = fma(d, e, f);
    e = fma(e, f, c);
    f = fma(f, c, d);
  }
  out[i] = ((c + d) + e) + f;
}

// vec4_indepK in half4: K chains started at x + k/16 (added in fp16, as fma.cu and the reference
// do; k/16 is exact in fp16), summed in order.
template <int K>
inline void vec4_indep_f16(const device half4* in, device half4* out, float a, ulong n, uint i) {
  if (i >= n) return;
  const half4 xv = in[i];
  const half ah = half(a);
  const half4 av = half4(ah);
  half4 c[K];
#pragma clang loop unroll(full)
  for (int k = 0; k < K; ++k) {
    const half o = half(0.0625f * float(k));
    c[k] = xv + half4(o);
  }
#pragma clang loop unroll_count(4)
  for (int it = 0; it < F; ++it) {
#pragma clang loop unroll(full)
    for (int k = 0; k < K; ++k) c[k] = fma(c[k], c[k], av);
  }
  half4 s = c[0];
#pragma clang loop unroll(full)
  for (int k = 1; k < K; ++k) s = s + c[k];
  out[i] = s;
}

kernel void vec4_indep4_f16(const device half4* in [[buffer(0)]], device half4* out [[buffer(1)]],
                            constant float& a [[buffer(2)]], constant ulong& n [[buffer(3)]],
                            uint i [[thread_position_in_grid]]) {
  vec4_indep_f16<4>(in, out, a, n, i);
}

kernel void vec4_indep8_f16(const device half4* in [[buffer(0)]], device half4* out [[buffer(1)]],
                            constant float& a [[buffer(2)]], constant ulong& n [[buffer(3)]],
                            uint i [[thread_position_in_grid]]) {
  vec4_indep_f16<8>(in, out, a, n, i);
}

// K consecutive halves per thread, each its own scalar chain. (fma.cu moves them as 16-byte uint4s.)
template <int K>
inline void scalar_indep_f16(const device half* in, device half* out, float a, ulong n, uint i) {
  if (i >= n) return;
  const half ah = half(a);
  const ulong base = ulong(i) * ulong(K);
  half c[K];
#pragma clang loop unroll(full)
  for (int k = 0; k < K; ++k) c[k] = in[base + k];
#pragma clang loop unroll_count(8)
  for (int it = 0; it < F; ++it) {
#pragma clang loop unroll(full)
    for (int k = 0; k < K; ++k) c[k] = fma(c[k], c[k], ah);
  }
#pragma clang loop unroll(full)
  for (int k = 0; k < K; ++k) out[base + k] = c[k];
}

kernel void scalar_indep8_f16(const device half* in [[buffer(0)]], device half* out [[buffer(1)]],
                              constant float& a [[buffer(2)]], constant ulong& n [[buffer(3)]],
                              uint i [[thread_position_in_grid]]) {
  scalar_indep_f16<8>(in, out, a, n, i);
}

kernel void scalar_indep16_f16(const device half* in [[buffer(0)]], device half* out [[buffer(1)]],
                               constant float& a [[buffer(2)]], constant ulong& n [[buffer(3)]],
                               uint i [[thread_position_in_grid]]) {
  scalar_indep_f16<16>(in, out, a, n, i);
}

kernel void scalar_indep32_f16(const device half* in [[buffer(0)]], device half* out [[buffer(1)]],
                               constant float& a [[buffer(2)]], constant ulong& n [[buffer(3)]],
                               uint i [[thread_position_in_grid]]) {
  scalar_indep_f16<32>(in, out, a, n, i);
}
