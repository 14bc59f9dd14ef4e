#include "blas.h"

#include <cstring>

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

#if defined(__APPLE__)
namespace {
// bnns_constants.h: for BNNSDataLayoutRowMajorMatrix "size[0] is the number of columns, size[1] is
// the number of rows" and value (row, col) is at col * stride[0] + row * stride[1].
BNNSNDArrayDescriptor fp16_matrix(const void* data, int rows, int cols) {
  BNNSNDArrayDescriptor d;
  std::memset(&d, 0, sizeof d);
  d.layout = BNNSDataLayoutRowMajorMatrix;
  d.size[0] = size_t(cols);
  d.size[1] = size_t(rows);
  d.stride[0] = 1;
  d.stride[1] = size_t(cols);
  d.data = const_cast<void*>(data);
  d.data_type = BNNSDataTypeFloat16;
  return d;
}
}  // namespace
#endif

long long blas_hgemm_workspace(int m, int n, int k) {
#if defined(__APPLE__)
  // BNNSMatMulWorkspaceSize is the feature probe: negative for unsupported parameters (bnns.h).
  const BNNSNDArrayDescriptor a = fp16_matrix(nullptr, m, k), b = fp16_matrix(nullptr, k, n),
                              c = fp16_matrix(nullptr, m, n);
  const ssize_t ws = BNNSMatMulWorkspaceSize(false, false, 1.0f, &a, &b, &c, nullptr);
  return ws < 0 ? -1 : (long long)ws;
#else
  (void)m, (void)n, (void)k;
  return -1;
#endif
}

bool blas_hgemm(int m, int n, int k, const void* a, const void* b, void* c, void* workspace) {
#if defined(__APPLE__)
  const BNNSNDArrayDescriptor da = fp16_matrix(a, m, k), db = fp16_matrix(b, k, n), dc = fp16_matrix(c, m, n);
  // BNNSMatMul is deprecated from macOS 15 ("Use BNNSGraph* APIs") but still exported, and the only
  // Accelerate GEMM taking FP16 (BNNS/bnns.h: macos(13.0); cblas_new.h has no FP16 GEMM;
  // docs/design/backends.md, "The Metal backend"); the deployment target is 13.0.
  return BNNSMatMul(false, false, 1.0f, &da, &db, &dc, workspace, nullptr) == 0;
#else
  (void)m, (void)n, (void)k, (void)a, (void)b, (void)c, (void)workspace;
  return false;
#endif
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
