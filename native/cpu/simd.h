// What the kernel files compiled with the host's widest vector ISA share (native/CMakeLists.txt
// gives kernels.cpp, idiv.cpp, rules.cpp and hierarchy.cpp the same flags): the vector width in
// bytes, whether the ISA has native FP16 arithmetic, and unaligned vector loads and stores.
// Internal to each translation unit (constexpr, anonymous namespace), so a file compiled for
// another ISA gets its own values.
#pragma once

#include <cstring>

namespace ar::cpu {
namespace {

#if defined(__AVX512F__)
constexpr int kSimdBytes = 64;
#elif defined(__AVX__)
constexpr int kSimdBytes = 32;
#else
constexpr int kSimdBytes = 16;
#endif

#if defined(__AVX512FP16__) || defined(__ARM_FEATURE_FP16_VECTOR_ARITHMETIC)
#define AR_SIMD_FP16 1
#else
#define AR_SIMD_FP16 0
#endif

template <typename X>
inline __attribute__((always_inline)) X simd_load(const void* p) {
  X x;
  std::memcpy(&x, p, sizeof(X));
  return x;
}
template <typename X>
inline __attribute__((always_inline)) void simd_store(void* p, X x) {
  std::memcpy(p, &x, sizeof(X));
}

}  // namespace
}  // namespace ar::cpu
