// The part of NVRTC's API (nvrtc.h) this backend uses, declared here for toolkits that ship nvcc
// but not the NVRTC headers (the PyPI "nvidia-cuda-nvcc" layout, as on the CI machine). NVRTC
// itself is loaded at run time (loader.cpp), so nothing links against it. When the real nvrtc.h is
// present, vendor.h includes that instead, and api_check.cpp (built only then) checks that these
// declarations match it: enum values by static_assert, function signatures by redeclaration.
//
// No include guard on purpose: api_check.cpp includes the types and the functions separately
// (AR_FALLBACK_TYPES_ONLY / AR_FALLBACK_FUNCTIONS_ONLY); vendor.h includes it once.
#include <cstddef>

#ifndef AR_FALLBACK_FUNCTIONS_ONLY
// nvrtc.h: "typedef enum { NVRTC_SUCCESS = 0, ... NVRTC_ERROR_COMPILATION = 6, ... } nvrtcResult;"
typedef enum { NVRTC_SUCCESS = 0, NVRTC_ERROR_COMPILATION = 6 } nvrtcResult;
typedef struct _nvrtcProgram* nvrtcProgram;
#endif

#ifndef AR_FALLBACK_TYPES_ONLY
extern "C" {
const char* nvrtcGetErrorString(nvrtcResult result);
nvrtcResult nvrtcVersion(int* major, int* minor);
nvrtcResult nvrtcGetNumSupportedArchs(int* numArchs);
nvrtcResult nvrtcGetSupportedArchs(int* supportedArchs);
nvrtcResult nvrtcCreateProgram(nvrtcProgram* prog, const char* src, const char* name, int numHeaders,
                               const char* const* headers, const char* const* includeNames);
nvrtcResult nvrtcDestroyProgram(nvrtcProgram* prog);
nvrtcResult nvrtcCompileProgram(nvrtcProgram prog, int numOptions, const char* const* options);
nvrtcResult nvrtcGetCUBINSize(nvrtcProgram prog, size_t* cubinSizeRet);
nvrtcResult nvrtcGetCUBIN(nvrtcProgram prog, char* cubin);
nvrtcResult nvrtcGetPTXSize(nvrtcProgram prog, size_t* ptxSizeRet);
nvrtcResult nvrtcGetPTX(nvrtcProgram prog, char* ptx);
nvrtcResult nvrtcGetProgramLogSize(nvrtcProgram prog, size_t* logSizeRet);
nvrtcResult nvrtcGetProgramLog(nvrtcProgram prog, char* log);
}
#endif
