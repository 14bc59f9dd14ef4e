// Vendor API declarations for the CUDA backend: the driver API (cuda.h, always part of the toolkit),
// NVRTC and cuBLAS (their own headers when the toolkit has them, else the checked fallbacks beside
// this file). Only files in native/cuda/ include this: vendor types never leave this folder.
#pragma once

#include <cuda.h>

#if __has_include(<nvrtc.h>)
#include <nvrtc.h>
#define AR_NVRTC_HEADER "nvrtc.h"
#else
#include "nvrtc_fallback.h"
#define AR_NVRTC_HEADER "native/cuda/nvrtc_fallback.h"
#endif

#if __has_include(<cublas_v2.h>)
#include <cublas_v2.h>
#define AR_CUBLAS_HEADER "cublas_v2.h"
#else
#include "cublas_fallback.h"
#define AR_CUBLAS_HEADER "native/cuda/cublas_fallback.h"
#endif
