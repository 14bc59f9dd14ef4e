// Built only when the toolkit ships nvrtc.h and cublas_v2.h (see native/CMakeLists.txt): proves that
// the fallback declarations used on header-less toolkits match the real API. Enum values are
// compared with static_assert; each fallback function is redeclared after the real header, which
// the compiler rejects ("conflicting declaration of C function") if a signature differs.
#include <cublas_v2.h>
#include <nvrtc.h>

#include "loader.h"

namespace fb {
#define AR_FALLBACK_TYPES_ONLY
#include "cublas_fallback.h"
#include "nvrtc_fallback.h"
#undef AR_FALLBACK_TYPES_ONLY
}  // namespace fb

#define AR_SAME(x) static_assert(int(fb::x) == int(::x), #x " differs from the real header")
AR_SAME(NVRTC_SUCCESS);
AR_SAME(NVRTC_ERROR_COMPILATION);
AR_SAME(CUBLAS_STATUS_SUCCESS);
AR_SAME(CUBLAS_STATUS_NOT_SUPPORTED);
AR_SAME(CUBLAS_OP_N);
AR_SAME(CUBLAS_OP_T);
AR_SAME(CUBLAS_DEFAULT_MATH);
AR_SAME(CUBLAS_PEDANTIC_MATH);
AR_SAME(CUBLAS_TF32_TENSOR_OP_MATH);
AR_SAME(CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION);
AR_SAME(CUBLAS_COMPUTE_32F);
AR_SAME(CUBLAS_COMPUTE_32F_PEDANTIC);
AR_SAME(CUBLAS_COMPUTE_64F);
AR_SAME(CUBLAS_COMPUTE_32I);
AR_SAME(CUBLAS_COMPUTE_32F_FAST_TF32);
AR_SAME(CUBLAS_GEMM_DEFAULT);
#undef AR_SAME
static_assert(sizeof(fb::nvrtcResult) == sizeof(::nvrtcResult), "nvrtcResult size");
static_assert(sizeof(fb::cublasStatus_t) == sizeof(::cublasStatus_t), "cublasStatus_t size");
static_assert(sizeof(fb::cublasComputeType_t) == sizeof(::cublasComputeType_t), "cublasComputeType_t size");
static_assert(sizeof(fb::cublasGemmAlgo_t) == sizeof(::cublasGemmAlgo_t), "cublasGemmAlgo_t size");

#define AR_FALLBACK_FUNCTIONS_ONLY
#include "cublas_fallback.h"
#include "nvrtc_fallback.h"

// The overload loader.h spells out is the one the real header declares.
static_assert(sizeof(static_cast<ar::cuda::CublasGemmExFn>(&::cublasGemmEx)) > 0, "cublasGemmEx overload");
