// The idiv suite's built-in CPU kernels: a chain of F dependent 32-bit integer divides (or
// modulos) per work item, the twins of shaders/cuda/idiv.cu and shaders/metal/idiv.metal
// (python/apple_roofline/suites/idiv/kernels.py documents the recurrence and holds the NumPy
// reference every output is checked against):
//
//   x = in[i];  F times: x = x + (x OP d) + 0x9E3779B9 (mod 2^32);  out[i] = x
//
// OP is / or %, in uint32_t or int32_t (C++ truncating division; the additions wrap, done in
// uint32_t). Where d comes from, by entry suffix:
//   _pow2_literal  256, a literal              _literal   255, a literal
//   _constant      kConstantDivisor, a template parameter (the CPU's specialisation constant: an
//                  ahead-of-time compiler sees it exactly as it sees a literal; with 255 it is the
//                  very instantiation _literal uses)
//   _argument      the kernel's scalar argument, known only at dispatch
//
// Compiled with the same flags as kernels.cpp (CMakeLists.txt: the host's widest vector ISA), and,
// like it, free of standard-library containers and strings. Work items map onto vector lanes as in
// kernels.cpp; a block holds kChains independent vectors, so a core has kChains dependent chains in
// flight, as a GPU keeps many threads in flight. x86 and Arm have no vector integer divide: a
// divisor known at compile time becomes a multiply-high sequence on whole vectors (GCC 13,
// AVX-512: vpmuludq / vpmuldq and shifts), an argument one scalar div / idiv per lane (64 per block).
#include <cstdint>
#include <cstring>

#include "kernels.h"
#include "simd.h"

namespace ar::cpu {

namespace {

constexpr int kBytes = kSimdBytes;          // the vector width of every kernel file (simd.h)
constexpr uint32_t kStep = 0x9E3779B9u;     // the recurrence's additive constant
constexpr uint32_t kConstantDivisor = 255;  // idiv_kernels.IDIV_DIVISOR (validation proves they agree)
constexpr int kChains = 4;                  // independent vectors per block
constexpr int kLanes = kBytes / 4;

#define AR_IDIV_INLINE inline __attribute__((always_inline))

template <typename T>
struct Vec {
  typedef T type __attribute__((vector_size(kBytes)));
  typedef uint32_t utype __attribute__((vector_size(kBytes)));
};

// One link of the chain, for X a vector of T or a single T (the tail): the casts between same-size
// vector types reinterpret bits, as the scalar casts between int32_t and uint32_t do.
template <bool Mod, typename X, typename UX, typename T>
AR_IDIV_INLINE X step(X x, T d) {
  const X q = Mod ? X(x % d) : X(x / d);
  return (X)((UX)x + (UX)q + kStep);
}

// Lit != 0: the divisor is the compile-time Lit; Lit == 0: the argument (refused outside 3 to
// 2^31-1 by the suite; here such a launch writes nothing rather than trap, so it fails validation).
template <typename T, bool Mod, uint32_t Lit>
void idiv_chain(const KernelArgs& k, uint64_t b, uint64_t e) {
  using V = typename Vec<T>::type;
  using UV = typename Vec<T>::utype;
  T d = T(Lit);
  if constexpr (Lit == 0) {
    const double a = k.scalar;
    if (!(a >= 3.0 && a <= 2147483647.0)) return;
    d = T(int64_t(a));
  }
  const T* in = static_cast<const T*>(k.buf[0]);
  T* out = static_cast<T*>(k.buf[1]);
  const int64_t F = k.F;
  uint64_t i = b;
  for (; i + uint64_t(kChains * kLanes) <= e; i += uint64_t(kChains * kLanes)) {
    V x[kChains];
    for (int c = 0; c < kChains; ++c) std::memcpy(&x[c], in + i + uint64_t(c * kLanes), sizeof(V));
    for (int64_t f = 0; f < F; ++f)
      for (int c = 0; c < kChains; ++c) x[c] = step<Mod, V, UV, T>(x[c], d);
    for (int c = 0; c < kChains; ++c) std::memcpy(out + i + uint64_t(c * kLanes), &x[c], sizeof(V));
  }
  for (; i < e; ++i) {
    T x = in[i];
    for (int64_t f = 0; f < F; ++f) x = step<Mod, T, uint32_t, T>(x, d);
    out[i] = x;
  }
}

#define AR_IDIV(nm, T, Mod, Lit) \
  {nm, idiv_chain<T, Mod, Lit>, 2, (Lit) == 0, KernelConstant::F, 4, 1, uint64_t(kChains * kLanes), nullptr}

const KernelEntry kIdivKernels[] = {
    AR_IDIV("idiv_div_u32_pow2_literal", uint32_t, false, 256u),
    AR_IDIV("idiv_div_u32_literal", uint32_t, false, 255u),
    AR_IDIV("idiv_div_u32_constant", uint32_t, false, kConstantDivisor),
    AR_IDIV("idiv_div_u32_argument", uint32_t, false, 0u),
    AR_IDIV("idiv_mod_u32_pow2_literal", uint32_t, true, 256u),
    AR_IDIV("idiv_mod_u32_literal", uint32_t, true, 255u),
    AR_IDIV("idiv_mod_u32_constant", uint32_t, true, kConstantDivisor),
    AR_IDIV("idiv_mod_u32_argument", uint32_t, true, 0u),
    AR_IDIV("idiv_div_i32_pow2_literal", int32_t, false, 256u),
    AR_IDIV("idiv_div_i32_literal", int32_t, false, 255u),
    AR_IDIV("idiv_div_i32_constant", int32_t, false, kConstantDivisor),
    AR_IDIV("idiv_div_i32_argument", int32_t, false, 0u),
    AR_IDIV("idiv_mod_i32_pow2_literal", int32_t, true, 256u),
    AR_IDIV("idiv_mod_i32_literal", int32_t, true, 255u),
    AR_IDIV("idiv_mod_i32_constant", int32_t, true, kConstantDivisor),
    AR_IDIV("idiv_mod_i32_argument", int32_t, true, 0u),
};

}  // namespace

const KernelEntry* idiv_kernel_table(size_t* count) {
  *count = sizeof(kIdivKernels) / sizeof(kIdivKernels[0]);
  return kIdivKernels;
}

}  // namespace ar::cpu
