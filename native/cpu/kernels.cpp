// Compiled with the host's widest vector ISA (-march=native or -mcpu=native, see CMakeLists.txt)
// and -ffp-contract=fast, so `c * d + e` on GCC/Clang vector types becomes one vector FMA.
// Kernel bodies are written once for a lane type X, either a vector of work items or a scalar
// (for the tail of a range), so the vector path and the tail compute exactly the same thing.
#include "kernels.h"

#include <cstring>

namespace ar::cpu {

#if defined(__AVX512F__)
constexpr int kVecBytes = 64;
#define AR_ISA "avx512"
#elif defined(__AVX__)
constexpr int kVecBytes = 32;
#define AR_ISA "avx2"
#elif defined(__aarch64__) || defined(__ARM_NEON)
constexpr int kVecBytes = 16;
#define AR_ISA "neon"
#elif defined(__SSE2__)
constexpr int kVecBytes = 16;
#define AR_ISA "sse2"
#else
constexpr int kVecBytes = 16;
#define AR_ISA "generic"
#endif

#if defined(__AVX512FP16__) || defined(__ARM_FEATURE_FP16_VECTOR_ARITHMETIC)
#define AR_FP16 1
using half_t = _Float16;
#else
#define AR_FP16 0
#endif

namespace {

// The chain bodies must inline into the block loops: an out-of-line call passes the vector
// through memory and turns an FMA benchmark into a call benchmark.
#define AR_INLINE inline __attribute__((always_inline))
#define AR_INLINE_LAMBDA __attribute__((always_inline))

template <typename T>
struct Vec {
  typedef T type __attribute__((vector_size(kVecBytes)));
  static constexpr int lanes = kVecBytes / int(sizeof(T));
};

template <typename X, typename T>
AR_INLINE X splat(T v) {
  if constexpr (sizeof(X) == sizeof(T)) {
    return v;
  } else {
    X r;
    for (int i = 0; i < int(sizeof(X) / sizeof(T)); ++i) r[i] = v;
    return r;
  }
}

template <typename X>
AR_INLINE X load(const void* p) {
  X x;
  std::memcpy(&x, p, sizeof(X));
  return x;
}
template <typename X>
AR_INLINE void store(void* p, X x) {
  std::memcpy(p, &x, sizeof(X));
}

// ---- STREAM (McCalpin): copy c = a, scale b = q·c, add c = a + b, triad a = b + q·c ----------
// Plain loops over __restrict pointers: the compiler vectorises them at full width.
void stream_copy(const KernelArgs& k, uint64_t b, uint64_t e) {
  const float* __restrict a = static_cast<const float*>(k.buf[0]);
  float* __restrict c = static_cast<float*>(k.buf[2]);
  for (uint64_t i = 4 * b; i < 4 * e; ++i) c[i] = a[i];
}
void stream_scale(const KernelArgs& k, uint64_t b, uint64_t e) {
  float* __restrict bb = static_cast<float*>(k.buf[1]);
  const float* __restrict c = static_cast<const float*>(k.buf[2]);
  const float q = float(k.scalar);
  for (uint64_t i = 4 * b; i < 4 * e; ++i) bb[i] = q * c[i];
}
void stream_add(const KernelArgs& k, uint64_t b, uint64_t e) {
  const float* __restrict a = static_cast<const float*>(k.buf[0]);
  const float* __restrict bb = static_cast<const float*>(k.buf[1]);
  float* __restrict c = static_cast<float*>(k.buf[2]);
  for (uint64_t i = 4 * b; i < 4 * e; ++i) c[i] = a[i] + bb[i];
}
void stream_triad(const KernelArgs& k, uint64_t b, uint64_t e) {
  float* __restrict a = static_cast<float*>(k.buf[0]);
  const float* __restrict bb = static_cast<const float*>(k.buf[1]);
  const float* __restrict c = static_cast<const float*>(k.buf[2]);
  const float q = float(k.scalar);
  for (uint64_t i = 4 * b; i < 4 * e; ++i) a[i] = bb[i] + q * c[i];
}

// ---- dispatch latency (shaders/*/dispatch.*): null does nothing, tiny adds 1 to each float of x ----
void dispatch_null(const KernelArgs&, uint64_t, uint64_t) {}
void dispatch_tiny(const KernelArgs& k, uint64_t b, uint64_t e) {
  float* __restrict x = static_cast<float*>(k.buf[0]);
  for (uint64_t i = 4 * b; i < 4 * e; ++i) x[i] += 1.0f;
}

// ---- FMA chains -----------------------------------------------------------------------------
// vec4_cross4: four cross-dependent 4-wide chains (the M5 article's sweep kernel). Started at
// c = e = x, d = f = -1 the recurrence stays bounded (|values| <= 1.6 for |x| <= 0.5) and decays
// only algebraically, so no value falls into the denormal range for any F <= 1024.
template <typename X, typename T>
AR_INLINE X cross4(X x, int64_t F) {
  X c = x, e = x;
  X d = splat<X>(T(-1)), f = splat<X>(T(-1));
  for (int64_t i = 0; i < F; ++i) {
    c = c * d + e;
    d = d * e + f;
    e = e * f + c;
    f = f * c + d;
  }
  return c + d + e + f;
}

// vec4_indepK: K self-dependent 4-wide chains c_k = fma(c_k, c_k, a), started at x + k/16.
template <int K, typename X, typename T>
AR_INLINE X indep(X x, T a, int64_t F) {
  X c[K];
  const X av = splat<X>(a);
  for (int k = 0; k < K; ++k) c[k] = x + splat<X>(T(k) * T(0.0625));
  for (int64_t i = 0; i < F; ++i)
    for (int k = 0; k < K; ++k) c[k] = c[k] * c[k] + av;
  X s = c[0];
  for (int k = 1; k < K; ++k) s = s + c[k];
  return s;
}

// A work item of a vec4 kernel is 4 consecutive elements; a vector register holds lanes/4 items.
// Applies `body` (a generic lambda over the lane type: a vector of work items, or one scalar for
// the tail) to the elements of work items [b, e).
template <typename T, typename Body>
AR_INLINE void vec4_apply(const KernelArgs& k, uint64_t b, uint64_t e, Body body) {
  using V = typename Vec<T>::type;
  constexpr int L = Vec<T>::lanes;
  const T* in = static_cast<const T*>(k.buf[0]);
  T* out = static_cast<T*>(k.buf[1]);
  uint64_t i = 4 * b;
  const uint64_t end = 4 * e;
  for (; i + L <= end; i += L) store(out + i, body(load<V>(in + i)));
  for (; i < end; ++i) out[i] = body(in[i]);
}

template <typename T>
void vec4_cross4(const KernelArgs& k, uint64_t b, uint64_t e) {
  const int64_t F = k.F;
  vec4_apply<T>(k, b, e, [F](auto x) AR_INLINE_LAMBDA { return cross4<decltype(x), T>(x, F); });
}

template <typename T, int K>
void vec4_indep(const KernelArgs& k, uint64_t b, uint64_t e) {
  const int64_t F = k.F;
  const T a = T(k.scalar);
  vec4_apply<T>(k, b, e, [F, a](auto x) AR_INLINE_LAMBDA { return indep<K, decltype(x), T>(x, a, F); });
}

// scalar_indepK: a work item loads K consecutive scalars and runs K self-dependent chains
// c_k = fma(c_k, c_k, a). Every element's chain is independent, so a block of L work items
// (K·L elements) is held as K vector registers: K independent FMA chains in flight per core.
template <typename T, int K>
void scalar_indep(const KernelArgs& k, uint64_t b, uint64_t e) {
  using V = typename Vec<T>::type;
  constexpr int L = Vec<T>::lanes;
  const T* in = static_cast<const T*>(k.buf[0]);
  T* out = static_cast<T*>(k.buf[1]);
  const T a = T(k.scalar);
  const V av = splat<V>(a);
  uint64_t i = uint64_t(K) * b;
  const uint64_t end = uint64_t(K) * e;
  for (; i + uint64_t(K) * L <= end; i += uint64_t(K) * L) {
    V c[K];
    for (int j = 0; j < K; ++j) c[j] = load<V>(in + i + j * L);
    for (int64_t f = 0; f < k.F; ++f)
      for (int j = 0; j < K; ++j) c[j] = c[j] * c[j] + av;
    for (int j = 0; j < K; ++j) store(out + i + j * L, c[j]);
  }
  for (; i < end; ++i) {
    T c = in[i];
    for (int64_t f = 0; f < k.F; ++f) c = c * c + a;
    out[i] = c;
  }
}

constexpr uint64_t items_per_vec(int elem_size, int elems_per_item) {
  return uint64_t(kVecBytes / elem_size) / uint64_t(elems_per_item) > 0
             ? uint64_t(kVecBytes / elem_size) / uint64_t(elems_per_item)
             : 1;
}

#define AR_STREAM(nm, fn) {nm, fn, 3, true, KernelConstant::none, 4, 4, 16 / 4, nullptr}
#define AR_VEC4(nm, fn, T, scal) \
  {nm, fn, 2, scal, KernelConstant::F, int(sizeof(T)), 4, items_per_vec(sizeof(T), 4), nullptr}
#define AR_SCAL(nm, fn, T, K) {nm, fn, 2, true, KernelConstant::F, int(sizeof(T)), K, uint64_t(Vec<T>::lanes), nullptr}
#if !AR_FP16
constexpr const char* kNoFp16 =
    "FP16 arithmetic: this CPU (as compiled) has no native FP16 FMA (needs AVX512-FP16 on x86-64 "
    "or the ARMv8.2-A FP16 extension on arm64)";
#define AR_NOFP16(nm, buf, scal, K) {nm, nullptr, buf, scal, KernelConstant::F, 2, K, 1, kNoFp16}
#endif

const KernelEntry kKernels[] = {
    AR_STREAM("stream_copy_f32", stream_copy),
    AR_STREAM("stream_scale_f32", stream_scale),
    AR_STREAM("stream_add_f32", stream_add),
    AR_STREAM("stream_triad_f32", stream_triad),
    {"dispatch_null", dispatch_null, 0, false, KernelConstant::none, 4, 0, 1, nullptr},
    {"dispatch_tiny", dispatch_tiny, 1, false, KernelConstant::none, 4, 4, 16 / 4, nullptr},
    AR_VEC4("vec4_cross4_f32", vec4_cross4<float>, float, false),
    AR_VEC4("vec4_indep4_f32", (vec4_indep<float, 4>), float, true),
    AR_VEC4("vec4_indep8_f32", (vec4_indep<float, 8>), float, true),
    AR_SCAL("scalar_indep4_f32", (scalar_indep<float, 4>), float, 4),
    AR_SCAL("scalar_indep8_f32", (scalar_indep<float, 8>), float, 8),
    AR_SCAL("scalar_indep16_f32", (scalar_indep<float, 16>), float, 16),
    AR_SCAL("scalar_indep8_f64", (scalar_indep<double, 8>), double, 8),
#if AR_FP16
    AR_VEC4("vec4_cross4_f16", vec4_cross4<half_t>, half_t, false),
    AR_VEC4("vec4_indep4_f16", (vec4_indep<half_t, 4>), half_t, true),
    AR_VEC4("vec4_indep8_f16", (vec4_indep<half_t, 8>), half_t, true),
    AR_SCAL("scalar_indep8_f16", (scalar_indep<half_t, 8>), half_t, 8),
    AR_SCAL("scalar_indep16_f16", (scalar_indep<half_t, 16>), half_t, 16),
    AR_SCAL("scalar_indep32_f16", (scalar_indep<half_t, 32>), half_t, 32),
#else
    AR_NOFP16("vec4_cross4_f16", 2, false, 4),
    AR_NOFP16("vec4_indep4_f16", 2, true, 4),
    AR_NOFP16("vec4_indep8_f16", 2, true, 4),
    AR_NOFP16("scalar_indep8_f16", 2, true, 8),
    AR_NOFP16("scalar_indep16_f16", 2, true, 16),
    AR_NOFP16("scalar_indep32_f16", 2, true, 32),
#endif
};

}  // namespace

const KernelEntry* kernel_table(size_t* count) {
  *count = sizeof(kKernels) / sizeof(kKernels[0]);
  return kKernels;
}

const char* compiled_isa() { return AR_ISA; }
int compiled_vector_bits() { return kVecBytes * 8; }
bool compiled_fma() {
#if defined(__FMA__) || defined(__aarch64__)
  return true;
#else
  return false;
#endif
}
bool compiled_fp16_arithmetic() { return AR_FP16 != 0; }

const char* isa_mismatch() {
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
  // Every extension -march=native may have used in these kernels (or their loops' vectorised code).
  __builtin_cpu_init();
#define AR_NEED(macro_defined, feature)                  \
  if (macro_defined && !__builtin_cpu_supports(feature)) \
    return "the kernels were compiled for " feature " but this CPU lacks it";
#if defined(__AVX512F__)
  AR_NEED(1, "avx512f")
#endif
#if defined(__AVX512BW__)
  AR_NEED(1, "avx512bw")
#endif
#if defined(__AVX512VL__)
  AR_NEED(1, "avx512vl")
#endif
#if defined(__AVX512DQ__)
  AR_NEED(1, "avx512dq")
#endif
#if defined(__AVX512FP16__)
  AR_NEED(1, "avx512fp16")
#endif
#if defined(__AVX2__)
  AR_NEED(1, "avx2")
#endif
#if defined(__FMA__)
  AR_NEED(1, "fma")
#endif
#if defined(__F16C__)
  AR_NEED(1, "f16c")
#endif
#undef AR_NEED
#endif
  return nullptr;
}

}  // namespace ar::cpu
