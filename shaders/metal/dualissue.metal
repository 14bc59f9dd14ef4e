// Dual-issue kernels of the dualissue suite (python/apple_roofline/suites/dualissue/kernels.py
// documents them and holds the NumPy references every output is checked against). One work item is
// one thread. The CUDA twins are shaders/cuda/dualissue.cu (same names, same arguments, the same
// operations); the CPU twins native/cpu/rules.cpp.
//
// Compiled at run time with newLibraryWithSource: (Metal 3.0); F (steps per chain, even) is the
// function constant below (dualissue.cu's -DF). Arguments, bound at [[buffer(i)]] in the order the
// suite passes them (core/backend.h): in (8 floats per thread), out (32-bit words: plane 0 at
// out[8i + k], plane 1 at out[8n + 8i + k]), a (constant float&), then n (constant ulong&).
//
// Eight independent chains of each kind per thread, F steps each:
//   fp32   c = fma(c, c, a), c = x                     plane 0: bits of c
//   fp16   h = fma(h, h, half(a)), h = half(x)         plane 0: bits of float(h)
//   int32  u = bits(x), v = u ^ 0x9E3779B9, alternately u += v; v += u   plane 0: u ^ v
// dual_fp32_fp16 and dual_fp32_int32 interleave both kinds in one loop, the second kind's results
// in plane 1: the same operation counts as the two kernels alone. The A19 article says Family 9
// GPUs (M3, M4, M5) issue an FP32 instruction together with an FP16 or integer one.

#include <metal_stdlib>
using namespace metal;

// Steps per chain (dualissue.cu's -DF).
constant int F [[function_constant(0)]];

constant uint AR_STEP = 0x9E3779B9u;
constant int AR_FP32 = 1;
constant int AR_FP16 = 2;
constant int AR_INT = 4;

template <int SETS>
inline void dual(const device float* in, device uint* out, float a, ulong n, uint i) {
  if (i >= n) return;
  const half ah = half(a);
  float c[8];
  half h[8];
  uint u[8], v[8];
  for (int k = 0; k < 8; ++k) {
    const float x = in[8 * ulong(i) + k];
    c[k] = x;
    h[k] = half(x);
    u[k] = as_type<uint>(x);
    v[k] = u[k] ^ AR_STEP;
  }
#pragma clang loop unroll_count(16)
  for (int it = 0; it < F / 2; ++it) {
    for (int k = 0; k < 8; ++k) {
      if (SETS & AR_FP32) c[k] = fma(c[k], c[k], a);
      if (SETS & AR_FP16) h[k] = fma(h[k], h[k], ah);
      if (SETS & AR_INT) u[k] += v[k];
      if (SETS & AR_FP32) c[k] = fma(c[k], c[k], a);
      if (SETS & AR_FP16) h[k] = fma(h[k], h[k], ah);
      if (SETS & AR_INT) v[k] += u[k];
    }
  }
  device uint* second = out + (((SETS & AR_FP32) != 0 && SETS != AR_FP32) ? 8 * n : 0);
  for (int k = 0; k < 8; ++k) {
    if (SETS & AR_FP32) out[8 * ulong(i) + k] = as_type<uint>(c[k]);
    if (SETS & AR_FP16) second[8 * ulong(i) + k] = as_type<uint>(float(h[k]));
    if (SETS & AR_INT) second[8 * ulong(i) + k] = u[k] ^ v[k];
  }
}

kernel void dual_fp32(const device float* in [[buffer(0)]], device uint* out [[buffer(1)]],
                      constant float& a [[buffer(2)]], constant ulong& n [[buffer(3)]],
                      uint i [[thread_position_in_grid]]) {
  dual<1>(in, out, a, n, i);
}

kernel void dual_fp16(const device float* in [[buffer(0)]], device uint* out [[buffer(1)]],
                      constant float& a [[buffer(2)]], constant ulong& n [[buffer(3)]],
                      uint i [[thread_position_in_grid]]) {
  dual<2>(in, out, a, n, i);
}

kernel void dual_int32(const device float* in [[buffer(0)]], device uint* out [[buffer(1)]],
                       constant float& a [[buffer(2)]], constant ulong& n [[buffer(3)]],
                       uint i [[thread_position_in_grid]]) {
  dual<4>(in, out, a, n, i);
}

kernel void dual_fp32_fp16(const device float* in [[buffer(0)]], device uint* out [[buffer(1)]],
                           constant float& a [[buffer(2)]], constant ulong& n [[buffer(3)]],
                           uint i [[thread_position_in_grid]]) {
  dual<3>(in, out, a, n, i);
}

kernel void dual_fp32_int32(const device float* in [[buffer(0)]], device uint* out [[buffer(1)]],
                            constant float& a [[buffer(2)]], constant ulong& n [[buffer(3)]],
                            uint i [[thread_position_in_grid]]) {
  dual<5>(in, out, a, n, i);
}
