// Dual-issue kernels of the dualissue suite (python/apple_roofline/suites/dualissue/kernels.py
// documents them and holds the NumPy references every output is checked against). One work item is
// one thread. The Metal twins are shaders/metal/dualissue.metal (same names, same arguments, the
// same operations); the CPU twins native/cpu/rules.cpp.
//
// Compiled at run time with NVRTC: -DF=<steps per chain, even> -DBLOCK=<threads per block>, and
// CHAIN_A / CHAIN_A_F16 as fma.cu (the chain constant as a literal; the reference uses the
// argument a, so validation proves they agree). Arguments: in (8 floats per thread), out (32-bit
// words: plane 0 at out[8i + k], plane 1 at out[8n + 8i + k]), a (double), then n.
//
// Eight independent chains of each kind per thread, F steps each:
//   fp32   c = fma(c, c, a), c = x                     plane 0: bits of c
//   fp16   h = fma(h, h, half(a)), h = half(x)         plane 0: bits of float(h)
//   int32  u = bits(x), v = u ^ 0x9E3779B9, alternately u += v; v += u   plane 0: u ^ v
// dual_fp32_fp16 and dual_fp32_int32 run both kinds in one loop, interleaved, with the second
// kind's results in plane 1: the same operation counts as the two kernels alone. fp16 operations
// are the single PTX instructions cuda_fp16.hpp's __hfma expands to (fma.cu says why).
#ifndef F
#error "compile with -DF=<steps per chain, even>"
#endif

#define AR_INDEX (blockIdx.x * (unsigned long long)BLOCK + threadIdx.x)
#define AR_STEP 0x9E3779B9u

#ifdef CHAIN_A
#define AR_A(a) (CHAIN_A)
#else
#define AR_A(a) (a)
#endif

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
__device__ __forceinline__ float half_to_float(unsigned short h) {
  float x;
  asm("cvt.f32.f16 %0, %1;" : "=f"(x) : "h"(h));
  return x;
}

// Which chains a kernel runs: FP32, FP16, INT32 (a bit each); the first kind present writes plane 0,
// a second one plane 1.
#define AR_FP32 1
#define AR_FP16 2
#define AR_INT 4

template <int SETS>
__device__ __forceinline__ void dual(const float* __restrict__ in, unsigned int* __restrict__ out, float a,
                                     unsigned long long n) {
  const unsigned long long i = AR_INDEX;
  if (i >= n) return;
#ifdef CHAIN_A_F16
  const unsigned short ah = (unsigned short)(CHAIN_A_F16);
#else
  const unsigned short ah = float_to_half(a);
#endif
  float c[8];
  unsigned short h[8];
  unsigned int u[8], v[8];
#pragma unroll
  for (int k = 0; k < 8; ++k) {
    const float x = in[8 * i + k];
    c[k] = x;
    h[k] = float_to_half(x);
    u[k] = __float_as_uint(x);
    v[k] = u[k] ^ AR_STEP;
  }
#pragma unroll 16
  for (int it = 0; it < F / 2; ++it) {
#pragma unroll
    for (int k = 0; k < 8; ++k) {
      if (SETS & AR_FP32) c[k] = fmaf(c[k], c[k], a);
      if (SETS & AR_FP16) h[k] = hfma(h[k], h[k], ah);
      if (SETS & AR_INT) u[k] += v[k];
      if (SETS & AR_FP32) c[k] = fmaf(c[k], c[k], a);
      if (SETS & AR_FP16) h[k] = hfma(h[k], h[k], ah);
      if (SETS & AR_INT) v[k] += u[k];
    }
  }
  unsigned int* second = out + ((SETS & AR_FP32) && SETS != AR_FP32 ? 8 * n : 0);
#pragma unroll
  for (int k = 0; k < 8; ++k) {
    if (SETS & AR_FP32) out[8 * i + k] = __float_as_uint(c[k]);
    if (SETS & AR_FP16) second[8 * i + k] = __float_as_uint(half_to_float(h[k]));
    if (SETS & AR_INT) second[8 * i + k] = u[k] ^ v[k];
  }
}

extern "C" __global__ void __launch_bounds__(BLOCK)
    dual_fp32(const float* __restrict__ in, unsigned int* __restrict__ out, double a, unsigned long long n) {
  dual<AR_FP32>(in, out, (float)AR_A(a), n);
}

extern "C" __global__ void __launch_bounds__(BLOCK)
    dual_fp16(const float* __restrict__ in, unsigned int* __restrict__ out, double a, unsigned long long n) {
  dual<AR_FP16>(in, out, (float)AR_A(a), n);
}

extern "C" __global__ void __launch_bounds__(BLOCK)
    dual_int32(const float* __restrict__ in, unsigned int* __restrict__ out, double a, unsigned long long n) {
  dual<AR_INT>(in, out, (float)AR_A(a), n);
}

extern "C" __global__ void __launch_bounds__(BLOCK)
    dual_fp32_fp16(const float* __restrict__ in, unsigned int* __restrict__ out, double a, unsigned long long n) {
  dual<AR_FP32 | AR_FP16>(in, out, (float)AR_A(a), n);
}

extern "C" __global__ void __launch_bounds__(BLOCK)
    dual_fp32_int32(const float* __restrict__ in, unsigned int* __restrict__ out, double a, unsigned long long n) {
  dual<AR_FP32 | AR_INT>(in, out, (float)AR_A(a), n);
}
