#include "blas.h"

#if defined(__APPLE__)
#ifndef ACCELERATE_NEW_LAPACK
#define ACCELERATE_NEW_LAPACK
#endif
#include <Accelerate/Accelerate.h>
#define AR_CBLAS(fn) cblas_##fn
#else
// scipy-openblas32: 32-bit integers, every symbol prefixed `scipy_` (its cblas.h declares them so).
#include <cblas.h>
#define AR_CBLAS(fn) scipy_cblas_##fn
extern "C" char* scipy_openblas_get_config(void);
#endif

namespace ar::cpu {

// Accelerate's new CBLAS interface (ACCELERATE_NEW_LAPACK) is marked API_AVAILABLE(macos(13.3)) in
// vecLib.framework/Headers/cblas_new.h, so every call is availability-guarded; callers check
// blas_unavailable() first and never reach the fallback branch.
#if defined(__APPLE__)
#define AR_IF_BLAS_AVAILABLE if (__builtin_available(macOS 13.3, *))
#else
#define AR_IF_BLAS_AVAILABLE if (true)
#endif

const char* blas_unavailable() {
  AR_IF_BLAS_AVAILABLE return nullptr;
  return "Accelerate's CBLAS (ACCELERATE_NEW_LAPACK) needs macOS 13.3 or newer";
}

void blas_sgemm(int m, int n, int k, const float* a, const float* b, float* c) {
  AR_IF_BLAS_AVAILABLE {
    AR_CBLAS(sgemm)(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, n, k, 1.0f, a, k, b, n, 0.0f, c, n);
  }
}

void blas_dgemm(int m, int n, int k, const double* a, const double* b, double* c) {
  AR_IF_BLAS_AVAILABLE {
    AR_CBLAS(dgemm)(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, n, k, 1.0, a, k, b, n, 0.0, c, n);
  }
}

void blas_set_threads(int threads) {
#if defined(__APPLE__)
  (void)threads;  // Accelerate manages its own threads (and the AMX units)
#else
  scipy_openblas_set_num_threads(threads);
#endif
}

std::string blas_name() {
#if defined(__APPLE__)
  return "Accelerate (cblas)";
#else
  const char* cfg = scipy_openblas_get_config();
  return std::string("OpenBLAS from scipy-openblas32") + (cfg ? std::string(" (") + cfg + ")" : std::string());
#endif
}

}  // namespace ar::cpu
