// Run-time loading of the CUDA driver, NVRTC and cuBLAS (dlopen), so the extension imports, and the
// `cuda` backend reports "no device" with a reason, on machines without a GPU driver; and so a toolkit
// without NVRTC or cuBLAS libraries can still build it. Every vendor status is turned into an
// exception naming the call (check_* below).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "vendor.h"

namespace ar::cuda {

// The driver API functions this backend uses. Members are declared with the header's macros, so
// `cuMemAlloc` is the `cuMemAlloc_v2` the header maps it to, and the symbol looked up is the same.
// The X-macro lists of the three structs are laid out by hand, between clang-format off and on:
// clang-format reads each line of X(name) X(name) as a chain of declarations and indents every next
// line further than the last.
struct DriverApi {
  // clang-format off
#define AR_CU_FUNCTIONS(X)                                                                           \
  X(cuInit) X(cuDriverGetVersion) X(cuGetErrorName) X(cuGetErrorString) X(cuDeviceGetCount)          \
  X(cuDeviceGet) X(cuDeviceGetName) X(cuDeviceGetAttribute) X(cuDeviceTotalMem)                      \
  X(cuDeviceGetPCIBusId) X(cuDevicePrimaryCtxRetain) X(cuDevicePrimaryCtxRelease) X(cuCtxSetCurrent) \
  X(cuStreamCreate) X(cuStreamDestroy) X(cuStreamQuery) X(cuMemAlloc) X(cuMemFree) X(cuMemGetInfo)   \
  X(cuMemHostAlloc) X(cuMemFreeHost) X(cuMemHostGetDevicePointer) X(cuMemsetD8Async)                 \
  X(cuMemcpyHtoDAsync) X(cuMemcpyDtoHAsync) X(cuModuleLoadData) X(cuModuleUnload)                    \
  X(cuModuleGetFunction) X(cuModuleGetGlobal) X(cuMemsetD32Async) X(cuFuncGetAttribute)              \
  X(cuOccupancyMaxActiveBlocksPerMultiprocessor) X(cuLaunchKernel) X(cuEventCreate)                  \
  X(cuEventDestroy) X(cuEventRecord) X(cuEventElapsedTime)
  // clang-format on
#define AR_MEMBER(f) decltype(&::f) f = nullptr;
  AR_CU_FUNCTIONS(AR_MEMBER)
#undef AR_MEMBER
};

struct NvrtcApi {
  // clang-format off
#define AR_NVRTC_FUNCTIONS(X)                                                                        \
  X(nvrtcGetErrorString) X(nvrtcVersion) X(nvrtcGetNumSupportedArchs) X(nvrtcGetSupportedArchs)      \
  X(nvrtcCreateProgram) X(nvrtcDestroyProgram) X(nvrtcCompileProgram) X(nvrtcGetCUBINSize)           \
  X(nvrtcGetCUBIN) X(nvrtcGetPTXSize) X(nvrtcGetPTX) X(nvrtcGetProgramLogSize) X(nvrtcGetProgramLog)
  // clang-format on
#define AR_MEMBER(f) decltype(&::f) f = nullptr;
  AR_NVRTC_FUNCTIONS(AR_MEMBER)
#undef AR_MEMBER
};

// cublasGemmEx with a cublasComputeType_t: cublas_api.h also declares a C++ overload taking the
// pre-CUDA-11 cudaDataType compute type, so its type is spelled out rather than taken by decltype.
using CublasGemmExFn = cublasStatus_t (*)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int,
                                          const void*, const void*, cudaDataType, int, const void*, cudaDataType, int,
                                          const void*, void*, cudaDataType, int, cublasComputeType_t, cublasGemmAlgo_t);

struct CublasApi {
  // clang-format off
#define AR_CUBLAS_FUNCTIONS(X)                                                                  \
  X(cublasCreate_v2) X(cublasDestroy_v2) X(cublasSetStream_v2) X(cublasSetMathMode)             \
  X(cublasSetWorkspace_v2) X(cublasGetProperty) X(cublasGetStatusName) X(cublasGetStatusString)
  // clang-format on
#define AR_MEMBER(f) decltype(&::f) f = nullptr;
  AR_CUBLAS_FUNCTIONS(AR_MEMBER)
#undef AR_MEMBER
  CublasGemmExFn cublasGemmEx = nullptr;
};

// Each returns the loaded table, or nullptr with *why set (library not found, or a symbol missing).
// Loading happens once per process; later calls return the same result. Thread-safe.
const DriverApi* driver_api(std::string* why);
const NvrtcApi* nvrtc_api(std::string* why);
const CublasApi* cublas_api(std::string* why);

// The same, throwing BackendError("[cuda] <library> not available: <why>") instead.
const DriverApi& driver();
const NvrtcApi& nvrtc();
const CublasApi& cublas();

// The file each library was loaded from ("" when not loaded).
std::string loaded_path(const char* library);  // "driver", "nvrtc" or "cublas"

// Throw DeviceError("[cuda::<call>] CUDA_ERROR_X: message") / CompileError / BackendError on failure.
// For a status kept in a variable and looked at first; a call checked where it is made uses CU_CHECK.
void check(CUresult r, const char* call);
void check_nvrtc(nvrtcResult r, const char* call);
void check_cublas(cublasStatus_t r, const char* call);
std::string cu_error(CUresult r);  // "CUDA_ERROR_X: message"

// Where a checked call was made: its expression as written, the source file and the line.
struct CallSite {
  const char* expr;
  const char* file;
  int line;
};

// The API function an expression calls: the first name followed by '(' that is "cu", "cublas" or
// "nvrtc" and then a capital, less a "_v2" suffix: "driver().cuMemsetD8Async(p, 0, n, s)" ->
// "cuMemsetD8Async", "cublas().cublasCreate_v2(&h)" -> "cublasCreate"; the whole expression when none.
constexpr std::string_view api_call(std::string_view expr) {
  auto ident = [](char c) {
    return c == '_' || (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
  };
  for (size_t i = 0; i < expr.size();) {
    if (!ident(expr[i])) {
      ++i;
      continue;
    }
    size_t end = i;
    while (end < expr.size() && ident(expr[end])) ++end;
    std::string_view name = expr.substr(i, end - i);
    auto upper_after = [&](std::string_view prefix) {
      return name.size() > prefix.size() && name.substr(0, prefix.size()) == prefix && name[prefix.size()] >= 'A' &&
             name[prefix.size()] <= 'Z';
    };
    bool api = upper_after("cu") || upper_after("cublas") || upper_after("nvrtc");
    if (api && end < expr.size() && expr[end] == '(') {
      constexpr std::string_view v2 = "_v2";
      bool versioned = name.size() > v2.size() && name.substr(name.size() - v2.size()) == v2;
      return versioned ? name.substr(0, name.size() - v2.size()) : name;
    }
    i = end;
  }
  return expr;
}

// The same checks, the message also naming the expression and where it is:
// "[cuda::cuMemsetD8Async] CUDA_ERROR_X: message (driver().cuMemsetD8Async(...) at clock_probe.cpp:74)".
void check(CUresult r, const CallSite& site);
void check_nvrtc(nvrtcResult r, const CallSite& site);
void check_cublas(cublasStatus_t r, const CallSite& site);

}  // namespace ar::cuda

// A vendor call's status checked where it is made, after BabelStream's CU(EXPR): the failing
// expression and its line go into the exception's message (ar::cuda::check's CallSite overloads).
#define CU_CHECK(expr) ::ar::cuda::check((expr), ::ar::cuda::CallSite{#expr, __FILE__, __LINE__})
#define NVRTC_CHECK(expr) ::ar::cuda::check_nvrtc((expr), ::ar::cuda::CallSite{#expr, __FILE__, __LINE__})
#define CUBLAS_CHECK(expr) ::ar::cuda::check_cublas((expr), ::ar::cuda::CallSite{#expr, __FILE__, __LINE__})

namespace ar::cuda {}  // namespace ar::cuda
