// The access and dualissue suites' built-in CPU kernels, the twins of shaders/cuda/access.cu,
// shaders/cuda/dualissue.cu and their Metal twins (python/apple_roofline/suites/access/kernels.py
// and dualissue_kernels.py document them and hold the NumPy references every output is checked
// against). Compiled with the same flags as kernels.cpp (the host's widest vector ISA) and, like
// it, free of standard-library containers and strings.
//
// access_u32xW (W = 1, 2, 4 words per element): out[i] = in[j(i)], j(i) = (i mod M)·S + i div M,
// M = n / S, for n elements and stride S (the scalar argument), both powers of two: adjacent work
// items read elements S apart and every element is read once. A launch whose n or S is not a power
// of two, or S > n, writes nothing (the suite never makes one; validation would fail it).
//
// dual_*: 8 independent chains per work item over in[8i .. 8i+8) (fp32), F steps each (F even):
//   fp32  c = fma(c, c, a)                    plane 0: c
//   fp16  h = fma(h, h, half(a)), h = half(x) plane 0: float(h)
//   int32 u = bits(x), v = u ^ 0x9E3779B9, then alternately u += v; v += u   plane 0: u ^ v
// dual_fp32_fp16 and dual_fp32_int32 run both sets of chains in the same loop, interleaved; the
// second set's results go to plane 1, out[8n + 8i ..]. Elements are independent, so a block of L
// work items is held as 8 vector registers per set: 8 chains of each kind in flight per core.
#include <cstdint>
#include <cstring>

#include "kernels.h"
#include "simd.h"

namespace ar::cpu {

namespace {

// The vector width and FP16 test of every kernel file (simd.h).
constexpr int kBytes = kSimdBytes;
#define AR_RULES_FP16 AR_SIMD_FP16
#if AR_RULES_FP16
using half_t = _Float16;
#endif

constexpr int kLanes = kBytes / 4;
constexpr int kChains = 8;
constexpr uint32_t kStep = 0x9E3779B9u;

typedef float VF __attribute__((vector_size(kBytes)));
typedef uint32_t VU __attribute__((vector_size(kBytes)));
#if AR_RULES_FP16
typedef half_t VH __attribute__((vector_size(kBytes / 2)));  // kLanes halves
#endif

bool pow2(uint64_t x) { return x != 0 && (x & (x - 1)) == 0; }

// ---- access ------------------------------------------------------------------------------------

template <int W>
void access_copy(const KernelArgs& k, uint64_t b, uint64_t e) {
  const double s = k.scalar;
  const uint64_t n = k.items;
  if (!(s >= 1.0 && s <= double(n))) return;
  const uint64_t S = uint64_t(s);
  if (!pow2(S) || !pow2(n) || double(S) != s) return;
  const int sh = __builtin_ctzll(S);
  const uint64_t M = n >> sh;
  const int lm = __builtin_ctzll(M);
  const uint32_t* in = static_cast<const uint32_t*>(k.buf[0]);
  uint32_t* out = static_cast<uint32_t*>(k.buf[1]);
  uint64_t i = b;
  while (i < e) {
    // A run of work items with the same i div M reads in[j0], in[j0 + S], ...: one strided loop.
    const uint64_t q = i >> lm;
    const uint64_t end = (q + 1) << lm < e ? (q + 1) << lm : e;
    const uint32_t* src = in + (((i & (M - 1)) << sh) | q) * W;
    uint32_t* dst = out + i * W;
    const uint64_t len = end - i;
    // One W-word move per element: the load and store width of the GPU kernels' uint / uint2 / uint4.
    for (uint64_t t = 0; t < len; ++t) std::memcpy(dst + t * W, src + t * S * W, 4 * W);
    i = end;
  }
}

// ---- dual issue ---------------------------------------------------------------------------------

// Which chains a dual kernel runs: bit 0 FP32, bit 1 FP16, bit 2 INT32. The first set writes plane
// 0, a second one plane 1.
enum : int { kFp32 = 1, kFp16 = 2, kInt = 4 };

#define AR_RULES_INLINE inline __attribute__((always_inline))

// What every chain of one dual kernel's launch shares: the input, plane 0 and the plane the second
// set writes (plane 1 for a mixed kernel, else plane 0), the step pairs (F / 2) and the constant a,
// as a scalar and splat across a vector (FP32, and FP16 where compiled).
struct DualArgs {
  const float* in;
  uint32_t* out;
  uint32_t* second;
  int64_t half_steps;
  float a;
  VF av;
#if AR_RULES_FP16
  half_t ah;
  VH hv;
#endif
};

// Elements [i, i + kChains·kLanes) as kChains vector chains of each set, interleaved in one loop.
template <int Sets>
AR_RULES_INLINE void dual_block(const DualArgs& d, uint64_t i) {
  VF c[kChains];
  VU u[kChains], v[kChains];
#if AR_RULES_FP16
  VH h[kChains];
#endif
  for (int j = 0; j < kChains; ++j) {
    const VF x = simd_load<VF>(d.in + i + j * kLanes);
    c[j] = x;
    u[j] = (VU)x;
    v[j] = u[j] ^ kStep;
#if AR_RULES_FP16
    h[j] = __builtin_convertvector(x, VH);
#endif
  }
  for (int64_t f = 0; f < d.half_steps; ++f) {
    for (int j = 0; j < kChains; ++j) {
      if constexpr ((Sets & kFp32) != 0) c[j] = c[j] * c[j] + d.av;
#if AR_RULES_FP16
      if constexpr ((Sets & kFp16) != 0) h[j] = h[j] * h[j] + d.hv;
#endif
      if constexpr ((Sets & kInt) != 0) u[j] += v[j];
      if constexpr ((Sets & kFp32) != 0) c[j] = c[j] * c[j] + d.av;
#if AR_RULES_FP16
      if constexpr ((Sets & kFp16) != 0) h[j] = h[j] * h[j] + d.hv;
#endif
      if constexpr ((Sets & kInt) != 0) v[j] += u[j];
    }
  }
  for (int j = 0; j < kChains; ++j) {
    const uint64_t o = i + uint64_t(j * kLanes);
    if constexpr ((Sets & kFp32) != 0) simd_store(d.out + o, c[j]);
#if AR_RULES_FP16
    if constexpr ((Sets & kFp16) != 0) simd_store(d.second + o, __builtin_convertvector(h[j], VF));
#endif
    if constexpr ((Sets & kInt) != 0) simd_store(d.second + o, u[j] ^ v[j]);
  }
}

// Element i alone (the tail after the whole blocks): the same chains, one lane.
template <int Sets>
AR_RULES_INLINE void dual_element(const DualArgs& d, uint64_t i) {
  float c = d.in[i];
  uint32_t u, v;
  std::memcpy(&u, &c, 4);
  v = u ^ kStep;
#if AR_RULES_FP16
  half_t h = half_t(c);
#endif
  for (int64_t f = 0; f < d.half_steps; ++f) {
    if constexpr ((Sets & kFp32) != 0) {
      c = c * c + d.a;  // contracted to an FMA, as the vector path (-ffp-contract=fast)
      c = c * c + d.a;
    }
#if AR_RULES_FP16
    if constexpr ((Sets & kFp16) != 0) {
      h = h * h + d.ah;
      h = h * h + d.ah;
    }
#endif
    if constexpr ((Sets & kInt) != 0) {
      u += v;
      v += u;
    }
  }
  if constexpr ((Sets & kFp32) != 0) std::memcpy(d.out + i, &c, 4);
#if AR_RULES_FP16
  if constexpr ((Sets & kFp16) != 0) {
    const float hf = float(h);
    std::memcpy(d.second + i, &hf, 4);
  }
#endif
  if constexpr ((Sets & kInt) != 0) d.second[i] = u ^ v;
}

template <int Sets>
void dual(const KernelArgs& k, uint64_t b, uint64_t e) {
  static_assert((Sets & kFp16) == 0 || AR_RULES_FP16, "FP16 chains need native FP16 arithmetic");
  DualArgs d;
  d.in = static_cast<const float*>(k.buf[0]);
  d.out = static_cast<uint32_t*>(k.buf[1]);
  const uint64_t plane = 8 * k.items;  // words of plane 0
  d.second = d.out + ((Sets & kFp32) && (Sets != kFp32) ? plane : 0);
  d.half_steps = k.F / 2;
  d.a = float(k.scalar);
  d.av = d.a - VF{};
#if AR_RULES_FP16
  d.ah = half_t(d.a);
  d.hv = d.ah - VH{};
#endif
  uint64_t i = 8 * b;
  const uint64_t end = 8 * e;
  for (; i + uint64_t(kChains * kLanes) <= end; i += uint64_t(kChains * kLanes)) dual_block<Sets>(d, i);
  for (; i < end; ++i) dual_element<Sets>(d, i);  // the tail, one element at a time: the same chains
}

#define AR_ACCESS(nm, W) {nm, access_copy<W>, 2, true, KernelConstant::none, 4, W, 1, nullptr}
// Mixed kernels write two planes of 8 words per work item: 16 words of each buffer are checked.
#define AR_DUAL(nm, sets, words) {nm, dual<sets>, 2, true, KernelConstant::F, 4, words, uint64_t(kLanes), nullptr}
#if !AR_RULES_FP16
constexpr const char* kNoFp16 =
    "FP16 arithmetic: this CPU (as compiled) has no native FP16 FMA (needs AVX512-FP16 on x86-64 "
    "or the ARMv8.2-A FP16 extension on arm64)";
#define AR_DUAL_FP16(nm, sets, words) {nm, nullptr, 2, true, KernelConstant::F, 4, words, 1, kNoFp16}
#else
#define AR_DUAL_FP16(nm, sets, words) AR_DUAL(nm, sets, words)
#endif

const KernelEntry kRulesKernels[] = {
    AR_ACCESS("access_u32", 1),
    AR_ACCESS("access_u32x2", 2),
    AR_ACCESS("access_u32x4", 4),
    AR_DUAL("dual_fp32", kFp32, 8),
    AR_DUAL_FP16("dual_fp16", kFp16, 8),
    AR_DUAL("dual_int32", kInt, 8),
    AR_DUAL_FP16("dual_fp32_fp16", kFp32 | kFp16, 16),
    AR_DUAL("dual_fp32_int32", kFp32 | kInt, 16),
};

}  // namespace

const KernelEntry* rules_kernel_table(size_t* count) {
  *count = sizeof(kRulesKernels) / sizeof(kRulesKernels[0]);
  return kRulesKernels;
}

}  // namespace ar::cpu
