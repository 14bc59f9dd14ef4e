// A plain tiled SGEMM (the gemm suite: docs/design/measurement.md, "Counting FLOPs and bytes"): the M5
// article's "16×16 tiled shared memory, a standard textbook implementation", the twin of
// shaders/metal/gemm.metal (same name, arguments and operations), for comparison with the vendor
// library. C = A·B for square N×N row-major fp32 matrices, fp32 accumulation.
//
// Compiled at run time with NVRTC (-DBLOCK=threads per block, which must be 256). Arguments, as the
// backend passes them (core/backend.h): A, B, C (device pointers), N (long long), then the launch
// count n = N·N (unsigned long long).
//
// Launch: one thread per element of C, ceil(n / 256) blocks of 256 threads. Block g computes the
// 16×16 tile of C at tile row g / (N/16), tile column g % (N/16); thread t of it the element
// (ty, tx) = (t / 16, t % 16) of that tile. N must be a multiple of 16, so N·N is a whole number of
// blocks and every thread is valid; the `valid` flag only skips the loads and the store, never the
// barriers. 2·N³ FLOPs, 3·N²·4 bytes of compulsory traffic.

#include "clock.cuh"  // the effective-clock probe every timed kernel runs (docs/design/clocks.md, "Clocks")

#ifndef BLOCK
#error "compile with -DBLOCK=256"
#endif
#if BLOCK != 256
#error "gemm_tiled16_f32 needs BLOCK=256: one 16x16 tile of C per block"
#endif

extern "C" __global__ void __launch_bounds__(BLOCK)
    gemm_tiled16_f32(const float* A, const float* B, float* C, long long N, unsigned long long n) {
  AR_CLOCK_PROBE_HERE();
  __shared__ float As[16][16];
  __shared__ float Bs[16][16];
  const unsigned int g = blockIdx.x, t = threadIdx.x;
  const long long tiles = N / 16;
  const unsigned int ty = t / 16, tx = t % 16;
  const long long row = ((long long)g / tiles) * 16 + (long long)ty;
  const long long col = ((long long)g % tiles) * 16 + (long long)tx;
  const bool valid = (unsigned long long)g * 256 + (unsigned long long)t < n;
  float acc = 0.0f;
  for (long long k0 = 0; k0 < N; k0 += 16) {
    As[ty][tx] = valid ? A[row * N + k0 + (long long)tx] : 0.0f;
    Bs[ty][tx] = valid ? B[(k0 + (long long)ty) * N + col] : 0.0f;
    __syncthreads();
#pragma unroll
    for (int kk = 0; kk < 16; ++kk) acc = fmaf(As[ty][kk], Bs[kk][tx], acc);
    __syncthreads();
  }
  if (valid) C[row * N + col] = acc;
}
