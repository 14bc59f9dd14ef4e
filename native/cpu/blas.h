// The host BLAS behind the CPU `gemm` suite: Accelerate on macOS, OpenBLAS from the
// scipy-openblas32 wheel elsewhere (its symbols carry a `scipy_` prefix). BLAS types stay in
// blas.cpp; this header is plain C++.
#pragma once

#include <string>

namespace ar::cpu {

// Row-major C[m×n] = A[m×k] · B[k×n], alpha = 1, beta = 0.
void blas_sgemm(int m, int n, int k, const float* a, const float* b, float* c);
void blas_dgemm(int m, int n, int k, const double* a, const double* b, double* c);
// Row-major fp16 C[m×n] = A[m×k] · B[k×n] through BNNSMatMul (macOS 13+; the M5 article's AMX FP16
// path), on IEEE binary16 bit patterns. blas_hgemm_workspace returns the scratch bytes it needs, or
// -1 where there is no FP16 GEMM (not macOS, or BNNS rejects the shape); blas_hgemm returns false
// when BNNS reports failure.
long long blas_hgemm_workspace(int m, int n, int k);
bool blas_hgemm(int m, int n, int k, const void* a, const void* b, void* c, void* workspace);
void blas_set_threads(int threads);
// nullptr when the BLAS can run here; else why not (Accelerate's new CBLAS needs macOS 13.3).
const char* blas_unavailable();
std::string blas_name();

}  // namespace ar::cpu
