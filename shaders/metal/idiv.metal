// Integer-divide kernels of the idiv suite (python/apple_roofline/suites/idiv/kernels.py documents
// the recurrence and holds the NumPy reference every output is checked against). One work item is
// one thread. The CUDA twins are shaders/cuda/idiv.cu (same names, same arguments, the same
// operations); the CPU twins native/cpu/idiv.cpp.
//
// Compiled at run time with newLibraryWithSource: (Metal 3.0); the chain length F and the constant
// variant's divisor DIVISOR are the function constants below, set by name when the pipeline is
// built (idiv.cu's -DF and -DDIVISOR). Arguments, bound at [[buffer(i)]] in the order the suite
// passes them (core/backend.h): in, out (device pointers to 32-bit words), the divisor d (constant
// long&; only the _argument kernels), then the number of work items n (constant ulong&). The
// backend dispatches exactly n threads; the guard mirrors CUDA's.
//
//   x = in[i];  F times: x = x + (x OP d) + 0x9E3779B9 (mod 2^32);  out[i] = x
//
// OP is / or % on uint (_u32) or int (_i32; MSL's integer division truncates toward zero, as C++'s);
// the additions are uint, so they wrap. d is 256 (_pow2_literal), 255 (_literal), DIVISOR
// (_constant: a [[function_constant]], folded when the pipeline state is built) or the argument d
// (_argument: read from a buffer at dispatch, AGX's software divide). Loop hints are clang's
// `#pragma clang loop`, with idiv.cu's count (16).

#include <metal_stdlib>
using namespace metal;

// Operations per chain (idiv.cu's -DF).
constant int F [[function_constant(0)]];
// The _constant kernels' divisor (idiv.cu's -DDIVISOR).
constant int DIVISOR [[function_constant(1)]];

constant uint AR_STEP = 0x9E3779B9u;

// The chain of one work item: T is uint or int, d its divisor, MOD selects %.
template <typename T, bool MOD>
inline uint idiv_chain(uint x, T d) {
#pragma clang loop unroll_count(16)
  for (int it = 0; it < F; ++it) {
    const T v = T(x);
    const T q = MOD ? T(v % d) : T(v / d);
    x = x + uint(q) + AR_STEP;
  }
  return x;
}

// ---- unsigned (uint) ----------------------------------------------------------------------

kernel void idiv_div_u32_pow2_literal(const device uint* in [[buffer(0)]], device uint* out [[buffer(1)]],
                                      constant ulong& n [[buffer(2)]], uint i [[thread_position_in_grid]]) {
  if (i < n) out[i] = idiv_chain<uint, false>(in[i], 256u);
}

kernel void idiv_div_u32_literal(const device uint* in [[buffer(0)]], device uint* out [[buffer(1)]],
                                 constant ulong& n [[buffer(2)]], uint i [[thread_position_in_grid]]) {
  if (i < n) out[i] = idiv_chain<uint, false>(in[i], 255u);
}

kernel void idiv_div_u32_constant(const device uint* in [[buffer(0)]], device uint* out [[buffer(1)]],
                                  constant ulong& n [[buffer(2)]], uint i [[thread_position_in_grid]]) {
  if (i < n) out[i] = idiv_chain<uint, false>(in[i], uint(DIVISOR));
}

kernel void idiv_div_u32_argument(const device uint* in [[buffer(0)]], device uint* out [[buffer(1)]],
                                  constant long& d [[buffer(2)]], constant ulong& n [[buffer(3)]],
                                  uint i [[thread_position_in_grid]]) {
  if (i < n) out[i] = idiv_chain<uint, false>(in[i], uint(d));
}

kernel void idiv_mod_u32_pow2_literal(const device uint* in [[buffer(0)]], device uint* out [[buffer(1)]],
                                      constant ulong& n [[buffer(2)]], uint i [[thread_position_in_grid]]) {
  if (i < n) out[i] = idiv_chain<uint, true>(in[i], 256u);
}

kernel void idiv_mod_u32_literal(const device uint* in [[buffer(0)]], device uint* out [[buffer(1)]],
                                 constant ulong& n [[buffer(2)]], uint i [[thread_position_in_grid]]) {
  if (i < n) out[i] = idiv_chain<uint, true>(in[i], 255u);
}

kernel void idiv_mod_u32_constant(const device uint* in [[buffer(0)]], device uint* out [[buffer(1)]],
                                  constant ulong& n [[buffer(2)]], uint i [[thread_position_in_grid]]) {
  if (i < n) out[i] = idiv_chain<uint, true>(in[i], uint(DIVISOR));
}

kernel void idiv_mod_u32_argument(const device uint* in [[buffer(0)]], device uint* out [[buffer(1)]],
                                  constant long& d [[buffer(2)]], constant ulong& n [[buffer(3)]],
                                  uint i [[thread_position_in_grid]]) {
  if (i < n) out[i] = idiv_chain<uint, true>(in[i], uint(d));
}

// ---- signed (int) ----------------------------------------------------------------------

kernel void idiv_div_i32_pow2_literal(const device uint* in [[buffer(0)]], device uint* out [[buffer(1)]],
                                      constant ulong& n [[buffer(2)]], uint i [[thread_position_in_grid]]) {
  if (i < n) out[i] = idiv_chain<int, false>(in[i], 256);
}

kernel void idiv_div_i32_literal(const device uint* in [[buffer(0)]], device uint* out [[buffer(1)]],
                                 constant ulong& n [[buffer(2)]], uint i [[thread_position_in_grid]]) {
  if (i < n) out[i] = idiv_chain<int, false>(in[i], 255);
}

kernel void idiv_div_i32_constant(const device uint* in [[buffer(0)]], device uint* out [[buffer(1)]],
                                  constant ulong& n [[buffer(2)]], uint i [[thread_position_in_grid]]) {
  if (i < n) out[i] = idiv_chain<int, false>(in[i], int(DIVISOR));
}

kernel void idiv_div_i32_argument(const device uint* in [[buffer(0)]], device uint* out [[buffer(1)]],
                                  constant long& d [[buffer(2)]], constant ulong& n [[buffer(3)]],
                                  uint i [[thread_position_in_grid]]) {
  if (i < n) out[i] = idiv_chain<int, false>(in[i], int(d));
}

kernel void idiv_mod_i32_pow2_literal(const device uint* in [[buffer(0)]], device uint* out [[buffer(1)]],
                                      constant ulong& n [[buffer(2)]], uint i [[thread_position_in_grid]]) {
  if (i < n) out[i] = idiv_chain<int, true>(in[i], 256);
}

kernel void idiv_mod_i32_literal(const device uint* in [[buffer(0)]], device uint* out [[buffer(1)]],
                                 constant ulong& n [[buffer(2)]], uint i [[thread_position_in_grid]]) {
  if (i < n) out[i] = idiv_chain<int, true>(in[i], 255);
}

kernel void idiv_mod_i32_constant(const device uint* in [[buffer(0)]], device uint* out [[buffer(1)]],
                                  constant ulong& n [[buffer(2)]], uint i [[thread_position_in_grid]]) {
  if (i < n) out[i] = idiv_chain<int, true>(in[i], int(DIVISOR));
}

kernel void idiv_mod_i32_argument(const device uint* in [[buffer(0)]], device uint* out [[buffer(1)]],
                                  constant long& d [[buffer(2)]], constant ulong& n [[buffer(3)]],
                                  uint i [[thread_position_in_grid]]) {
  if (i < n) out[i] = idiv_chain<int, true>(in[i], int(d));
}
