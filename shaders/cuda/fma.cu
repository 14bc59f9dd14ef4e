// FMA-chain kernels of the sweep and peak suites (docs/design/measurement.md, "Counting FLOPs and bytes";
// python/apple_roofline/suites/fma.py documents each recurrence and holds the NumPy reference
// every output is checked against). One work item is one thread. The CPU twins are
// native/cpu/kernels.cpp, the Metal twins shaders/metal/fma.metal: the same recurrences, operation
// for operation.
//
// Compiled at run time with NVRTC: -DF=<FMA iterations> -DBLOCK=<threads per block>. Arguments:
// in, out (device pointers), a (double; the chains' additive constant, absent for vec4_cross4),
// then the number of work items n.
//
//   vec4_cross4   one 4-wide vector per thread, c = e = x, d = f = -1, F iterations of
//                 c = fma(c,d,e); d = fma(d,e,f); e = fma(e,f,c); f = fma(f,c,d); out = ((c+d)+e)+f.
//                 32·F FLOPs per thread.
//   vec4_indepK   one 4-wide vector x, K chains c_k = x + k/16, c_k = fma(c_k, c_k, a); out = sum.
//   scalar_indepK K consecutive scalars per thread, each its own chain c = fma(c, c, a).
//
// FP16 uses `half2` arithmetic for the vector kernels (two fma.rn.f16x2 per 4-wide FMA) and scalar
// `half` for the scalar kernels, as the M5 article's kernels do. The f16 operations are written as
// the single PTX instructions that cuda_fp16.hpp's __hfma2 / __hfma / __hadd2 / __hadd expand to,
// because NVRTC finds cuda_fp16.h only with the toolkit's include folder, which a machine with
// just the driver and the NVRTC library does not have.

//
// Loop bodies: the independent-chain loops are unrolled to about 512 FMA instructions. An FFMA
// takes a whole issue slot of an SM sub-partition (Hopper: 32 FP32 lanes per sub-partition, one
// warp instruction per clock), so the loop's counter, compare and branch take slots from the FMAs:
// 3 in 131 with 128-FMA bodies, under 1 % with 512. On an H100, vec4_indep8 went from 96.1 to 97.7 %
// of the FP32 peak and the half2 vec4_indep8 reached 96.6 % of the FP16 one (92.5 % on an H200 before); 1024-FMA bodies
// ran slower (the instruction cache). The recurrences, and so the results, are unchanged.
#include "clock.cuh"  // the effective-clock probe every timed kernel runs (docs/design/clocks.md, "Clocks")

#ifndef F
#error "compile with -DF=<FMA iterations per chain>"
#endif

#define AR_INDEX (blockIdx.x * (unsigned long long)BLOCK + threadIdx.x)

// The chains' additive constant: the run-time argument `a`, or the compile-time CHAIN_A (and its
// fp16 bit pattern CHAIN_A_F16) where the kernel table specialises it. A literal lets ptxas issue
// HFMA2 to both of Hopper's FP16 pipes (FMA and MMA): on an H200, vec4_indep8_f16 ran at 124
// TFLOP/s with it and at 66 with `a` in a register broadcast as .H0_H0, which only the FMA pipe
// takes. The NumPy reference is computed with the run's `a`, so validation proves the two agree.
#ifdef CHAIN_A
#define AR_A(a) (CHAIN_A)
#else
#define AR_A(a) (a)
#endif

// ---- fp32 ------------------------------------------------------------------------------------------

__device__ __forceinline__ float4 fma4(float4 a, float4 b, float4 c) {
  return make_float4(fmaf(a.x, b.x, c.x), fmaf(a.y, b.y, c.y), fmaf(a.z, b.z, c.z), fmaf(a.w, b.w, c.w));
}
__device__ __forceinline__ float4 add4(float4 a, float4 b) {
  return make_float4(a.x + b.x, a.y + b.y, a.z + b.z, a.w + b.w);
}

extern "C" __global__ void __launch_bounds__(BLOCK)
    vec4_cross4_f32(const float4* __restrict__ in, float4* __restrict__ out, unsigned long long n) {
  AR_CLOCK_PROBE_HERE();
  const unsigned long long i = AR_INDEX;
  if (i >= n) return;
  float4 c = in[i], e = c;
  float4 d = make_float4(-1.0f, -1.0f, -1.0f, -1.0f), f = d;
#pragma unroll 8
  for (int it = 0; it < F; ++it) {
    c = fma4(c, d, e);
    d = fma4(d, e, f);
    e = fma4(e, f, c);
    f = fma4(f, c, d);
  }
  out[i] = add4(add4(add4(c, d), e), f);
}

template <int K>
__device__ __forceinline__ void vec4_indep(const float4* __restrict__ in, float4* __restrict__ out, float a,
                                           unsigned long long n) {
  const unsigned long long i = AR_INDEX;
  if (i >= n) return;
  const float4 x = in[i];
  float4 c[K];
#pragma unroll
  for (int k = 0; k < K; ++k) {
    const float o = 0.0625f * (float)k;
    c[k] = make_float4(x.x + o, x.y + o, x.z + o, x.w + o);
  }
  const float4 av = make_float4(a, a, a, a);
#pragma unroll 128 / K  // 4K FMAs an iteration: 512 a loop body (see the header)
  for (int it = 0; it < F; ++it) {
#pragma unroll
    for (int k = 0; k < K; ++k) c[k] = fma4(c[k], c[k], av);
  }
  float4 s = c[0];
#pragma unroll
  for (int k = 1; k < K; ++k) s = add4(s, c[k]);
  out[i] = s;
}

extern "C" __global__ void __launch_bounds__(BLOCK)
    vec4_indep4_f32(const float4* __restrict__ in, float4* __restrict__ out, double a, unsigned long long n) {
  AR_CLOCK_PROBE_HERE();
  vec4_indep<4>(in, out, (float)AR_A(a), n);
}

extern "C" __global__ void __launch_bounds__(BLOCK)
    vec4_indep8_f32(const float4* __restrict__ in, float4* __restrict__ out, double a, unsigned long long n) {
  AR_CLOCK_PROBE_HERE();
  vec4_indep<8>(in, out, (float)AR_A(a), n);
}

// K consecutive scalars per thread, loaded and stored as float4s (K is a multiple of 4).
template <int K>
__device__ __forceinline__ void scalar_indep_f32(const float* __restrict__ in, float* __restrict__ out, float a,
                                                 unsigned long long n) {
  const unsigned long long i = AR_INDEX;
  if (i >= n) return;
  const float4* src = reinterpret_cast<const float4*>(in) + i * (K / 4);
  float c[K];
#pragma unroll
  for (int v = 0; v < K / 4; ++v) {
    const float4 x = src[v];
    c[4 * v] = x.x;
    c[4 * v + 1] = x.y;
    c[4 * v + 2] = x.z;
    c[4 * v + 3] = x.w;
  }
#pragma unroll 512 / K  // K FMAs an iteration: 512 a loop body
  for (int it = 0; it < F; ++it) {
#pragma unroll
    for (int k = 0; k < K; ++k) c[k] = fmaf(c[k], c[k], a);
  }
  float4* dst = reinterpret_cast<float4*>(out) + i * (K / 4);
#pragma unroll
  for (int v = 0; v < K / 4; ++v) dst[v] = make_float4(c[4 * v], c[4 * v + 1], c[4 * v + 2], c[4 * v + 3]);
}

extern "C" __global__ void __launch_bounds__(BLOCK)
    scalar_indep4_f32(const float* __restrict__ in, float* __restrict__ out, double a, unsigned long long n) {
  AR_CLOCK_PROBE_HERE();
  scalar_indep_f32<4>(in, out, (float)AR_A(a), n);
}

extern "C" __global__ void __launch_bounds__(BLOCK)
    scalar_indep8_f32(const float* __restrict__ in, float* __restrict__ out, double a, unsigned long long n) {
  AR_CLOCK_PROBE_HERE();
  scalar_indep_f32<8>(in, out, (float)AR_A(a), n);
}

extern "C" __global__ void __launch_bounds__(BLOCK)
    scalar_indep16_f32(const float* __restrict__ in, float* __restrict__ out, double a, unsigned long long n) {
  AR_CLOCK_PROBE_HERE();
  scalar_indep_f32<16>(in, out, (float)AR_A(a), n);
}

// ---- fp16 (bit patterns in unsigned short / unsigned int registers) ---------------------------------

__device__ __forceinline__ unsigned int hfma2(unsigned int a, unsigned int b, unsigned int c) {
  unsigned int d;
  asm("fma.rn.f16x2 %0, %1, %2, %3;" : "=r"(d) : "r"(a), "r"(b), "r"(c));
  return d;
}
__device__ __forceinline__ unsigned int hadd2(unsigned int a, unsigned int b) {
  unsigned int d;
  asm("add.rn.f16x2 %0, %1, %2;" : "=r"(d) : "r"(a), "r"(b));
  return d;
}
__device__ __forceinline__ unsigned short hfma(unsigned short a, unsigned short b, unsigned short c) {
  unsigned short d;
  asm("fma.rn.f16 %0, %1, %2, %3;" : "=h"(d) : "h"(a), "h"(b), "h"(c));
  return d;
}
__device__ __forceinline__ unsigned short float_to_half(float x) {
  unsigned short h;
  asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(x));
  return h;
}

// A 4-wide half vector as two half2 registers (8 bytes).
struct half4 {
  unsigned int lo, hi;
};
__device__ __forceinline__ half4 hfma4(half4 a, half4 b, half4 c) {
  return {hfma2(a.lo, b.lo, c.lo), hfma2(a.hi, b.hi, c.hi)};
}
__device__ __forceinline__ half4 hadd4(half4 a, half4 b) { return {hadd2(a.lo, b.lo), hadd2(a.hi, b.hi)}; }

extern "C" __global__ void __launch_bounds__(BLOCK)
    vec4_cross4_f16(const uint2* __restrict__ in, uint2* __restrict__ out, unsigned long long n) {
  AR_CLOCK_PROBE_HERE();
  const unsigned long long i = AR_INDEX;
  if (i >= n) return;
  const uint2 x = in[i];
  half4 c = {x.x, x.y}, e = c;
  const unsigned int minus_one2 = 0xBC00BC00u;  // (-1.0, -1.0) in half2
  half4 d = {minus_one2, minus_one2}, f = d;
#pragma unroll 8
  for (int it = 0; it < F; ++it) {
    c = hfma4(c, d, e);
    d = hfma4(d, e, f);
    e = hfma4(e, f, c);
    f = hfma4(f, c, d);
  }
  const half4 s = hadd4(hadd4(hadd4(c, d), e), f);
  out[i] = make_uint2(s.lo, s.hi);
}

// vec4_indepK in half2: the 4-wide vector as two half2 registers, K chains started at x + k/16
// (added in fp16, as the reference rounds it), summed in order.
template <int K>
__device__ __forceinline__ void vec4_indep_f16(const uint2* __restrict__ in, uint2* __restrict__ out, float a,
                                               unsigned long long n) {
  const unsigned long long i = AR_INDEX;
  if (i >= n) return;
  const uint2 x = in[i];
  const half4 xv = {x.x, x.y};
#ifdef CHAIN_A_F16
  const unsigned short ah = (unsigned short)(CHAIN_A_F16);
#else
  const unsigned short ah = float_to_half(a);
#endif
  const unsigned int a2 = (unsigned int)ah | ((unsigned int)ah << 16);
  const half4 av = {a2, a2};
  half4 c[K];
#pragma unroll
  for (int k = 0; k < K; ++k) {
    const unsigned short o = float_to_half(0.0625f * (float)k);  // exact in fp16
    const unsigned int o2 = (unsigned int)o | ((unsigned int)o << 16);
    c[k] = hadd4(xv, half4{o2, o2});
  }
#pragma unroll 128 / K  // 2K HFMA2s an iteration: 256 a loop body
  for (int it = 0; it < F; ++it) {
#pragma unroll
    for (int k = 0; k < K; ++k) c[k] = hfma4(c[k], c[k], av);
  }
  half4 s = c[0];
#pragma unroll
  for (int k = 1; k < K; ++k) s = hadd4(s, c[k]);
  out[i] = make_uint2(s.lo, s.hi);
}

extern "C" __global__ void __launch_bounds__(BLOCK)
    vec4_indep4_f16(const uint2* __restrict__ in, uint2* __restrict__ out, double a, unsigned long long n) {
  AR_CLOCK_PROBE_HERE();
  vec4_indep_f16<4>(in, out, (float)AR_A(a), n);
}

extern "C" __global__ void __launch_bounds__(BLOCK)
    vec4_indep8_f16(const uint2* __restrict__ in, uint2* __restrict__ out, double a, unsigned long long n) {
  AR_CLOCK_PROBE_HERE();
  vec4_indep_f16<8>(in, out, (float)AR_A(a), n);
}

// K consecutive halves per thread (K a multiple of 8), loaded and stored as 16-byte uint4s, each
// half its own scalar chain.
template <int K>
__device__ __forceinline__ void scalar_indep_f16(const uint4* __restrict__ in, uint4* __restrict__ out, float a,
                                                 unsigned long long n) {
  const unsigned long long i = AR_INDEX;
  if (i >= n) return;
#ifdef CHAIN_A_F16
  const unsigned short ah = (unsigned short)(CHAIN_A_F16);
#else
  const unsigned short ah = float_to_half(a);
#endif
  unsigned short c[K];
#pragma unroll
  for (int v = 0; v < K / 8; ++v) {
    const uint4 x = in[i * (K / 8) + v];
    const unsigned int w[4] = {x.x, x.y, x.z, x.w};
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      c[8 * v + 2 * j] = (unsigned short)(w[j] & 0xFFFFu);
      c[8 * v + 2 * j + 1] = (unsigned short)(w[j] >> 16);
    }
  }
#pragma unroll 512 / K  // K HFMAs an iteration: 512 a loop body
  for (int it = 0; it < F; ++it) {
#pragma unroll
    for (int k = 0; k < K; ++k) c[k] = hfma(c[k], c[k], ah);
  }
#pragma unroll
  for (int v = 0; v < K / 8; ++v) {
    unsigned int w[4];
#pragma unroll
    for (int j = 0; j < 4; ++j) w[j] = (unsigned int)c[8 * v + 2 * j] | ((unsigned int)c[8 * v + 2 * j + 1] << 16);
    out[i * (K / 8) + v] = make_uint4(w[0], w[1], w[2], w[3]);
  }
}

extern "C" __global__ void __launch_bounds__(BLOCK)
    scalar_indep8_f16(const uint4* __restrict__ in, uint4* __restrict__ out, double a, unsigned long long n) {
  AR_CLOCK_PROBE_HERE();
  scalar_indep_f16<8>(in, out, (float)AR_A(a), n);
}

extern "C" __global__ void __launch_bounds__(BLOCK)
    scalar_indep16_f16(const uint4* __restrict__ in, uint4* __restrict__ out, double a, unsigned long long n) {
  AR_CLOCK_PROBE_HERE();
  scalar_indep_f16<16>(in, out, (float)AR_A(a), n);
}

extern "C" __global__ void __launch_bounds__(BLOCK)
    scalar_indep32_f16(const uint4* __restrict__ in, uint4* __restrict__ out, double a, unsigned long long n) {
  AR_CLOCK_PROBE_HERE();
  scalar_indep_f16<32>(in, out, (float)AR_A(a), n);
}

// ---- fp64 ------------------------------------------------------------------------------------------

extern "C" __global__ void __launch_bounds__(BLOCK)
    scalar_indep8_f64(const double2* __restrict__ in, double2* __restrict__ out, double a, unsigned long long n) {
  AR_CLOCK_PROBE_HERE();
  const unsigned long long i = AR_INDEX;
  if (i >= n) return;
  double c[8];
#pragma unroll
  for (int v = 0; v < 4; ++v) {
    const double2 x = in[i * 4 + v];
    c[2 * v] = x.x;
    c[2 * v + 1] = x.y;
  }
#pragma unroll 16
  for (int it = 0; it < F; ++it) {
#pragma unroll
    for (int k = 0; k < 8; ++k) c[k] = fma(c[k], c[k], (double)AR_A(a));
  }
#pragma unroll
  for (int v = 0; v < 4; ++v) out[i * 4 + v] = make_double2(c[2 * v], c[2 * v + 1]);
}
