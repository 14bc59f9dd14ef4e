// Integer-divide kernels of the idiv suite (python/apple_roofline/suites/idiv/kernels.py documents
// the recurrence and holds the NumPy reference every output is checked against). One work item is
// one thread. The Metal twins are shaders/metal/idiv.metal (same names, same arguments, the same
// operations); the CPU twins native/cpu/idiv.cpp.
//
// Compiled at run time with NVRTC: -DF=<operations per chain> -DBLOCK=<threads per block>
// -DDIVISOR=<the constant variant's divisor>. Arguments: in, out (device pointers to 32-bit words),
// the divisor d (long long; only the _argument kernels), then the number of work items n.
//
//   x = in[i];  F times: x = x + (x OP d) + 0x9E3779B9 (mod 2^32);  out[i] = x
//
// OP is / or % on unsigned int (_u32) or int (_i32, truncating); the additions are unsigned, so
// they wrap. d is 256 (_pow2_literal), 255 (_literal), DIVISOR (_constant: known to NVRTC, so
// folded like a literal) or the argument d (_argument: known only at dispatch, so a full divide).

#include "clock.cuh"  // the effective-clock probe every timed kernel runs (docs/design/clocks.md, "Clocks")

#ifndef F
#error "compile with -DF=<operations per chain>"
#endif
#ifndef DIVISOR
#error "compile with -DDIVISOR=<the constant variant's divisor>"
#endif

#define AR_INDEX (blockIdx.x * (unsigned long long)BLOCK + threadIdx.x)
#define AR_STEP 0x9E3779B9u

// The chain of one work item: T is unsigned int or int, d its divisor (a literal or DIVISOR after
// inlining, or the argument), MOD selects %.
template <typename T, bool MOD>
__device__ __forceinline__ unsigned int idiv_chain(unsigned int x, T d) {
#pragma unroll 16
  for (int it = 0; it < F; ++it) {
    const T v = (T)x;
    const T q = MOD ? (T)(v % d) : (T)(v / d);
    x = x + (unsigned int)q + AR_STEP;
  }
  return x;
}

// ---- unsigned (unsigned int) ----------------------------------------------------------------------

extern "C" __global__ void __launch_bounds__(BLOCK)
    idiv_div_u32_pow2_literal(const unsigned int* __restrict__ in, unsigned int* __restrict__ out,
                              unsigned long long n) {
  AR_CLOCK_PROBE_HERE();
  const unsigned long long i = AR_INDEX;
  if (i < n) out[i] = idiv_chain<unsigned int, false>(in[i], 256u);
}

extern "C" __global__ void __launch_bounds__(BLOCK)
    idiv_div_u32_literal(const unsigned int* __restrict__ in, unsigned int* __restrict__ out, unsigned long long n) {
  AR_CLOCK_PROBE_HERE();
  const unsigned long long i = AR_INDEX;
  if (i < n) out[i] = idiv_chain<unsigned int, false>(in[i], 255u);
}

extern "C" __global__ void __launch_bounds__(BLOCK)
    idiv_div_u32_constant(const unsigned int* __restrict__ in, unsigned int* __restrict__ out, unsigned long long n) {
  AR_CLOCK_PROBE_HERE();
  const unsigned long long i = AR_INDEX;
  if (i < n) out[i] = idiv_chain<unsigned int, false>(in[i], (unsigned int)(DIVISOR));
}

extern "C" __global__ void __launch_bounds__(BLOCK)
    idiv_div_u32_argument(const unsigned int* __restrict__ in, unsigned int* __restrict__ out, long long d,
                          unsigned long long n) {
  AR_CLOCK_PROBE_HERE();
  const unsigned long long i = AR_INDEX;
  if (i < n) out[i] = idiv_chain<unsigned int, false>(in[i], (unsigned int)d);
}

extern "C" __global__ void __launch_bounds__(BLOCK)
    idiv_mod_u32_pow2_literal(const unsigned int* __restrict__ in, unsigned int* __restrict__ out,
                              unsigned long long n) {
  AR_CLOCK_PROBE_HERE();
  const unsigned long long i = AR_INDEX;
  if (i < n) out[i] = idiv_chain<unsigned int, true>(in[i], 256u);
}

extern "C" __global__ void __launch_bounds__(BLOCK)
    idiv_mod_u32_literal(const unsigned int* __restrict__ in, unsigned int* __restrict__ out, unsigned long long n) {
  AR_CLOCK_PROBE_HERE();
  const unsigned long long i = AR_INDEX;
  if (i < n) out[i] = idiv_chain<unsigned int, true>(in[i], 255u);
}

extern "C" __global__ void __launch_bounds__(BLOCK)
    idiv_mod_u32_constant(const unsigned int* __restrict__ in, unsigned int* __restrict__ out, unsigned long long n) {
  AR_CLOCK_PROBE_HERE();
  const unsigned long long i = AR_INDEX;
  if (i < n) out[i] = idiv_chain<unsigned int, true>(in[i], (unsigned int)(DIVISOR));
}

extern "C" __global__ void __launch_bounds__(BLOCK)
    idiv_mod_u32_argument(const unsigned int* __restrict__ in, unsigned int* __restrict__ out, long long d,
                          unsigned long long n) {
  AR_CLOCK_PROBE_HERE();
  const unsigned long long i = AR_INDEX;
  if (i < n) out[i] = idiv_chain<unsigned int, true>(in[i], (unsigned int)d);
}

// ---- signed (int) ----------------------------------------------------------------------

extern "C" __global__ void __launch_bounds__(BLOCK)
    idiv_div_i32_pow2_literal(const unsigned int* __restrict__ in, unsigned int* __restrict__ out,
                              unsigned long long n) {
  AR_CLOCK_PROBE_HERE();
  const unsigned long long i = AR_INDEX;
  if (i < n) out[i] = idiv_chain<int, false>(in[i], 256);
}

extern "C" __global__ void __launch_bounds__(BLOCK)
    idiv_div_i32_literal(const unsigned int* __restrict__ in, unsigned int* __restrict__ out, unsigned long long n) {
  AR_CLOCK_PROBE_HERE();
  const unsigned long long i = AR_INDEX;
  if (i < n) out[i] = idiv_chain<int, false>(in[i], 255);
}

extern "C" __global__ void __launch_bounds__(BLOCK)
    idiv_div_i32_constant(const unsigned int* __restrict__ in, unsigned int* __restrict__ out, unsigned long long n) {
  AR_CLOCK_PROBE_HERE();
  const unsigned long long i = AR_INDEX;
  if (i < n) out[i] = idiv_chain<int, false>(in[i], (int)(DIVISOR));
}

extern "C" __global__ void __launch_bounds__(BLOCK)
    idiv_div_i32_argument(const unsigned int* __restrict__ in, unsigned int* __restrict__ out, long long d,
                          unsigned long long n) {
  AR_CLOCK_PROBE_HERE();
  const unsigned long long i = AR_INDEX;
  if (i < n) out[i] = idiv_chain<int, false>(in[i], (int)d);
}

extern "C" __global__ void __launch_bounds__(BLOCK)
    idiv_mod_i32_pow2_literal(const unsigned int* __restrict__ in, unsigned int* __restrict__ out,
                              unsigned long long n) {
  AR_CLOCK_PROBE_HERE();
  const unsigned long long i = AR_INDEX;
  if (i < n) out[i] = idiv_chain<int, true>(in[i], 256);
}

extern "C" __global__ void __launch_bounds__(BLOCK)
    idiv_mod_i32_literal(const unsigned int* __restrict__ in, unsigned int* __restrict__ out, unsigned long long n) {
  AR_CLOCK_PROBE_HERE();
  const unsigned long long i = AR_INDEX;
  if (i < n) out[i] = idiv_chain<int, true>(in[i], 255);
}

extern "C" __global__ void __launch_bounds__(BLOCK)
    idiv_mod_i32_constant(const unsigned int* __restrict__ in, unsigned int* __restrict__ out, unsigned long long n) {
  AR_CLOCK_PROBE_HERE();
  const unsigned long long i = AR_INDEX;
  if (i < n) out[i] = idiv_chain<int, true>(in[i], (int)(DIVISOR));
}

extern "C" __global__ void __launch_bounds__(BLOCK)
    idiv_mod_i32_argument(const unsigned int* __restrict__ in, unsigned int* __restrict__ out, long long d,
                          unsigned long long n) {
  AR_CLOCK_PROBE_HERE();
  const unsigned long long i = AR_INDEX;
  if (i < n) out[i] = idiv_chain<int, true>(in[i], (int)d);
}
